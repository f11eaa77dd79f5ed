// The push routes' own decisions, with no database (test/support/recording-scope.ts): the
// VAPID public key route with and without a key, and what a registration refuses before it
// writes anything: a body that is not a browser's subscription (400), a key off the curve
// and an endpoint no push may go to (422). test/push/subscriptions.test.ts runs the routes
// on the stack.
import assert from "node:assert/strict";
import type { Endpoint } from "../../src/http/endpoint.ts";
import { HttpError, problemResponse } from "../../src/http/problem.ts";
import { pushEndpoints } from "../../src/push/handlers.ts";
import { endpointRefusal, userAgentOf } from "../../src/push/schema.ts";
import type { PushSettings } from "../../src/push/settings.ts";
import { recordingScope } from "../support/recording-scope.ts";
import { base64url, browserSubscription, p256PublicKey } from "../support/push.ts";

const TENANT = "7c9e6679-7425-40de-944b-e07fc1f90ae7";

function route(settings: PushSettings, method: string, path: string): Endpoint {
  const found = pushEndpoints(recordingScope("staff"), settings).find((endpoint) => endpoint.method === method && endpoint.path === path);
  assert.ok(found, `${method} ${path}`);
  return found;
}

const unconfigured: PushSettings = { vapidPublicKey: null, allowLoopbackPushEndpoints: false };

async function problemOf(response: Response) {
  assert.equal(response.headers.get("content-type"), "application/problem+json");
  return await response.json() as { type: string; status: number; detail: string; errors?: { path: string }[] };
}

// The router turns a thrown problem into its answer; the handler alone throws it.
async function outcome(handle: Promise<Response>): Promise<Response> {
  try {
    return await handle;
  } catch (error) {
    if (error instanceof HttpError) return problemResponse(error);
    throw error;
  }
}

Deno.test("GET /v1/push/public-key: the configured key; without one, 404 push-not-configured", async () => {
  const key = base64url(await p256PublicKey());
  const request = () => new Request("http://function/api/v1/push/public-key", { headers: { authorization: "Bearer token" } });
  const configured = await route({ ...unconfigured, vapidPublicKey: key }, "GET", "/v1/push/public-key").handle(request(), {});
  assert.equal(configured.status, 200);
  assert.deepEqual(await configured.json(), { publicKey: key });

  const missing = await outcome(Promise.resolve(route(unconfigured, "GET", "/v1/push/public-key").handle(request(), {})));
  assert.equal(missing.status, 404);
  const problem = await problemOf(missing);
  assert.equal(problem.type, "urn:pms:problem:push-not-configured");
  assert.match(problem.detail, /no VAPID key/);
});

function post(body: unknown): Request {
  return new Request("http://function/api/v1/push/subscriptions", {
    method: "POST",
    headers: { authorization: "Bearer token", "x-tenant-id": TENANT, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

async function register(settings: PushSettings, body: unknown) {
  return await problemOf(await outcome(Promise.resolve(route(settings, "POST", "/v1/push/subscriptions").handle(post(body), {}))));
}

Deno.test("POST /v1/push/subscriptions: 422 for a key of the right form off the curve, naming keys.p256dh", async () => {
  const browser = await browserSubscription();
  const offCurve = new Uint8Array(65).fill(0x01);
  offCurve[0] = 0x04;
  const problem = await register(unconfigured, { ...browser, keys: { ...browser.keys, p256dh: base64url(offCurve) } });
  assert.equal(problem.type, "urn:pms:problem:unprocessable");
  assert.deepEqual(problem.errors?.map((error) => error.path), ["keys.p256dh"]);
  // With another field wrong too, the body is not what the document describes: a 400.
  const both = await register(unconfigured, { ...browser, keys: { ...browser.keys, p256dh: base64url(offCurve) }, extra: 1 });
  assert.equal(both.type, "urn:pms:problem:validation");
});

Deno.test("POST /v1/push/subscriptions: 422 naming endpoint for one no push may go to, before anything is written", async () => {
  const browser = await browserSubscription();
  for (const endpoint of ["http://push.example.test/send/1", "https://203.0.113.7/send/1", "https://[2001:db8::1]/send/1",
    "https://user:secret@push.example.test/send/1", "https://127.0.0.1:9443/send/1", "http://localhost:8080/send/1"]) {
    const problem = await register(unconfigured, { ...browser, endpoint });
    assert.equal(problem.type, "urn:pms:problem:unprocessable", endpoint);
    assert.deepEqual(problem.errors?.map((error) => error.path), ["endpoint"], endpoint);
  }
});

Deno.test("endpointRefusal: https by host name only; this machine only where loopback endpoints are allowed", () => {
  const allowed = ["https://fcm.googleapis.com/fcm/send/abc", "https://updates.push.services.mozilla.com/wpush/v2/x",
    "https://web.push.apple.com/Q1", "https://push.example.test:8443/x?y=1"];
  for (const endpoint of allowed) {
    assert.equal(endpointRefusal(endpoint, false), null, endpoint);
    assert.equal(endpointRefusal(endpoint, true), null, endpoint);
  }
  const loopback = ["http://127.0.0.1:54400/push/1", "https://127.0.0.1/x", "http://localhost/x", "http://push.localhost/x",
    "http://[::1]:8080/x", "http://0x7f.1/x", "http://2130706433/x", "http://127.1.2.3/x"];
  for (const endpoint of loopback) {
    assert.equal(endpointRefusal(endpoint, true), null, endpoint);
    assert.match(endpointRefusal(endpoint, false) ?? "", /names this machine/, endpoint);
  }
  const refusals: [string, RegExp][] = [
    ["http://push.example.test/x", /https/],
    ["https://10.0.0.8/x", /host name/],
    ["https://169.254.169.254/latest", /host name/],
    ["https://[fd00::1]/x", /host name/],
    ["https://a:b@push.example.test/x", /user name or password/],
    ["https://:b@push.example.test/x", /user name or password/],
    ["https://[not-an-address/x", /not a URL/],
  ];
  for (const [endpoint, why] of refusals) {
    assert.match(endpointRefusal(endpoint, true) ?? "", why, endpoint);
    assert.match(endpointRefusal(endpoint, false) ?? "", why, endpoint);
  }
});

Deno.test("userAgentOf: the header without control characters, at most 500 characters; none is null", () => {
  const of = (value?: string) => userAgentOf(new Request("http://x/", value === undefined ? {} : { headers: { "user-agent": value } }));
  assert.equal(of(undefined), null);
  assert.equal(of("Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0"), "Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0");
  assert.equal(of("a\tb"), "ab");
  assert.equal(of("   "), null);
  assert.equal(of("x".repeat(900))?.length, 500);
});
