// Tenants and their members, end to end through the gateway: every route of
// src/tenancy/handlers.ts, its documented errors and who may call it. Every response
// is checked against the served OpenAPI document.
import assert from "node:assert/strict";
import {
  addMember,
  type Client,
  client,
  expectInvalid,
  expectMinimal,
  expectPaging,
  expectProblem,
  expectStatus,
  listPage,
  MALFORMED_ID,
  readBack,
  representation,
  resolveLocation,
  type Schemas,
  unique,
  UNKNOWN_ID,
  withFixture,
} from "../support/api.ts";
import { endSession } from "../support/session.ts";

const TENANTS = "/v1/tenants";
const TENANT = "/v1/tenants/{tenantId}";
const MEMBERS = "/v1/tenants/{tenantId}/members";
const MEMBER = "/v1/tenants/{tenantId}/members/{userId}";

type Tenant = Schemas["Tenant"];
type MyTenant = Schemas["MyTenant"];
type Member = Schemas["Member"];

const listMyTenants = (api: Client, query = "") => listPage<MyTenant>(api, TENANTS, query);
const listMembers = (api: Client, tenantId: string, query = "") => listPage<Member>(api, MEMBERS, query, { tenantId });

// ---------------------------------------------------------------- POST /v1/tenants

Deno.test("POST /v1/tenants with return=representation: 201, the tenant, Location and ETag; the caller owns it", () =>
  withFixture(async ({ user, cleanup }) => {
    const alice = await user("alice");
    const api = client(alice);
    const name = unique("Harbour Group");
    const input = { name, senderEmail: "desk@harbour.example", senderName: "Harbour desk", paymentPageBaseUrl: "https://pay.example/p/" };

    const response = await api.post("/tenants", input, representation);
    const created = await expectStatus<Tenant>("POST", TENANTS, response, 201);
    cleanup.tenants.add(created.id);
    assert.deepEqual({ ...created, id: undefined, createdAt: undefined, updatedAt: undefined }, {
      ...input, id: undefined, createdAt: undefined, updatedAt: undefined,
    });
    assert.equal(response.headers.get("preference-applied"), "return=representation");
    const { location, body } = await readBack(client(alice), "/tenants", response, TENANT);
    assert.equal(location, `/tenants/${created.id}`);
    assert.deepEqual(body, created);

    const mine = await listMyTenants(api);
    assert.deepEqual(mine.data, [{ tenantId: created.id, name, role: "owner" }]);
    assert.deepEqual(mine.pagination, { limit: 20, offset: 0, total: 1, hasMore: false });
  }));

Deno.test("POST /v1/tenants without Prefer: 201 with Location, ETag and the new id", () =>
  withFixture(async ({ user, cleanup }) => {
    const alice = await user("alice");
    const name = unique("Minimal Group");
    const response = await client(alice).post("/tenants", { name });
    const { etag } = await expectMinimal("POST", TENANTS, response, 201);
    const location = resolveLocation("/tenants", response);
    const id = location.split("/").pop()!;
    cleanup.tenants.add(id);

    const read = await client(alice).get(location);
    const tenant = await expectStatus<Tenant>("GET", TENANT, read, 200);
    assert.equal(tenant.id, id);
    assert.equal(tenant.name, name);
    assert.deepEqual([tenant.senderEmail, tenant.senderName, tenant.paymentPageBaseUrl], [null, null, null]);
    assert.equal(read.headers.get("etag"), etag);
  }));

Deno.test("POST /v1/tenants: 400 for a missing, blank, unknown or invalid field, and for no body", () =>
  withFixture(async ({ user }) => {
    const api = client(await user("alice"));
    const cases: [unknown, string][] = [
      [{}, "name"],
      [{ name: "   " }, "name"],
      [{ name: "Acme", plan: "gold" }, "plan"],
      [{ name: "Acme", senderEmail: "not-an-email" }, "senderEmail"],
      [{ name: "Acme", paymentPageBaseUrl: "ftp://pay.example/" }, "paymentPageBaseUrl"],
      [{ name: "x".repeat(201) }, "name"],
    ];
    for (const [body, path] of cases) {
      await expectInvalid("POST", TENANTS, await api.post("/tenants", body), path, JSON.stringify(body));
    }
    await expectProblem("POST", TENANTS, await api.post("/tenants"), 400, "validation");
    const mine = await listMyTenants(api);
    assert.equal(mine.pagination.total, 0, "nothing was created");
  }));

Deno.test("POST /v1/tenants: 422 when the database refuses a setting, and nothing is created", () =>
  withFixture(async ({ user }) => {
    const api = client(await user("alice"));
    // A URL the WHATWG parser accepts (it would encode the space) but the tenants check refuses.
    const response = await api.post("/tenants", { name: unique("Spacey"), paymentPageBaseUrl: "https://pay.example/a b" });
    const problem = await expectProblem("POST", TENANTS, response, 422, "unprocessable");
    assert.match(problem.detail, /paymentPageBaseUrl/);
    const mine = await listMyTenants(api);
    assert.equal(mine.pagination.total, 0, "the tenant was not created");
  }));

Deno.test("POST /v1/tenants: 401 without a token and after the session ended", () =>
  withFixture(async ({ sql, user }) => {
    const problem = await expectProblem("POST", TENANTS, await client(null).post("/tenants", { name: "Nobody" }), 401, "unauthorized");
    assert.match(problem.detail, /Authorization/);
    const alice = await user("alice");
    await endSession(alice);
    const ended = await client(alice).post("/tenants", { name: unique("Ended") });
    assert.match((await expectProblem("POST", TENANTS, ended, 401, "unauthorized")).detail, /session has ended/);
  }));

// ---------------------------------------------------------------- GET /v1/tenants

Deno.test("GET /v1/tenants: the caller's tenants with their role, paged", () =>
  withFixture(async ({ tenant, memberOf }) => {
    const a = await tenant("a");
    const b = await tenant("b");
    const bob = await memberOf(a, "staff", "bob");
    await addMember(b.ownerClient, bob, "admin");
    const api = client(bob);

    const expected = [
      { tenantId: a.tenantId, name: a.name, role: "staff" },
      { tenantId: b.tenantId, name: b.name, role: "admin" },
    ].sort((x, y) => (x.name < y.name ? -1 : 1));
    const order = expected.map((row) => row.tenantId);
    const all = await expectPaging((query) => listMyTenants(api, query), order, ["?limit=1&offset=1", "?offset=5"], (row) => row.tenantId);
    assert.deepEqual(all.data, expected);
  }));

Deno.test("GET /v1/tenants: 400 for a bad query", () =>
  withFixture(async ({ user }) => {
    const api = client(await user("alice"));
    const cases: [string, string][] = [
      ["limit=0", "limit"],
      ["limit=101", "limit"],
      ["limit=abc", "limit"],
      ["offset=-1", "offset"],
      ["page=2", "page"],
      ["limit=1&limit=2", "limit"],
    ];
    for (const [query, field] of cases) {
      await expectInvalid("GET", TENANTS, await api.get(`/tenants?${query}`), field, query);
    }
  }));

Deno.test("GET /v1/tenants: 401 without a token, with a malformed one, and after the session ended", () =>
  withFixture(async ({ sql, user }) => {
    await expectProblem("GET", TENANTS, await client(null).get("/tenants"), 401, "unauthorized");
    await expectProblem("GET", TENANTS, await client(null).get("/tenants", undefined, { authorization: "Bearer x.y" }), 401);
    const alice = await user("alice");
    await expectStatus("GET", TENANTS, await client(alice).get("/tenants"), 200);
    await endSession(alice);
    await expectProblem("GET", TENANTS, await client(alice).get("/tenants"), 401, "unauthorized");
  }));

// ---------------------------------------------------------------- GET /v1/tenants/{tenantId}

Deno.test("GET /v1/tenants/{tenantId}: members read it; others, unknown and malformed ids are 404", () =>
  withFixture(async ({ user, tenant, memberOf }) => {
    const t = await tenant("read");
    const staff = await memberOf(t, "staff");

    const read = await client(t.owner).get(`/tenants/${t.tenantId}`);
    const body = await expectStatus<Tenant>("GET", TENANT, read, 200);
    assert.equal(body.id, t.tenantId);
    assert.equal(body.name, t.name);
    const byStaff = await client(staff).get(`/tenants/${t.tenantId}`);
    assert.deepEqual(await expectStatus("GET", TENANT, byStaff, 200), body);
    assert.equal(byStaff.headers.get("etag"), read.headers.get("etag"));

    const stranger = client(await user("stranger"));
    await expectProblem("GET", TENANT, await stranger.get(`/tenants/${t.tenantId}`), 404, "not-found");
    await expectProblem("GET", TENANT, await client(t.owner).get(`/tenants/${UNKNOWN_ID}`), 404, "not-found");
    await expectProblem("GET", TENANT, await client(t.owner).get(`/tenants/${MALFORMED_ID}`), 404, "not-found");
  }));

Deno.test("GET /v1/tenants/{tenantId}: 401 without a token and after the session ended", () =>
  withFixture(async ({ sql, tenant }) => {
    const t = await tenant("auth");
    await expectProblem("GET", TENANT, await client(null).get(`/tenants/${t.tenantId}`), 401, "unauthorized");
    await endSession(t.owner);
    await expectProblem("GET", TENANT, await client(t.owner).get(`/tenants/${t.tenantId}`), 401, "unauthorized");
  }));

Deno.test("a path-tenant route answers an unexpected query parameter with a documented status", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("query");
    // The route takes no query; the 400 it answers must be in its contract.
    await expectProblem("GET", TENANT, await client(t.owner).get(`/tenants/${t.tenantId}?expand=members`), 400, "validation");
  }));

// ---------------------------------------------------------------- PATCH /v1/tenants/{tenantId}

Deno.test("PATCH /v1/tenants/{tenantId}: 204 with an ETag, or 200 with the tenant; If-Match guards the write", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("patch");
    const api = client(t.owner);
    const path = `/tenants/${t.tenantId}`;
    const first = await api.get(path);
    await expectStatus("GET", TENANT, first, 200);
    const etag0 = first.headers.get("etag")!;

    const minimal = await api.patch(path, { senderName: "Front desk" }, { "if-match": etag0 });
    const { etag: etag1 } = await expectMinimal("PATCH", TENANT, minimal, 204);
    assert.notEqual(etag1, etag0);
    const second = await api.get(path);
    assert.equal((await expectStatus<Tenant>("GET", TENANT, second, 200)).senderName, "Front desk");
    assert.equal(second.headers.get("etag"), etag1);

    const stale = await api.patch(path, { senderName: "Lost update" }, { "if-match": etag0 });
    assert.match((await expectProblem("PATCH", TENANT, stale, 412, "stale-etag")).detail, /changed/);
    assert.equal(stale.headers.get("etag"), etag1, "a 412 names the current ETag");

    const full = await api.patch(path, { name: `${t.name} renamed`, senderEmail: "desk@hotel.example" }, {
      ...representation,
      "if-match": `"other", ${etag1}`,
    });
    const updated = await expectStatus<Tenant>("PATCH", TENANT, full, 200);
    assert.equal(updated.name, `${t.name} renamed`);
    assert.equal(updated.senderEmail, "desk@hotel.example");
    assert.equal(updated.senderName, "Front desk");
    assert.equal(full.headers.get("preference-applied"), "return=representation");
    const third = await api.get(path);
    assert.deepEqual(await expectStatus("GET", TENANT, third, 200), updated);
    assert.equal(third.headers.get("etag"), full.headers.get("etag"));

    const cleared = await api.patch(path, { senderEmail: null, senderName: null }, { "if-match": "*", ...representation });
    const after = await expectStatus<Tenant>("PATCH", TENANT, cleared, 200);
    assert.deepEqual([after.senderEmail, after.senderName], [null, null]);
  }));

Deno.test("PATCH /v1/tenants/{tenantId}: 400 for an empty, unknown or invalid body; 422 when the database refuses", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("patch400");
    const api = client(t.owner);
    const path = `/tenants/${t.tenantId}`;
    const cases: [unknown, string][] = [
      [{}, "(body)"],
      [{ plan: "gold" }, "plan"],
      [{ name: "" }, "name"],
      [{ senderEmail: "nope" }, "senderEmail"],
      [{ paymentPageBaseUrl: "mailto:x@y.z" }, "paymentPageBaseUrl"],
      [{ id: UNKNOWN_ID }, "id"],
    ];
    for (const [body, field] of cases) {
      await expectInvalid("PATCH", TENANT, await api.patch(path, body), field, JSON.stringify(body));
    }
    await expectInvalid("PATCH", TENANT, await api.patch(path), "(body)", "no body");
    const refused = await api.patch(path, { paymentPageBaseUrl: "https://pay.example/a b" });
    await expectProblem("PATCH", TENANT, refused, 422, "unprocessable");
  }));

Deno.test("PATCH /v1/tenants/{tenantId}: 404 for a non-member, an unknown or malformed id; 401 after the session ended", () =>
  withFixture(async ({ sql, user, tenant }) => {
    const t = await tenant("patch404");
    const stranger = client(await user("stranger"));
    await expectProblem("PATCH", TENANT, await stranger.patch(`/tenants/${t.tenantId}`, { senderName: "x" }), 404);
    await expectProblem("PATCH", TENANT, await client(t.owner).patch(`/tenants/${UNKNOWN_ID}`, { senderName: "x" }), 404);
    await expectProblem("PATCH", TENANT, await client(t.owner).patch(`/tenants/${MALFORMED_ID}`, { senderName: "x" }), 404);
    // With If-Match the row is read under lock first; an unknown tenant is still a 404.
    await expectProblem(
      "PATCH", TENANT, await client(t.owner).patch(`/tenants/${UNKNOWN_ID}`, { senderName: "x" }, { "if-match": '"x"' }), 404,
    );
    await expectProblem("PATCH", TENANT, await client(null).patch(`/tenants/${t.tenantId}`, { senderName: "x" }), 401);
    await endSession(t.owner);
    await expectProblem("PATCH", TENANT, await client(t.owner).patch(`/tenants/${t.tenantId}`, { senderName: "x" }), 401);
  }));

Deno.test("role matrix: PATCH /v1/tenants/{tenantId} — owner and admin may, staff is 403", () =>
  withFixture(async ({ tenant, memberOf }) => {
    const t = await tenant("roles");
    const admin = await memberOf(t, "admin");
    const staff = await memberOf(t, "staff");
    const path = `/tenants/${t.tenantId}`;
    await expectMinimal("PATCH", TENANT, await client(t.owner).patch(path, { senderName: "by owner" }), 204);
    await expectMinimal("PATCH", TENANT, await client(admin).patch(path, { senderName: "by admin" }), 204);
    const refused = await client(staff).patch(path, { senderName: "by staff" });
    assert.match((await expectProblem("PATCH", TENANT, refused, 403, "forbidden")).detail, /owners and admins/);
    const now = await expectStatus<Tenant>("GET", TENANT, await client(staff).get(path), 200);
    assert.equal(now.senderName, "by admin");
  }));

// ---------------------------------------------------------------- DELETE /v1/tenants/{tenantId}

Deno.test("role matrix: DELETE /v1/tenants/{tenantId} — only an owner; admin and staff are 403, others 404", () =>
  withFixture(async ({ user, tenant, memberOf }) => {
    const t = await tenant("delete");
    const admin = await memberOf(t, "admin");
    const staff = await memberOf(t, "staff");
    const path = `/tenants/${t.tenantId}`;

    await expectProblem("DELETE", TENANT, await client(staff).delete(path), 403, "forbidden");
    assert.match((await expectProblem("DELETE", TENANT, await client(admin).delete(path), 403, "forbidden")).detail, /owner/);
    await expectProblem("DELETE", TENANT, await client(await user("stranger")).delete(path), 404, "not-found");
    await expectProblem("DELETE", TENANT, await client(null).delete(path), 401, "unauthorized");
    await expectProblem("DELETE", TENANT, await client(t.owner).delete(`/tenants/${UNKNOWN_ID}`), 404, "not-found");
    await expectProblem("DELETE", TENANT, await client(t.owner).delete(`/tenants/${MALFORMED_ID}`), 404, "not-found");

    await expectStatus("DELETE", TENANT, await client(t.owner).delete(path), 204);
    await expectProblem("GET", TENANT, await client(t.owner).get(path), 404, "not-found");
    const left = await listMyTenants(client(staff));
    assert.equal(left.pagination.total, 0, "the tenant's memberships went with it");
  }));

Deno.test("DELETE /v1/tenants/{tenantId}: 401 after the session ended", () =>
  withFixture(async ({ sql, tenant }) => {
    const t = await tenant("delete401");
    await endSession(t.owner);
    await expectProblem("DELETE", TENANT, await client(t.owner).delete(`/tenants/${t.tenantId}`), 401, "unauthorized");
  }));

// ---------------------------------------------------------------- members: reads

Deno.test("GET members and one member: any member reads them; others, unknown and malformed ids are 404", () =>
  withFixture(async ({ user, tenant }) => {
    const t = await tenant("members");
    const staff = await user("staff");
    const added = await addMember(t.ownerClient, staff, "staff");
    const api = client(staff);

    const expected = [
      { userId: t.owner.id, email: t.owner.email, role: "owner", fullName: "members-owner" },
      { userId: staff.id, email: staff.email, role: "staff", fullName: "staff" },
    ].sort((x, y) => (x.email < y.email ? -1 : 1));
    const order = expected.map((row) => row.userId);
    const list = await expectPaging((query) => listMembers(api, t.tenantId, query), order, ["?limit=1&offset=1", "?offset=10"], (row) => row.userId);
    assert.deepEqual(list.data.map(({ userId, email, role, fullName }) => ({ userId, email, role, fullName })), expected);
    await expectProblem("GET", MEMBERS, await api.get(`/tenants/${t.tenantId}/members?limit=none`), 400, "validation");
    await expectProblem("GET", MEMBERS, await api.get(`/tenants/${t.tenantId}/members?role=owner`), 400, "validation");

    const one = await api.get(`/tenants/${t.tenantId}/members/${staff.id}`);
    assert.deepEqual(await expectStatus<Member>("GET", MEMBER, one, 200), added);
    assert.ok(one.headers.get("etag"));

    const stranger = client(await user("stranger"));
    await expectProblem("GET", MEMBERS, await stranger.get(`/tenants/${t.tenantId}/members`), 404, "not-found");
    await expectProblem("GET", MEMBER, await stranger.get(`/tenants/${t.tenantId}/members/${staff.id}`), 404, "not-found");
    await expectProblem("GET", MEMBERS, await api.get(`/tenants/${UNKNOWN_ID}/members`), 404);
    await expectProblem("GET", MEMBERS, await api.get(`/tenants/${MALFORMED_ID}/members`), 404);
    // A user who exists but is not in this tenant is not a member of it.
    const outsider = await user("outsider");
    await expectProblem("GET", MEMBER, await api.get(`/tenants/${t.tenantId}/members/${outsider.id}`), 404, "not-found");
    await expectProblem("GET", MEMBER, await api.get(`/tenants/${t.tenantId}/members/${MALFORMED_ID}`), 404, "not-found");
    await expectProblem("GET", MEMBERS, await client(null).get(`/tenants/${t.tenantId}/members`), 401);
    await expectProblem("GET", MEMBER, await client(null).get(`/tenants/${t.tenantId}/members/${staff.id}`), 401);
  }));

Deno.test("member reads: 401 after the session ended", () =>
  withFixture(async ({ sql, tenant }) => {
    const t = await tenant("members401");
    await endSession(t.owner);
    await expectProblem("GET", MEMBERS, await client(t.owner).get(`/tenants/${t.tenantId}/members`), 401, "unauthorized");
    await expectProblem("GET", MEMBER, await client(t.owner).get(`/tenants/${t.tenantId}/members/${t.owner.id}`), 401);
  }));

// ---------------------------------------------------------------- POST members

Deno.test("POST members: 201 with the member, or with only its user id, Location and ETag; role defaults to staff", () =>
  withFixture(async ({ user, tenant }) => {
    const t = await tenant("add");
    const path = `/tenants/${t.tenantId}/members`;
    const carol = await user("carol");
    const response = await t.ownerClient.post(path, { email: carol.email.toUpperCase(), role: "admin" }, representation);
    const added = await expectStatus<Member>("POST", MEMBERS, response, 201);
    assert.deepEqual([added.userId, added.email, added.role, added.fullName], [carol.id, carol.email, "admin", "carol"]);
    assert.equal(resolveLocation(path, response), `/tenants/${t.tenantId}/members/${carol.id}`);

    const dave = await user("dave");
    const minimal = await t.ownerClient.post(path, { email: dave.email });
    const { etag } = await expectMinimal("POST", MEMBERS, minimal, 201);
    const location = resolveLocation(path, minimal);
    assert.equal(location, `/tenants/${t.tenantId}/members/${dave.id}`);
    const read = await t.ownerClient.get(location);
    assert.equal((await expectStatus<Member>("GET", MEMBER, read, 200)).role, "staff");
    assert.equal(read.headers.get("etag"), etag);
  }));

Deno.test("POST members: 409 for a member already in, 404 for an unknown email, 400 for a bad body", () =>
  withFixture(async ({ user, tenant, memberOf }) => {
    const t = await tenant("add409");
    const path = `/tenants/${t.tenantId}/members`;
    const carol = await memberOf(t, "staff", "carol");
    const again = await t.ownerClient.post(path, { email: carol.email, role: "admin" });
    assert.match((await expectProblem("POST", MEMBERS, again, 409, "already-a-member")).detail, /already a member/);
    assert.equal((await expectStatus<Member>("GET", MEMBER, await t.ownerClient.get(`${path}/${carol.id}`), 200)).role, "staff");

    const nobody = await t.ownerClient.post(path, { email: `nobody-${crypto.randomUUID()}@test.example` });
    await expectProblem("POST", MEMBERS, nobody, 404, "not-found");

    const cases: [unknown, string][] = [
      [{}, "email"],
      [{ email: "not-an-email" }, "email"],
      [{ email: carol.email, role: "manager" }, "role"],
      [{ email: carol.email, userId: carol.id }, "userId"],
    ];
    for (const [body, field] of cases) {
      await expectInvalid("POST", MEMBERS, await t.ownerClient.post(path, body), field, JSON.stringify(body));
    }
    await expectProblem("POST", MEMBERS, await client(null).post(path, { email: carol.email }), 401);
    await expectProblem("POST", MEMBERS, await t.ownerClient.post(`/tenants/${UNKNOWN_ID}/members`, { email: carol.email }), 404);
    await expectProblem("POST", MEMBERS, await t.ownerClient.post(`/tenants/${MALFORMED_ID}/members`, { email: carol.email }), 404);
    const stranger = client(await user("stranger"));
    await expectProblem("POST", MEMBERS, await stranger.post(path, { email: carol.email }), 404);
  }));

Deno.test("role matrix: POST members — owners grant any role, admins all but owner (403), staff none (403)", () =>
  withFixture(async ({ user, tenant, memberOf }) => {
    const t = await tenant("addroles");
    const path = `/tenants/${t.tenantId}/members`;
    const admin = await memberOf(t, "admin");
    const staff = await memberOf(t, "staff");

    const coOwner = await user("coowner");
    assert.equal((await addMember(t.ownerClient, coOwner, "owner")).role, "owner");

    const adminApi = client(admin, t.tenantId);
    assert.equal((await addMember(adminApi, await user("byadmin"), "staff")).role, "staff");
    assert.equal((await addMember(adminApi, await user("byadmin2"), "admin")).role, "admin");
    const owner = await adminApi.post(path, { email: (await user("notowner")).email, role: "owner" });
    assert.match((await expectProblem("POST", MEMBERS, owner, 403, "forbidden")).detail, /owner/);

    const byStaff = await client(staff).post(path, { email: (await user("bystaff")).email, role: "staff" });
    await expectProblem("POST", MEMBERS, byStaff, 403, "forbidden");
  }));

// ---------------------------------------------------------------- PATCH members

Deno.test("PATCH members: 204 with an ETag, or 200 with the member", () =>
  withFixture(async ({ tenant, memberOf }) => {
    const t = await tenant("change");
    const carol = await memberOf(t, "staff", "carol");
    const path = `/tenants/${t.tenantId}/members/${carol.id}`;

    const { etag } = await expectMinimal("PATCH", MEMBER, await t.ownerClient.patch(path, { role: "admin" }), 204);
    const read = await t.ownerClient.get(path);
    assert.equal((await expectStatus<Member>("GET", MEMBER, read, 200)).role, "admin");
    assert.equal(read.headers.get("etag"), etag);

    const full = await t.ownerClient.patch(path, { role: "owner" }, representation);
    const changed = await expectStatus<Member>("PATCH", MEMBER, full, 200);
    assert.deepEqual([changed.userId, changed.role], [carol.id, "owner"]);
    assert.equal(full.headers.get("preference-applied"), "return=representation");
  }));

Deno.test("PATCH members: 400 for a bad body, 404 for unknown or malformed ids, 409 for the last owner", () =>
  withFixture(async ({ user, tenant, memberOf }) => {
    const t = await tenant("change4xx");
    const carol = await memberOf(t, "staff", "carol");
    const path = `/tenants/${t.tenantId}/members/${carol.id}`;
    const cases: [unknown, string][] = [[{}, "role"], [{ role: "boss" }, "role"], [{ role: "admin", email: carol.email }, "email"]];
    for (const [body, field] of cases) {
      await expectInvalid("PATCH", MEMBER, await t.ownerClient.patch(path, body), field, JSON.stringify(body));
    }
    await expectInvalid("PATCH", MEMBER, await t.ownerClient.patch(path), "(body)", "no body");
    const outsider = await user("outsider");
    await expectProblem("PATCH", MEMBER, await t.ownerClient.patch(`/tenants/${t.tenantId}/members/${outsider.id}`, { role: "admin" }), 404);
    await expectProblem("PATCH", MEMBER, await t.ownerClient.patch(`/tenants/${t.tenantId}/members/${MALFORMED_ID}`, { role: "admin" }), 404);
    await expectProblem("PATCH", MEMBER, await t.ownerClient.patch(`/tenants/${UNKNOWN_ID}/members/${carol.id}`, { role: "admin" }), 404);
    await expectProblem("PATCH", MEMBER, await client(null).patch(path, { role: "admin" }), 401);

    const demote = await t.ownerClient.patch(`/tenants/${t.tenantId}/members/${t.owner.id}`, { role: "admin" });
    assert.match((await expectProblem("PATCH", MEMBER, demote, 409, "last-owner")).detail, /at least one owner/);
  }));

Deno.test("role matrix: PATCH members — admins change staff and admins but not owners (403); staff is 403", () =>
  withFixture(async ({ user, tenant }) => {
    const t = await tenant("changeroles");
    const admin = await user("admin");
    const staff = await user("staff");
    const other = await user("other");
    await addMember(t.ownerClient, admin, "admin");
    await addMember(t.ownerClient, staff, "staff");
    await addMember(t.ownerClient, other, "staff");
    const memberPath = (id: string) => `/tenants/${t.tenantId}/members/${id}`;

    const adminApi = client(admin);
    await expectMinimal("PATCH", MEMBER, await adminApi.patch(memberPath(other.id), { role: "admin" }), 204);
    await expectMinimal("PATCH", MEMBER, await adminApi.patch(memberPath(other.id), { role: "staff" }), 204);
    await expectProblem("PATCH", MEMBER, await adminApi.patch(memberPath(other.id), { role: "owner" }), 403, "forbidden");
    await expectProblem("PATCH", MEMBER, await adminApi.patch(memberPath(t.owner.id), { role: "admin" }), 403, "forbidden");

    const staffApi = client(staff);
    await expectProblem("PATCH", MEMBER, await staffApi.patch(memberPath(other.id), { role: "admin" }), 403, "forbidden");
    await expectProblem("PATCH", MEMBER, await staffApi.patch(memberPath(staff.id), { role: "admin" }), 403, "forbidden");

    const roles = await listMembers(t.ownerClient, t.tenantId);
    assert.deepEqual(
      Object.fromEntries(roles.data.map((m) => [m.userId, m.role])),
      { [t.owner.id]: "owner", [admin.id]: "admin", [staff.id]: "staff", [other.id]: "staff" },
    );
  }));

// ---------------------------------------------------------------- DELETE members

Deno.test("role matrix: DELETE members — managers remove, anyone leaves, staff cannot remove others (403)", () =>
  withFixture(async ({ user, tenant }) => {
    const t = await tenant("remove");
    const admin = await user("admin");
    const staff = await user("staff");
    const other = await user("other");
    const leaver = await user("leaver");
    for (const [member, role] of [[admin, "admin"], [staff, "staff"], [other, "staff"], [leaver, "staff"]] as const) {
      await addMember(t.ownerClient, member, role);
    }
    const memberPath = (id: string) => `/tenants/${t.tenantId}/members/${id}`;

    const refused = await expectProblem("DELETE", MEMBER, await client(staff).delete(memberPath(other.id)), 403, "forbidden");
    assert.match(refused.detail, /owners and admins/);
    await expectStatus("DELETE", MEMBER, await client(admin).delete(memberPath(other.id)), 204);
    await expectStatus("DELETE", MEMBER, await client(leaver).delete(memberPath(leaver.id)), 204);
    await expectStatus("DELETE", MEMBER, await t.ownerClient.delete(memberPath(staff.id)), 204);
    await expectProblem("GET", MEMBERS, await client(staff).get(`/tenants/${t.tenantId}/members`), 404, "not-found");

    const left = await listMembers(t.ownerClient, t.tenantId);
    assert.deepEqual(left.data.map((m) => m.userId).sort(), [t.owner.id, admin.id].sort());
  }));

Deno.test("DELETE members: 409 for the last owner, 404 for unknown or malformed ids, 401 without a token", () =>
  withFixture(async ({ user, tenant, memberOf }) => {
    const t = await tenant("remove4xx");
    const path = `/tenants/${t.tenantId}/members/${t.owner.id}`;
    assert.match((await expectProblem("DELETE", MEMBER, await t.ownerClient.delete(path), 409, "last-owner")).detail, /owner/);
    const outsider = await user("outsider");
    await expectProblem("DELETE", MEMBER, await t.ownerClient.delete(`/tenants/${t.tenantId}/members/${outsider.id}`), 404);
    await expectProblem("DELETE", MEMBER, await t.ownerClient.delete(`/tenants/${t.tenantId}/members/${MALFORMED_ID}`), 404);
    await expectProblem("DELETE", MEMBER, await client(outsider).delete(path), 404);
    await expectProblem("DELETE", MEMBER, await client(null).delete(path), 401, "unauthorized");

    // With a second owner, the first may leave.
    const second = await memberOf(t, "owner", "second");
    await expectStatus("DELETE", MEMBER, await t.ownerClient.delete(path), 204);
    const members = await listMembers(client(second), t.tenantId);
    assert.deepEqual(members.data.map((m) => [m.userId, m.role]), [[second.id, "owner"]]);
  }));

Deno.test("DELETE members: an admin removing an owner is refused with a documented status", () =>
  withFixture(async ({ tenant, memberOf }) => {
    const t = await tenant("removeowner");
    const admin = await memberOf(t, "admin");
    const refused = await client(admin).delete(`/tenants/${t.tenantId}/members/${t.owner.id}`);
    // The database refuses (only an owner can remove the owner role): a 403, which the
    // contract of this member-access route must list.
    await expectProblem("DELETE", MEMBER, refused, 403, "forbidden");
  }));
