// CORS on its own: the setting's parsing, and the router's preflights and grants for a
// listed origin, a foreign one, `*`, and no setting at all. cors.test.ts sends the same
// through the gateway to the running function.
import assert from "node:assert/strict";
import { corsAllowedRequestHeaders, corsPolicyFromSetting, type CorsPolicy } from "../../src/http/cors.ts";
import { HttpError } from "../../src/http/problem.ts";
import { createRouter } from "../../src/http/router.ts";
import type { Problem } from "../support/stack.ts";

const app = "https://frontdesk.example";
const foreign = "https://evil.example";

function router(cors?: CorsPolicy) {
  return createRouter({
    functionName: "api",
    cors,
    logger: { error: (message) => assert.fail(message), warn: (message) => assert.fail(message) },
    routes: [
      { method: "GET", path: "/v1/units", handler: () => Response.json([], { headers: { etag: '"1"' } }) },
      { method: "POST", path: "/v1/units", handler: () => new Response(null, { status: 201, headers: { location: "/v1/units/1" } }) },
      { method: "GET", path: "/v1/units/{id}", handler: () => { throw new HttpError("not-found", "No such unit."); } },
      // A Response whose headers cannot be changed, as fetch's are.
      { method: "GET", path: "/v1/relayed", handler: () => Response.redirect("https://elsewhere.example/", 302) },
    ],
  });
}

const preflight = (origin: string, method = "POST", path = "/api/v1/units") =>
  new Request(`http://function${path}`, {
    method: "OPTIONS",
    headers: { origin, "access-control-request-method": method, "access-control-request-headers": "authorization, x-tenant-id" },
  });

Deno.test("the setting: a list of origins, `*` alone, or nothing; anything else stops the start", () => {
  assert.deepEqual(corsPolicyFromSetting(undefined), { allowedOrigins: new Set() });
  assert.deepEqual(corsPolicyFromSetting(" "), { allowedOrigins: new Set() });
  assert.deepEqual(corsPolicyFromSetting("*"), { allowedOrigins: "any" });
  assert.deepEqual(
    corsPolicyFromSetting(`${app}, http://127.0.0.1:54323/`),
    { allowedOrigins: new Set([app, "http://127.0.0.1:54323"]) },
  );
  for (const bad of ["*, https://a.example", "frontdesk.example", "https://a.example/app", "ftp://a.example", "https://a.example?x=1"]) {
    assert.throws(() => corsPolicyFromSetting(bad), /CORS_ALLOWED_ORIGINS/, bad);
  }
});

Deno.test("a listed origin's preflight is granted the path's methods and the headers clients send, with no credentials", async () => {
  const handle = router(corsPolicyFromSetting(app));
  const response = await handle(preflight(app));
  assert.equal(response.status, 204);
  assert.equal(response.headers.get("access-control-allow-origin"), app);
  assert.deepEqual(response.headers.get("access-control-allow-methods")!.split(", ").sort(), ["GET", "POST"]);
  assert.deepEqual(response.headers.get("access-control-allow-headers")!.split(", "), [...corsAllowedRequestHeaders]);
  for (const header of ["authorization", "apikey", "x-client-info", "content-type", "x-tenant-id", "prefer", "if-match", "idempotency-key"]) {
    assert.ok(corsAllowedRequestHeaders.includes(header as typeof corsAllowedRequestHeaders[number]), header);
  }
  assert.equal(response.headers.get("access-control-max-age"), "7200");
  assert.equal(response.headers.get("vary"), "Origin");
  assert.equal(response.headers.get("access-control-allow-credentials"), null);
  assert.equal(await response.text(), "");
  // A path with a parameter, with the function's name or without it.
  const one = await handle(preflight(app, "GET", "/v1/units/42"));
  assert.equal(one.status, 204);
  assert.equal(one.headers.get("access-control-allow-methods"), "GET");
});

Deno.test("a foreign origin's preflight is a 403 problem with no grant; an unknown path's a 404", async () => {
  const handle = router(corsPolicyFromSetting(app));
  const refused = await handle(preflight(foreign));
  assert.equal(refused.status, 403);
  assert.equal(refused.headers.get("access-control-allow-origin"), null);
  assert.equal(refused.headers.get("access-control-allow-methods"), null);
  const problem = await refused.json() as Problem;
  assert.equal(problem.type, "urn:pms:problem:origin-not-allowed");
  assert.equal(problem.status, 403);
  const unknown = await handle(preflight(app, "GET", "/v1/nowhere"));
  assert.equal(unknown.status, 404);
  assert.equal(unknown.headers.get("access-control-allow-origin"), null);
  assert.equal((await unknown.json() as Problem).type, "urn:pms:problem:not-found");
});

Deno.test("every answer to a listed origin carries the grant and exposes the headers clients read, errors included", async () => {
  const handle = router(corsPolicyFromSetting(`${app},https://other.example`));
  const listed = await handle(new Request("http://function/api/v1/units", { headers: { origin: app } }));
  assert.equal(listed.status, 200);
  assert.equal(listed.headers.get("access-control-allow-origin"), app);
  assert.equal(listed.headers.get("vary"), "Origin");
  const exposed = listed.headers.get("access-control-expose-headers")!.split(", ");
  for (const header of ["etag", "location", "retry-after", "ratelimit", "ratelimit-policy"]) assert.ok(exposed.includes(header), header);
  const created = await handle(new Request("http://function/api/v1/units", { method: "POST", headers: { origin: app } }));
  assert.equal(created.status, 201);
  assert.equal(created.headers.get("access-control-allow-origin"), app);
  const missing = await handle(new Request("http://function/api/v1/units/9", { headers: { origin: app } }));
  assert.equal(missing.status, 404);
  assert.equal(missing.headers.get("access-control-allow-origin"), app);
  const wrongMethod = await handle(new Request("http://function/api/v1/units", { method: "PUT", headers: { origin: app } }));
  assert.equal(wrongMethod.status, 405);
  assert.equal(wrongMethod.headers.get("access-control-allow-origin"), app);
  const relayed = await handle(new Request("http://function/api/v1/relayed", { headers: { origin: app } }));
  assert.equal(relayed.status, 302);
  assert.equal(relayed.headers.get("access-control-allow-origin"), app);
  assert.equal(relayed.headers.get("location"), "https://elsewhere.example/");
});

Deno.test("a foreign origin's request is answered as it would be, with no grant; without Origin nothing changes", async () => {
  const handle = router(corsPolicyFromSetting(app));
  const foreignGet = await handle(new Request("http://function/api/v1/units", { headers: { origin: foreign } }));
  assert.equal(foreignGet.status, 200);
  assert.equal(foreignGet.headers.get("access-control-allow-origin"), null);
  assert.equal(foreignGet.headers.get("access-control-expose-headers"), null);
  assert.equal(foreignGet.headers.get("vary"), "Origin");
  const serverSide = await handle(new Request("http://function/api/v1/units"));
  assert.equal(serverSide.headers.get("access-control-allow-origin"), null);
});

Deno.test("`*` grants every origin with `*` and never echoes one", async () => {
  const handle = router(corsPolicyFromSetting("*"));
  const granted = await handle(preflight(foreign));
  assert.equal(granted.status, 204);
  assert.equal(granted.headers.get("access-control-allow-origin"), "*");
  assert.equal(granted.headers.get("vary"), null);
  const get = await handle(new Request("http://function/api/v1/units", { headers: { origin: foreign } }));
  assert.equal(get.headers.get("access-control-allow-origin"), "*");
  assert.equal(get.headers.get("access-control-allow-credentials"), null);
});

Deno.test("with no setting no origin is granted; a plain OPTIONS (no preflight) is answered with Allow", async () => {
  const handle = router();
  const refused = await handle(preflight(app));
  assert.equal(refused.status, 403);
  assert.equal(refused.headers.get("access-control-allow-origin"), null);
  const get = await handle(new Request("http://function/api/v1/units", { headers: { origin: app } }));
  assert.equal(get.headers.get("access-control-allow-origin"), null);
  assert.equal(get.headers.get("vary"), null);
  const plain = await handle(new Request("http://function/api/v1/units", { method: "OPTIONS" }));
  assert.equal(plain.status, 204);
  assert.deepEqual(plain.headers.get("allow")!.split(", ").sort(), ["GET", "OPTIONS", "POST"]);
  assert.equal(plain.headers.get("access-control-allow-origin"), null);
});
