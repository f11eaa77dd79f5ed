// A small client for the API through the gateway, and the fixtures most API tests
// need: a tenant with its owner, and members added the way a manager adds them.
import assert from "node:assert/strict";
import type postgres from "postgres";
import { assertMatchesContract } from "./openapi.ts";
import { adminSql, createUser, type TestUser } from "./session.ts";
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

// A write without Prefer: the status, no body, and the headers that stand for the body.
export async function expectMinimal(method: string, pathTemplate: string, response: Response, status: 201 | 204) {
  assert.equal(await expectStatus(method, pathTemplate, response, status), undefined);
  assert.equal(await response.clone().text(), "");
  const etag = response.headers.get("etag");
  assert.match(etag ?? "", /^"[A-Za-z0-9_-]+"$/, "a strong ETag");
  return { etag: etag!, location: response.headers.get("location") };
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

export type TenantFixture = { owner: TestUser; tenantId: string; name: string };

export async function setupTenant(sql: postgres.Sql, label: string): Promise<TenantFixture> {
  return await createTenantAs(await createUser(sql, `${label}-owner`), label);
}

// A tenant created through the API by `owner`, who becomes its owner.
export async function createTenantAs(owner: TestUser, label: string): Promise<TenantFixture> {
  const name = unique(`Tenant ${label}`);
  const response = await client(owner).post("/tenants", { name }, representation);
  const created = await assertMatchesContract("POST", "/v1/tenants", response) as { id: string };
  assert.equal(response.status, 201, `creating a tenant: ${JSON.stringify(created)}`);
  return { owner, tenantId: created.id, name };
}

export type MemberBody = { userId: string; email: string; role: string };

// ownerClient: a client of an owner or admin, made with the tenant's id.
export async function addMember(ownerClient: Client, user: TestUser, role: "owner" | "admin" | "staff"): Promise<MemberBody> {
  const tenantId = ownerClient.tenantId;
  if (!tenantId) throw new Error("addMember needs a client made with the tenant's id");
  const response = await ownerClient.post(`/tenants/${tenantId}/members`, { email: user.email, role }, representation);
  const added = await assertMatchesContract("POST", "/v1/tenants/{tenantId}/members", response) as MemberBody;
  assert.equal(response.status, 201, `adding a member: ${JSON.stringify(added)}`);
  return added;
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
};

// Runs `work` with an admin connection, and removes what it created and closes the
// connection however it ends.
export async function withFixture(work: (fixture: Fixture) => Promise<void>): Promise<void> {
  const sql = adminSql();
  const cleanup = new Cleanup();
  try {
    await work({
      sql,
      cleanup,
      async user(label) {
        const user = await createUser(sql, label);
        cleanup.users.add(user.id);
        return user;
      },
      async tenant(label) {
        const owner = await createUser(sql, `${label}-owner`);
        cleanup.users.add(owner.id);
        const created = await createTenantAs(owner, label);
        cleanup.tenants.add(created.tenantId);
        return { ...created, ownerClient: client(created.owner, created.tenantId) };
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
