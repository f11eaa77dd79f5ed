// API keys through the session API (src/api-keys): a manager issues a key for one
// property and sees its secret once; lists and reads never show it; DELETE revokes at
// once. What a key may do is test/external's.
import assert from "node:assert/strict";
import {
  client,
  expectInvalid,
  expectProblem,
  expectStatus,
  listPage,
  readOne,
  resolveLocation,
  UNKNOWN_ID,
  withFixture,
} from "../support/api.ts";
import { createProperty } from "../support/domain.ts";
import { type ApiKey, external, issueApiKey } from "../support/integration.ts";

const KEYS = "/v1/api-keys";
const KEY = "/v1/api-keys/{id}";
const KEY_FORMAT = /^live_([a-z2-7]{16})_([A-Za-z0-9_-]{43})$/;

function secretPart(token: string): string {
  const match = KEY_FORMAT.exec(token);
  assert.ok(match, `${token.slice(0, 5)}…: not a live_ key`);
  return match[2]!;
}

async function sha256Hex(text: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
  return Array.from(digest, (byte) => byte.toString(16).padStart(2, "0")).join("");
}

Deno.test("an owner issues a key: the secret once, live_ and 256 random bits; the database keeps only its hash", () =>
  withFixture(async ({ sql, tenant }) => {
    const a = await tenant("keys");
    const property = await createProperty(a.ownerClient);
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
    const response = await a.ownerClient.post("/api-keys", { name: "Channel manager", propertyId: property.id, expiresAt });
    const issued = await expectStatus<ApiKey & { secret: string }>("POST", KEYS, response, 201);
    assert.equal(response.headers.get("cache-control"), "no-store");
    assert.equal(response.headers.get("etag"), null, "no validator derived from a body holding the secret");

    const secret = secretPart(issued.secret);
    assert.equal(issued.prefix, issued.secret.slice(0, 21));
    assert.equal(issued.lastFour, secret.slice(-4));
    assert.deepEqual(
      { name: issued.name, propertyId: issued.propertyId, status: issued.status, createdBy: issued.createdBy },
      { name: "Channel manager", propertyId: property.id, status: "active", createdBy: a.owner.id },
    );
    assert.equal(new Date(issued.expiresAt!).getTime(), new Date(expiresAt).getTime());
    assert.equal(issued.lastUsedAt, null);
    assert.equal(issued.revokedAt, null);

    // Read back where Location points: the same key without its secret.
    const read = await readOne<ApiKey>(a.ownerClient, KEY, { id: issued.id });
    assert.equal(resolveLocation("/api-keys", response), `/api-keys/${issued.id}`);
    const { secret: _, ...withoutSecret } = issued;
    assert.deepEqual(read.body, withoutSecret);

    const [row] = await sql<{ hash: string; whole: string }[]>`
      select encode(secret_hash, 'hex') as hash, to_jsonb(k)::text as whole from public.api_keys k where id = ${issued.id}`;
    assert.equal(row!.hash, await sha256Hex(secret), "the stored hash is SHA-256 of the secret");
    assert.ok(!row!.whole.includes(secret), "no column holds the secret");

    // Two keys never share a secret or a key id.
    const second = await issueApiKey(a.ownerClient, property.id);
    assert.notEqual(second.prefix, issued.prefix);
    assert.notEqual(secretPart(second.secret), secret);
  }));

Deno.test("the list and the read show prefix, last four, property, created, last used, expiry and status, never a secret", () =>
  withFixture(async ({ tenant }) => {
    const a = await tenant("keys");
    const harbour = await createProperty(a.ownerClient);
    const hillside = await createProperty(a.ownerClient);
    const first = await issueApiKey(a.ownerClient, harbour.id, { name: "PSP" });
    const second = await issueApiKey(a.ownerClient, hillside.id, { name: "Channel manager" });
    assert.equal((await external("GET", "/reservations", first.secret)).status, 200);

    const listed = await listPage<ApiKey>(a.ownerClient, KEYS);
    assert.deepEqual(listed.data.map((key) => key.id), [second.id, first.id], "newest first");
    assert.equal(listed.pagination.total, 2);
    const text = JSON.stringify(listed);
    for (const key of [first, second]) {
      assert.ok(!text.includes(secretPart(key.secret)), "a list never holds a secret");
      assert.ok(!("secret" in listed.data.find((row) => row.id === key.id)!));
    }
    const used = listed.data.find((row) => row.id === first.id)!;
    assert.ok(used.lastUsedAt !== null, "the key that was used says when");
    assert.equal(listed.data.find((row) => row.id === second.id)!.lastUsedAt, null);

    const byProperty = await listPage<ApiKey>(a.ownerClient, KEYS, `?propertyId=${hillside.id}`);
    assert.deepEqual(byProperty.data.map((key) => key.id), [second.id]);
    await expectInvalid("GET", KEYS, await a.ownerClient.get("/api-keys?status=lost"), "status.0");
    await expectInvalid("GET", KEYS, await a.ownerClient.get("/api-keys?secret=x"), "secret");
  }));

Deno.test("DELETE revokes at once and again changes nothing; the key then answers 401", () =>
  withFixture(async ({ tenant }) => {
    const a = await tenant("keys");
    const property = await createProperty(a.ownerClient);
    const key = await issueApiKey(a.ownerClient, property.id);
    assert.equal((await external("GET", "/reservations", key.secret)).status, 200);

    await expectStatus("DELETE", KEY, await a.ownerClient.delete(`/api-keys/${key.id}`), 204);
    await expectProblem("GET", "/v1/external/reservations", await external("GET", "/reservations", key.secret), 401, "unauthorized");
    const revoked = (await readOne<ApiKey>(a.ownerClient, KEY, { id: key.id })).body;
    assert.equal(revoked.status, "revoked");
    assert.ok(revoked.revokedAt !== null);

    await expectStatus("DELETE", KEY, await a.ownerClient.delete(`/api-keys/${key.id}`), 204);
    const again = (await readOne<ApiKey>(a.ownerClient, KEY, { id: key.id })).body;
    assert.equal(again.revokedAt, revoked.revokedAt, "revoking again keeps the first time");

    const listed = await listPage<ApiKey>(a.ownerClient, KEYS, "?status=revoked");
    assert.deepEqual(listed.data.map((row) => row.id), [key.id]);
    assert.deepEqual((await listPage<ApiKey>(a.ownerClient, KEYS, "?status=active")).data, []);
    await expectProblem("DELETE", KEY, await a.ownerClient.delete(`/api-keys/${UNKNOWN_ID}`), 404, "not-found");
  }));

Deno.test("an admin issues and revokes keys; staff may not even list them", () =>
  withFixture(async ({ tenant, memberOf }) => {
    const a = await tenant("keys");
    const property = await createProperty(a.ownerClient);
    const admin = await memberOf(a, "admin");
    const staff = await memberOf(a, "staff");
    const asAdmin = client(admin, a.tenantId);
    const asStaff = client(staff, a.tenantId);

    const key = await issueApiKey(asAdmin, property.id);
    assert.equal(key.createdBy, admin.id);
    await expectProblem("GET", KEYS, await asStaff.get("/api-keys"), 403, "forbidden");
    await expectProblem("POST", KEYS, await asStaff.post("/api-keys", { name: "x", propertyId: property.id }), 403, "forbidden");
    await expectProblem("DELETE", KEY, await asStaff.delete(`/api-keys/${key.id}`), 403, "forbidden");
    await expectStatus("DELETE", KEY, await asAdmin.delete(`/api-keys/${key.id}`), 204);
  }));

Deno.test("issuing refuses a missing name, an unknown field, another tenant's property and a past expiry", () =>
  withFixture(async ({ tenant }) => {
    const a = await tenant("keys");
    const b = await tenant("other");
    const property = await createProperty(a.ownerClient);
    const theirs = await createProperty(b.ownerClient);
    const post = (body: unknown) => a.ownerClient.post("/api-keys", body);

    await expectInvalid("POST", KEYS, await post({ propertyId: property.id }), "name");
    await expectInvalid("POST", KEYS, await post({ name: "x", propertyId: property.id, permissions: ["all"] }), "permissions");
    await expectInvalid("POST", KEYS, await post({ name: "x", propertyId: property.id, expiresAt: "tomorrow" }), "expiresAt");
    const unknown = await expectProblem("POST", KEYS, await post({ name: "x", propertyId: UNKNOWN_ID }), 422, "unknown-reference");
    const foreign = await expectProblem("POST", KEYS, await post({ name: "x", propertyId: theirs.id }), 422, "unknown-reference");
    assert.deepEqual(foreign, unknown, "another tenant's property answers as an unknown one");
    const past = await expectProblem("POST", KEYS, await post({
      name: "x", propertyId: property.id, expiresAt: new Date(Date.now() - 60_000).toISOString(),
    }), 422, "unprocessable");
    assert.match(past.detail, /expiresAt/);
    assert.equal((await listPage<ApiKey>(a.ownerClient, KEYS)).pagination.total, 0, "nothing was issued");
  }));
