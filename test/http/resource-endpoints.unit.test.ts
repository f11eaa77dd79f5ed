// resourceEndpoints: the list and the read are GETs, whose queries get the read's
// statements (Reads); create, update and delete get the request's transaction, and the
// update's lock is taken in it. The compiler holds the list's and the read's queries to
// Reads (see queriesAsTyped).
import assert from "node:assert/strict";
import { z } from "zod";
import { type CountMode, type Page, pageOnly } from "../../src/db/pagination.ts";
import type { Reads } from "../../src/db/reads.ts";
import { resourceEndpoints } from "../../src/http/resource-endpoints.ts";
import type { RequestScope } from "../../src/http/request-scope.ts";
import { recordingScope, type Way, wayOf } from "../support/recording-scope.ts";

const thing = z.object({ id: z.string() });
const resource = {
  tag: "Things", collection: "things", schema: thing,
  name: { one: "Thing", many: "Things" }, noun: { one: "thing", many: "things" },
};

// Never called: what the compiler lets each query do.
// deno-lint-ignore no-unused-vars
function queriesAsTyped(scope: RequestScope) {
  const things = resourceEndpoints(scope, resource);
  return [
    things.list({ access: "member", summary: "List.", query: z.object({}) }, async (db) => {
      // @ts-expect-error a list reads: no deleteFrom
      db.deleteFrom("properties");
      const data = await db.selectFrom("properties").select("id").execute();
      return { data, pagination: { limit: 1, offset: 0, total: 0, hasMore: false }, counted: "exact" };
    }),
    things.get({ access: "member", summary: "Read." }, (db, id) => {
      // @ts-expect-error a read reads: no updateTable
      db.updateTable("properties");
      return db.selectFrom("properties").select("id").where("id", "=", id).executeTakeFirst();
    }),
    things.update({ access: "member", summary: "Update.", body: thing }, {
      lock: (db, id) => db.selectFrom("properties").select("id").where("id", "=", id).forUpdate().executeTakeFirst(),
      update: (db, id) => db.updateTable("properties").set({ name: "n" }).where("id", "=", id).executeTakeFirst(),
    }),
  ];
}

function request(method: string, body?: unknown, headers: Record<string, string> = {}): Request {
  return new Request("http://function/api/v1/things/00000000-0000-4000-8000-000000000001", {
    method,
    headers: {
      authorization: "Bearer token",
      "x-tenant-id": crypto.randomUUID(),
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

Deno.test("the list and the read run in scope.read with Reads; create, update and delete in scope.run with the transaction", async () => {
  const id = "00000000-0000-4000-8000-000000000001";
  const seen: Record<string, Way[]> = {};
  const saw = (operation: string, db: Reads) => (seen[operation] ??= []).push(wayOf(db));
  const scope = recordingScope();
  const things = resourceEndpoints(scope, resource);
  const endpoints = {
    list: things.list({ access: "member", summary: "List.", query: z.object({}) }, (db) => {
      saw("list", db);
      return Promise.resolve({ data: [], pagination: { limit: 20, offset: 0, total: 0, hasMore: false }, counted: "exact" });
    }),
    get: things.get({ access: "member", summary: "Read." }, (db) => {
      saw("get", db);
      return Promise.resolve({ id });
    }),
    create: things.create({ access: "member", summary: "Create.", body: z.object({}) }, (db) => {
      saw("create", db);
      return Promise.resolve({ id });
    }),
    update: things.update({ access: "member", summary: "Update.", body: z.object({}) }, {
      lock: (db) => {
        saw("lock", db);
        return Promise.resolve({ id });
      },
      update: (db) => {
        saw("update", db);
        return Promise.resolve({ id });
      },
    }),
    remove: things.remove({ access: "member", summary: "Delete." }, (db) => {
      saw("remove", db);
      return Promise.resolve({ numDeletedRows: 1n });
    }),
  };
  const params = { id };
  assert.equal((await endpoints.list.handle(request("GET"), {})).status, 200);
  assert.equal((await endpoints.get.handle(request("GET"), params)).status, 200);
  const created = await endpoints.create.handle(request("POST", {}), {});
  assert.equal(created.status, 201);
  assert.deepEqual(await created.json(), { id }, "a create answers the new resource's id by default");
  assert.ok(created.headers.get("location")?.endsWith(`things/${id}`), `Location: ${created.headers.get("location")}`);
  assert.equal((await endpoints.update.handle(request("PATCH", {}), params)).status, 204);
  assert.equal((await endpoints.remove.handle(request("DELETE"), params)).status, 204);
  assert.deepEqual(seen, {
    list: ["read"], get: ["read"], create: ["run"], update: ["run"], remove: ["run"],
  }, "without If-Match the update takes no lock");
  assert.deepEqual(scope.calls.map(({ way }) => way), ["read", "read", "run", "run", "run"]);

  // If-Match is compared with the row read under lock; this one matches nothing (412).
  const conditional = request("PATCH", {});
  conditional.headers.set("if-match", '"stale"');
  await assert.rejects(async () => await endpoints.update.handle(conditional, params), (error: { status?: number }) => error.status === 412);
  assert.deepEqual(seen.lock, ["run"], "the lock is taken in the write's transaction");
});

Deno.test("the list gets its page with the count the request prefers and the tenant to estimate in; Preference-Applied names the count it honoured", async () => {
  const pages: Page[] = [];
  const things = resourceEndpoints(recordingScope(), resource);
  const list = things.list({ access: "member", summary: "List.", query: pageOnly }, (_db, _filter, page) => {
    pages.push(page);
    // This list counts exactly whatever it is asked, as the tenant lists do for planned.
    const counted: CountMode = page.count === "none" ? "none" : "exact";
    return Promise.resolve({ data: [], pagination: { limit: page.limit, offset: page.offset, total: 0, hasMore: false }, counted });
  });
  const asked = async (prefer?: string) => {
    const sent = request("GET", undefined, prefer === undefined ? {} : { prefer });
    const response = await list.handle(new Request(`${sent.url}?limit=5&offset=10`, sent), {});
    assert.equal(response.status, 200);
    const page = pages.at(-1)!;
    assert.deepEqual(page.scope, { reader: "member", tenantId: sent.headers.get("x-tenant-id") }, "the tenant the request names");
    assert.deepEqual([page.limit, page.offset], [5, 10]);
    return { count: page.count, applied: response.headers.get("preference-applied") };
  };
  assert.deepEqual(await asked(), { count: undefined, applied: null }, "no preference: exact, unannounced");
  assert.deepEqual(await asked("count=exact"), { count: "exact", applied: "count=exact" });
  assert.deepEqual(await asked("return=representation, count=none"), { count: "none", applied: "count=none" });
  assert.deepEqual(await asked("count=planned"), { count: "planned", applied: null }, "counted otherwise: not announced");
  assert.deepEqual(await asked("count=some"), { count: undefined, applied: null }, "an unknown count is ignored");
});
