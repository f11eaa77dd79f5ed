// CORS through the gateway to the running api function, as a browser on the stack's
// allowed origin (the front-desk example's) and on a foreign one sends it: the preflight,
// then the real request, on a tenant's route with a signed-in user, errors included.
import assert from "node:assert/strict";
import { call, withFixture } from "../support/api.ts";
import { readProblem, stack } from "../support/stack.ts";

const foreign = "http://localhost:9";

function allowedOrigin(): string {
  const [origin] = stack.corsAllowedOrigins;
  assert.ok(origin, "the stack grants the front-desk example's origin");
  return origin;
}

function preflight(path: string, origin: string, method: string, headers: string): Promise<Response> {
  return fetch(`${stack.v1}${path}`, {
    method: "OPTIONS",
    headers: { origin, "access-control-request-method": method, "access-control-request-headers": headers },
  });
}

Deno.test("the allowed origin's preflight for a conditional PATCH is granted with the headers supabase-js and the API use", async () => {
  const origin = allowedOrigin();
  const response = await preflight("/guests/5b6c7d8e-1f2a-4b3c-8d4e-5f6a7b8c9d0e", origin, "PATCH",
    "authorization,apikey,x-client-info,content-type,x-tenant-id,prefer,if-match");
  assert.equal(response.status, 204);
  assert.equal(await response.text(), "");
  assert.equal(response.headers.get("access-control-allow-origin"), origin);
  assert.ok(response.headers.get("access-control-allow-methods")!.split(", ").includes("PATCH"));
  const allowed = response.headers.get("access-control-allow-headers")!.split(", ");
  for (const header of ["authorization", "apikey", "x-client-info", "content-type", "x-tenant-id", "prefer", "if-match", "idempotency-key"]) {
    assert.ok(allowed.includes(header), header);
  }
  assert.equal(response.headers.get("access-control-allow-credentials"), null);
});

Deno.test("a foreign origin's preflight is a 403 problem with no grant", async () => {
  const response = await preflight("/properties", foreign, "POST", "authorization,content-type,x-tenant-id");
  assert.equal(response.status, 403);
  assert.equal(response.headers.get("access-control-allow-origin"), null);
  assert.equal((await readProblem(response)).type, "urn:pms:problem:origin-not-allowed");
});

Deno.test("the allowed origin's answers carry the grant and expose ETag and Location; a foreign origin's none", () =>
  withFixture(async ({ tenant }) => {
    const origin = allowedOrigin();
    const { owner, tenantId } = await tenant("cors");
    const created = await call("POST", "/properties", {
      token: owner.token, tenantId, headers: { origin, prefer: "return=representation" },
      body: { name: "Harbour House", timezone: "Europe/Lisbon", currency: "EUR" },
    });
    assert.equal(created.status, 201, await created.clone().text());
    assert.equal(created.headers.get("access-control-allow-origin"), origin);
    const exposed = created.headers.get("access-control-expose-headers")!.split(", ");
    assert.ok(exposed.includes("location") && exposed.includes("etag"), exposed.join(", "));
    assert.ok(created.headers.get("location"));

    const read = await call("GET", new URL(created.headers.get("location")!, `${stack.v1}/`).pathname.replace(/^.*\/v1/, ""), {
      token: owner.token, tenantId, headers: { origin },
    });
    assert.equal(read.status, 200);
    assert.equal(read.headers.get("access-control-allow-origin"), origin);
    assert.ok(read.headers.get("etag"));

    const foreignRead = await call("GET", "/properties", { token: owner.token, tenantId, headers: { origin: foreign } });
    assert.equal(foreignRead.status, 200, "a request without a grant is still answered; the browser withholds it");
    assert.equal(foreignRead.headers.get("access-control-allow-origin"), null);
  }));

Deno.test("errors carry the grant too, so a script can read the problem: an expired session's 401 and an unknown route's 404", async () => {
  const origin = allowedOrigin();
  const unauthorized = await call("GET", "/properties", { token: "not-a-token", headers: { origin } });
  assert.equal(unauthorized.status, 401);
  assert.equal(unauthorized.headers.get("access-control-allow-origin"), origin);
  assert.equal((await readProblem(unauthorized)).type, "urn:pms:problem:unauthorized");
  const missing = await call("GET", "/no-such-route", { headers: { origin } });
  assert.equal(missing.status, 404);
  assert.equal(missing.headers.get("access-control-allow-origin"), origin);
});
