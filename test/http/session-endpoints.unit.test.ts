// sessionEndpoint and tenantEndpoint: a route's method decides how its handler meets the
// database. A GET, a tenant's or a session route's, runs in scope.read, statement by
// statement, and its handler gets Reads; any other method runs in scope.run and gets the
// transaction. The compiler holds every GET handler to Reads (see handlersAsTyped).
import assert from "node:assert/strict";
import { json } from "../../src/http/json.ts";
import type { Method } from "../../src/http/endpoint.ts";
import { sessionEndpoint, tenantEndpoint } from "../../src/http/session-endpoints.ts";
import type { RequestScope } from "../../src/http/request-scope.ts";
import { recordingScope, wayOf } from "../support/recording-scope.ts";

const doc = { path: "/v1/things", operationId: "things", tag: "Things", summary: "Things.", success: [] };

// Never called: what the compiler lets each handler do.
// deno-lint-ignore no-unused-vars
function handlersAsTyped(scope: RequestScope) {
  return [
    tenantEndpoint(scope, { ...doc, method: "GET", access: "member" }, async ({ db }) => {
      await db.selectFrom("properties").select("id").execute();
      // @ts-expect-error a GET's handler reads: no insertInto
      db.insertInto("properties");
      // @ts-expect-error no updateTable
      db.updateTable("properties");
      // @ts-expect-error no deleteFrom
      db.deleteFrom("properties");
      // @ts-expect-error and no transaction to pass on to a query that writes
      db.transaction();
      return json(200, {});
    }),
    tenantEndpoint(scope, { ...doc, method: "POST", access: "member" }, async ({ db }) => {
      await db.insertInto("properties").values({ name: "n", timezone: "UTC", currency: "EUR" }).execute();
      await db.updateTable("properties").set({ name: "m" }).execute();
      await db.deleteFrom("properties").execute();
      return json(200, {});
    }),
    sessionEndpoint(scope, { ...doc, method: "GET" }, async ({ db }) => {
      await db.selectFrom("tenants").select("id").execute();
      // @ts-expect-error a session route's GET reads too
      db.insertInto("tenants");
      return json(200, {});
    }),
  ];
}

function request(method: Method, tenantId?: string): Request {
  const headers: Record<string, string> = { authorization: "Bearer token" };
  if (tenantId) headers["x-tenant-id"] = tenantId;
  return new Request("http://function/api/v1/things", { method, headers });
}

Deno.test("a tenant GET runs in scope.read and its handler gets the read's statements; other methods run in scope.run", async () => {
  const tenantId = crypto.randomUUID();
  for (const method of ["GET", "POST", "PATCH", "PUT", "DELETE"] as const) {
    const scope = recordingScope();
    const endpoint = tenantEndpoint(scope, { ...doc, method, access: "member" }, ({ db }) => Promise.resolve(json(200, { way: wayOf(db) })));
    const response = await endpoint.handle(request(method, tenantId), {});
    const way = method === "GET" ? "read" : "run";
    assert.deepEqual(await response.json(), { way }, method);
    assert.deepEqual(scope.calls, [{ way, tenantId }], method);
  }
});

Deno.test("a session route runs outside any tenant: a GET in scope.read, other methods in scope.run", async () => {
  for (const method of ["GET", "POST", "PATCH", "DELETE"] as const) {
    const scope = recordingScope();
    const endpoint = sessionEndpoint(scope, { ...doc, method }, ({ db }) => Promise.resolve(json(200, { way: wayOf(db) })));
    const response = await endpoint.handle(request(method), {});
    const way = method === "GET" ? "read" : "run";
    assert.deepEqual(await response.json(), { way }, method);
    assert.deepEqual(scope.calls, [{ way, tenantId: null }], method);
  }
});
