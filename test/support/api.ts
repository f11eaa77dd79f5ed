// A small client for the API through the gateway, and the fixtures most API tests
// need: a tenant with its owner, and members added the way a manager adds them.
import assert from "node:assert/strict";
import type postgres from "postgres";
import type { components, paths } from "../../examples/front-desk/src/api-types.ts";
import { assertMatchesContract } from "./openapi.ts";
import { adminSql, createUser, endSession, type TestUser } from "./session.ts";
import { type Problem, stack } from "./stack.ts";

export type HeaderMap = Record<string, string>;

export type Client = {
  user: TestUser | null;
  tenantId: string | undefined;
  get(path: string, body?: unknown, headers?: HeaderMap): Promise<Response>;
  post(path: string, body?: unknown, headers?: HeaderMap): Promise<Response>;
  patch(path: string, body?: unknown, headers?: HeaderMap): Promise<Response>;
  delete(path: string, body?: unknown, headers?: HeaderMap): Promise<Response>;
};

export const representation = { prefer: "return=representation" } as const;

// An id no row has, and one that is not a UUID at all: both must answer like another
// tenant's id (404, the same body).
export const UNKNOWN_ID = "5b6c7d8e-1f2a-4b3c-8d4e-5f6a7b8c9d0e";
export const MALFORMED_ID = "not-a-uuid";

// The API's schemas as its OpenAPI document names them: the types of its bodies,
// generated once, into the front-desk example (examples/front-desk/src/api-types.ts, npm run
// api:types), never written by hand.
export type Schemas = components["schemas"];

// The JSON body `method path` answers with `status`, for bodies the document does not name.
export type BodyOf<
  Path extends keyof paths,
  Method extends "get" | "post" | "patch" | "delete",
  Status extends number,
> = paths[Path][Method] extends { responses: infer Responses }
  ? Status extends keyof Responses ? Responses[Status] extends { content: { "application/json": infer Body } } ? Body : never
  : never
  : never;

// What every list answers.
export type Page<T> = { data: T[]; pagination: Schemas["Pagination"] };

const STRONG_ETAG = /^"[A-Za-z0-9_-]+"$/;

// A unique suffix per call, since the database is shared across runs.
export function unique(label: string): string {
  return `${label} ${crypto.randomUUID().slice(0, 8)}`;
}

// The response is read in full and handed back as an in-memory Response, so a test
// that only checks the status (or reads a clone) leaves no open fetch body behind.
export async function call(
  method: string,
  path: string,
  options: { token?: string; tenantId?: string; body?: unknown; headers?: HeaderMap } = {},
): Promise<Response> {
  const headers: HeaderMap = {};
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  if (options.tenantId !== undefined) headers["x-tenant-id"] = options.tenantId;
  if (options.body !== undefined) headers["content-type"] = "application/json";
  Object.assign(headers, options.headers);
  const response = await fetch(`${stack.v1}${path}`, {
    method,
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const bytes = await response.arrayBuffer();
  return new Response(response.status === 204 || bytes.byteLength === 0 ? null : bytes, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}

// `user` null: no Authorization header at all.
export function client(user: TestUser | null, tenantId?: string): Client {
  const send = (method: string) => (path: string, body?: unknown, headers?: HeaderMap) =>
    call(method, path, { token: user?.token, tenantId, body, headers });
  return { user, tenantId, get: send("GET"), post: send("POST"), patch: send("PATCH"), delete: send("DELETE") };
}

// The response matches the served contract and has the expected status; its body.
export async function expectStatus<T = unknown>(
  method: string,
  pathTemplate: string,
  response: Response,
  status: number,
): Promise<T> {
  const body = await assertMatchesContract(method, pathTemplate, response);
  assert.equal(response.status, status, `${method} ${pathTemplate}: expected ${status}, got ${response.status}: ${JSON.stringify(body)}`);
  return body as T;
}

// The response is a documented problem with this status (and kind, urn:pms:problem:<kind>).
export async function expectProblem(
  method: string,
  pathTemplate: string,
  response: Response,
  status: number,
  kind?: string,
): Promise<Problem> {
  const problem = await expectStatus<Problem>(method, pathTemplate, response, status);
  assert.equal(problem.status, status);
  if (kind !== undefined) assert.equal(problem.type, `urn:pms:problem:${kind}`, problem.detail);
  return problem;
}

// A route called as a test calls it: the method, the contract's path template, the call.
export type RouteCall = [method: string, pathTemplate: string, send: (api: Client) => Promise<Response>];

// Every call is refused with 401 `unauthorized` without a token, and again with the
// member's token once their session has ended (the token itself not yet expired).
export async function expectSignedInOnly(calls: RouteCall[], tenantId: string, member: TestUser, memberClient: Client) {
  const anonymous = client(null, tenantId);
  for (const [method, template, send] of calls) {
    const problem = await expectProblem(method, template, await send(anonymous), 401, "unauthorized");
    assert.match(problem.detail, /Authorization/);
  }
  await endSession(member);
  for (const [method, template, send] of calls) {
    const problem = await expectProblem(method, template, await send(memberClient), 401, "unauthorized");
    assert.match(problem.detail, /session has ended/);
  }
}

// A write without Prefer: a change answers 204 with no body; a creation 201 with Location
// and the new resource's id (or, on the contract's routes documented empty, no body);
// both with the ETag that stands for the resource.
export async function expectMinimal(method: string, pathTemplate: string, response: Response, status: 201 | 204) {
  const body = await expectStatus<Record<string, string> | undefined>(method, pathTemplate, response, status);
  const etag = response.headers.get("etag");
  assert.match(etag ?? "", STRONG_ETAG, "a strong ETag");
  const location = response.headers.get("location");
  if (status === 204) {
    assert.equal(body, undefined);
    assert.equal(await response.clone().text(), "");
  } else {
    assert.ok(location, "a creation names the new resource in Location");
    if (body !== undefined) {
      const ids = Object.values(body);
      assert.equal(ids.length, 1, `the default body is the id alone: ${JSON.stringify(body)}`);
      assert.ok(location.endsWith(`/${ids[0]}`), `Location ${location} names ${ids[0]}`);
    }
  }
  return { etag: etag!, location };
}

// A problem of this status and kind one of whose errors names `field`.
async function expectFieldProblem(
  where: { method: string; pathTemplate: string; response: Response },
  status: 400 | 422,
  kind: string,
  field: string,
  label: string,
): Promise<Problem> {
  const problem = await expectProblem(where.method, where.pathTemplate, where.response, status, kind);
  assert.ok(problem.errors?.some((error) => error.path === field), `${label}: no error at ${field} in ${JSON.stringify(problem.errors)}`);
  return problem;
}

// A 400 validation problem one of whose errors names `field` ("(body)" for the body
// itself, "status.1" for a list's second item); `label` says which case it was.
export function expectInvalid(method: string, pathTemplate: string, response: Response, field: string, label = "") {
  return expectFieldProblem({ method, pathTemplate, response }, 400, "validation", field, label);
}

// A 422 unprocessable problem: the request matches the document and breaks a rule it
// states in words; one of its errors names `field`.
export function expectUnprocessable(method: string, pathTemplate: string, response: Response, field: string, label = "") {
  return expectFieldProblem({ method, pathTemplate, response }, 422, "unprocessable", field, label);
}

// The path under /v1 of a route template ("/v1/units/{id}") with its parameters filled in.
export function pathOf(pathTemplate: string, params: Record<string, string> = {}): string {
  return pathTemplate.replace(/^\/v1/, "").replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = params[name];
    assert.ok(value !== undefined, `${pathTemplate}: no value for {${name}}`);
    return value;
  });
}

// GET a list route: 200 and the page, checked against the contract.
export async function listPage<T>(
  api: Client,
  pathTemplate: string,
  query = "",
  params: Record<string, string> = {},
): Promise<Page<T>> {
  return await expectStatus<Page<T>>("GET", pathTemplate, await api.get(`${pathOf(pathTemplate, params)}${query}`), 200);
}

// GET one resource: 200, the resource (checked against the contract) and its strong ETag.
export async function readOne<T>(
  api: Client,
  pathTemplate: string,
  params: Record<string, string>,
): Promise<{ body: T; etag: string }> {
  const response = await api.get(pathOf(pathTemplate, params));
  const body = await expectStatus<T>("GET", pathTemplate, response, 200);
  const etag = response.headers.get("etag");
  assert.match(etag ?? "", STRONG_ETAG, `${pathTemplate}: a strong ETag`);
  return { body, etag: etag! };
}

// A list's paging. `order` is the key of every row the list holds (at most 20), in the
// list's order; `list` answers the list for a query string. The default page must hold
// them all with {limit: 20, offset: 0, total, hasMore: false}; then each of `queries` ("?limit=2&offset=1",
// the last page, a page past the end...) must hold order's slice at its limit and offset,
// the very rows the default page has at those places, and exactly its pagination.
// `queries` must reach a later page and go past the end. Returns the default page, for
// the caller's own checks.
export async function expectPaging<T>(
  list: (query: string) => Promise<Page<T>>,
  order: string[],
  queries: string[],
  key: (row: T) => string = (row) => (row as { id: string }).id,
): Promise<Page<T>> {
  const total = order.length;
  assert.ok(total <= 20, "expectPaging wants every row on the default page");
  const all = await list("");
  assert.deepEqual(all.data.map(key), order, "the default page");
  assert.deepEqual(all.pagination, { limit: 20, offset: 0, total, hasMore: false }, "the default page");
  let later = false;
  let past = false;
  for (const query of queries) {
    const params = new URLSearchParams(query.replace(/^\?/, ""));
    const limit = Number(params.get("limit") ?? 20);
    const offset = Number(params.get("offset") ?? 0);
    const page = await list(query);
    const slice = all.data.slice(offset, offset + limit);
    assert.deepEqual(page.data.map(key), order.slice(offset, offset + limit), query);
    assert.deepEqual(page.data, slice, `${query}: the rows the default page has at those places`);
    assert.deepEqual(page.pagination, { limit, offset, total, hasMore: offset + limit < total }, query);
    later ||= offset > 0 && offset < total;
    past ||= offset >= total;
  }
  assert.ok(later && past, `${JSON.stringify(queries)}: a later page and a page past the end`);
  return all;
}

// A Location resolved against the URL that was called, as a path under the API (/v1/...).
export function resolveLocation(requestPath: string, response: Response): string {
  const location = response.headers.get("location");
  assert.ok(location, "a Location header");
  const resolved = new URL(location, `${stack.v1}${requestPath}`);
  const base = new URL(stack.v1);
  assert.equal(resolved.origin, base.origin);
  assert.ok(resolved.pathname.startsWith(`${base.pathname}/`), `${resolved.pathname} is under ${base.pathname}`);
  return resolved.pathname.slice(base.pathname.length);
}

// What a write's Location names, read back by `api`: the path under /v1 (resolved against
// `requestPath`) and the body a GET of it answers (200, checked against the contract at
// `pathTemplate`), whose ETag must be the one the write answered with.
export async function readBack<T = unknown>(
  api: Client,
  requestPath: string,
  response: Response,
  pathTemplate: string,
): Promise<{ location: string; body: T }> {
  const location = resolveLocation(requestPath, response);
  const read = await api.get(location);
  const body = await expectStatus<T>("GET", pathTemplate, read, 200);
  assert.equal(read.headers.get("etag"), response.headers.get("etag"), `${location}: the ETag of the write is the ETag of a read`);
  return { location, body };
}

export type TenantFixture = { owner: TestUser; tenantId: string; name: string };

// A tenant created through the API by `owner`, who becomes its owner.
export async function createTenantAs(owner: TestUser, label: string): Promise<TenantFixture> {
  const name = unique(`Tenant ${label}`);
  const response = await client(owner).post("/tenants", { name }, representation);
  const created = await expectStatus<Schemas["Tenant"]>("POST", "/v1/tenants", response, 201);
  return { owner, tenantId: created.id, name };
}

export type MemberBody = Schemas["Member"];

// ownerClient: a client of an owner or admin, made with the tenant's id.
export async function addMember(ownerClient: Client, user: TestUser, role: "owner" | "admin" | "staff"): Promise<MemberBody> {
  const tenantId = ownerClient.tenantId;
  if (!tenantId) throw new Error("addMember needs a client made with the tenant's id");
  const response = await ownerClient.post(`/tenants/${tenantId}/members`, { email: user.email, role }, representation);
  return await expectStatus<MemberBody>("POST", "/v1/tenants/{tenantId}/members", response, 201);
}

// What a test created, removed with the admin connection when it ends.
export class Cleanup {
  readonly users = new Set<string>();
  readonly tenants = new Set<string>();

  async run(sql: postgres.Sql): Promise<void> {
    // Any tenant a test user owns is test data too (a tenant must keep an owner, so
    // deleting the user alone would be refused).
    await sql`
      delete from public.tenants
      where id = any(${[...this.tenants]}::uuid[])
         or id in (select tenant_id from public.tenant_memberships
                   where role = 'owner' and user_id = any(${[...this.users]}::uuid[]))`;
    if (this.users.size > 0) await sql`delete from auth.users where id = any(${[...this.users]}::uuid[])`;
  }
}

export type Fixture = {
  sql: postgres.Sql;
  cleanup: Cleanup;
  // A signed-in user, removed when the test ends.
  user(label: string): Promise<TestUser>;
  // A tenant and its owner, removed when the test ends; `ownerClient` acts as the owner in it.
  tenant(label: string): Promise<TenantFixture & { ownerClient: Client }>;
  // A new user (named `label`, the role by default) whom the tenant's owner adds with `role`.
  memberOf(tenant: { ownerClient: Client }, role: "owner" | "admin" | "staff", label?: string): Promise<TestUser>;
};

// Runs `work` with an admin connection, and removes what it created and closes the
// connection however it ends.
export async function withFixture(work: (fixture: Fixture) => Promise<void>): Promise<void> {
  const sql = adminSql();
  const cleanup = new Cleanup();
  const user = async (label: string) => {
    const created = await createUser(label);
    cleanup.users.add(created.id);
    return created;
  };
  try {
    await work({
      sql,
      cleanup,
      user,
      async tenant(label) {
        const created = await createTenantAs(await user(`${label}-owner`), label);
        cleanup.tenants.add(created.tenantId);
        return { ...created, ownerClient: client(created.owner, created.tenantId) };
      },
      async memberOf(tenant, role, label = role) {
        const added = await user(label);
        await addMember(tenant.ownerClient, added, role);
        return added;
      },
    });
  } finally {
    try {
      await cleanup.run(sql);
    } finally {
      await sql.end();
    }
  }
}

export type ApiSession = Schemas["Session"];

// Another session of `user`'s own, signed in through POST /v1/auth/sign-in.
export async function signInThroughApi(user: { email: string; password: string }): Promise<ApiSession> {
  const response = await call("POST", "/auth/sign-in", { body: { email: user.email, password: user.password } });
  return await expectStatus<ApiSession>("POST", "/v1/auth/sign-in", response, 200);
}
