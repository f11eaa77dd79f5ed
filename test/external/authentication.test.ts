// How /v1/external/* knows who calls (src/external/integration-scope.ts): the API key
// as X-Api-Key or as the bearer, no x-tenant-id; every way a key can be wrong is a 401
// that names no part of what was sent.
import assert from "node:assert/strict";
import { sleep } from "../../local/capture.ts";
import { expectProblem, expectStatus, type Page, withFixture } from "../support/api.ts";
import { createStay, type Reservation } from "../support/domain.ts";
import { external, issueApiKey } from "../support/integration.ts";
import { stack } from "../support/stack.ts";

const LIST = "/v1/external/reservations";

Deno.test("both header forms work, without x-tenant-id; X-Api-Key wins over another bearer; a tenant header changes nothing", () =>
  withFixture(async ({ tenant }) => {
    const a = await tenant("integration");
    const b = await tenant("other");
    const stay = await createStay(a.ownerClient);
    await createStay(b.ownerClient);
    const key = await issueApiKey(a.ownerClient, stay.property.id);

    for (const via of ["x-api-key", "bearer"] as const) {
      const page = await expectStatus<Page<Reservation>>("GET", LIST, await external("GET", "/reservations", key.secret, { via }), 200);
      assert.deepEqual(page.data.map((row) => row.id), [stay.reservation.id], via);
    }
    // Behind Supabase's gateway a client may send the anon key as its bearer as well.
    const both = await external("GET", "/reservations", key.secret, { headers: { authorization: `Bearer ${stack.anonKey}` } });
    assert.equal((await expectStatus<Page<Reservation>>("GET", LIST, both, 200)).data.length, 1);
    const elsewhere = await external("GET", "/reservations", key.secret, { headers: { "x-tenant-id": b.tenantId } });
    assert.deepEqual(
      (await expectStatus<Page<Reservation>>("GET", LIST, elsewhere, 200)).data.map((row) => row.id),
      [stay.reservation.id],
      "the key decides the tenant, not the header",
    );
  }));

Deno.test("a missing, malformed, unknown, wrongly-secret or session key is a 401 with WWW-Authenticate that echoes nothing", () =>
  withFixture(async ({ tenant }) => {
    const a = await tenant("integration");
    const stay = await createStay(a.ownerClient);
    const key = await issueApiKey(a.ownerClient, stay.property.id);
    const prefix = key.secret.slice(0, 22);
    const wrongSecret = `${prefix}${"A".repeat(43)}`;
    const unknownId = `live_${"a".repeat(16)}_${key.secret.slice(22)}`;
    const cases: Record<string, { key?: string; via?: "x-api-key" | "bearer"; headers?: Record<string, string> }> = {
      "no key": {},
      "Authorization that is not Bearer": { headers: { authorization: `Basic ${btoa("user:pass")}` } },
      "a malformed key": { key: "live_not-a-key" },
      "a key with the wrong secret": { key: wrongSecret },
      "an unknown key id": { key: unknownId },
      "a session token as the bearer": { key: a.owner.token, via: "bearer" },
      "an empty X-Api-Key": { key: "" },
    };
    const bodies: Record<string, string> = {};
    for (const [label, probe] of Object.entries(cases)) {
      const response = await external("GET", `/reservations/${stay.reservation.id}`, probe.key, { via: probe.via, headers: probe.headers });
      const problem = await expectProblem("GET", "/v1/external/reservations/{id}", response, 401, "unauthorized");
      assert.match(response.headers.get("www-authenticate") ?? "", /^Bearer\b/, label);
      const text = JSON.stringify(problem);
      assert.ok(!text.includes(key.secret.slice(22)) && !text.includes("AAAA") && !text.includes(a.owner.token), `${label}: echoes the key`);
      bodies[label] = problem.detail;
    }
    assert.equal(bodies["a key with the wrong secret"], bodies["an unknown key id"], "a wrong secret says no more than an unknown key");
  }));

Deno.test("a revoked key is refused from the next request; an expired one from the moment it expires", () =>
  withFixture(async ({ tenant }) => {
    const a = await tenant("integration");
    const stay = await createStay(a.ownerClient);
    const revoked = await issueApiKey(a.ownerClient, stay.property.id);
    const path = `/reservations/${stay.reservation.id}`;
    assert.equal((await external("GET", path, revoked.secret)).status, 200);
    assert.equal((await a.ownerClient.delete(`/api-keys/${revoked.id}`)).status, 204);
    const refused = await expectProblem("GET", "/v1/external/reservations/{id}", await external("GET", path, revoked.secret), 401);
    assert.match(refused.detail, /revoked/);

    const expiresAt = new Date(Date.now() + 1500);
    const expiring = await issueApiKey(a.ownerClient, stay.property.id, { expiresAt: expiresAt.toISOString() });
    assert.equal((await external("GET", path, expiring.secret)).status, 200);
    await sleep(expiresAt.getTime() - Date.now() + 100);
    const expired = await expectProblem("GET", "/v1/external/reservations/{id}", await external("GET", path, expiring.secret), 401);
    assert.match(expired.detail, /expired/);
    // A write with it is refused as well, and records nothing.
    const payment = await external("POST", `${path}/payments`, expiring.secret, {
      body: { amount: 100, currency: "EUR", method: "card", externalReference: "after-expiry" },
    });
    await expectProblem("POST", "/v1/external/reservations/{id}/payments", payment, 401, "unauthorized");
    const read = await a.ownerClient.get(`/reservations/${stay.reservation.id}`);
    assert.equal(((await read.json()) as Reservation).amountPaid, 0);
  }));
