// The Web Push sender on its own, through the fetch it is given: the request a push
// service expects (aes128gcm, TTL, Urgency, Topic, VAPID), what each answer means, the
// size rule, the settings that disable it, and the validation of the subscriptions a
// browser hands over. push-capture.test.ts sends through the stack's push double.
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { decodeJwt, decodeProtectedHeader, jwtVerify } from "jose";
import webpush from "web-push";
import {
  createPushSender,
  endpointPolicyFromEnv,
  parsePushSubscription,
  PUSH_PAYLOAD_MAX_BYTES,
  type PushResult,
  type PushSettings,
  pushSubscriptionSchema,
  vapidSettingsFromEnv,
} from "../../src/notifications/push.ts";
import { decryptPush, newBrowserSubscription, storedSubscription } from "../support/push.ts";

const vapidKeys: { publicKey: string; privateKey: string } = webpush.generateVAPIDKeys();
const vapid = { ...vapidKeys, subject: "mailto:ops@stays.example" };
const NOW = Date.parse("2031-03-04T09:30:00Z");
const ENDPOINT = "https://push.example.net/wpush/v2/abcDEF123";

type Sent = { request: Request; init: RequestInit | undefined };

function sender(answer: (request: Request) => Response | Promise<Response>, settings: Partial<PushSettings> = {}) {
  const sent: Sent[] = [];
  const push = createPushSender({
    vapid,
    ttlSeconds: 86_400,
    timeoutMs: 1000,
    allowLoopbackHttp: false,
    fetch: (input, init) => {
      const request = new Request(input, init);
      sent.push({ request, init });
      return Promise.resolve(answer(request));
    },
    now: () => NOW,
    ...settings,
  });
  return { push, sent };
}

const created = () => new Response(null, { status: 201, headers: { location: "https://push.example.net/m/42" } });
const browser = newBrowserSubscription(ENDPOINT);
const subscription = storedSubscription(browser);

Deno.test("a push is an aes128gcm POST to the endpoint with TTL, Urgency and VAPID; the browser's keys decrypt it", async () => {
  const { push, sent } = sender(created);
  assert.equal(push.disabledReason, null);
  assert.equal(push.vapidPublicKey, vapid.publicKey);
  const payload = JSON.stringify({ title: "Room 12 is ready", body: "Check-in from 15:00 — até já" });
  assert.deepEqual(await push.send(subscription, payload), { outcome: "accepted", location: "https://push.example.net/m/42" });

  assert.equal(sent.length, 1);
  const { request, init } = sent[0]!;
  assert.equal(request.method, "POST");
  assert.equal(request.url, ENDPOINT);
  assert.equal(init?.redirect, "manual", "a redirect is not followed");
  assert.ok(init?.signal instanceof AbortSignal, "the request has a timeout");
  assert.equal(request.headers.get("content-encoding"), "aes128gcm");
  assert.equal(request.headers.get("content-type"), "application/octet-stream");
  assert.equal(request.headers.get("ttl"), "86400");
  assert.equal(request.headers.get("urgency"), "normal");
  assert.equal(request.headers.get("topic"), null);

  // vapid t=<JWT>, k=<public key> (RFC 8292, 3): signed with ES256 by the key it names.
  const authorization = /^vapid t=([^,]+), k=(.+)$/.exec(request.headers.get("authorization") ?? "");
  assert.ok(authorization, request.headers.get("authorization") ?? "no Authorization");
  const [, jwt, k] = authorization;
  assert.equal(k, vapid.publicKey);
  assert.deepEqual(decodeProtectedHeader(jwt!), { typ: "JWT", alg: "ES256" });
  const point = Buffer.from(k!, "base64url");
  const key = await crypto.subtle.importKey("raw", point, { name: "ECDSA", namedCurve: "P-256" }, false, ["verify"]);
  const { payload: claims } = await jwtVerify(jwt!, key, { algorithms: ["ES256"] });
  assert.equal(claims.aud, "https://push.example.net", "aud is the push service's origin");
  assert.equal(claims.sub, vapid.subject);
  const secondsAhead = claims.exp! - Date.now() / 1000;
  assert.ok(secondsAhead > 0 && secondsAhead <= 24 * 3600, `exp ${secondsAhead} s ahead`);

  const body = new Uint8Array(await request.arrayBuffer());
  assert.equal(body.length, payload.length + 16 + 4 + 1 + 65 + 1 + 16 + (Buffer.byteLength(payload) - payload.length));
  assert.equal(decryptPush(Buffer.from(body).toString("base64"), browser.keys), payload);
  // Another browser's keys cannot read it.
  assert.throws(() => decryptPush(Buffer.from(body).toString("base64"), newBrowserSubscription(ENDPOINT).keys));
});

Deno.test("urgency and topic go in their headers; a topic push services would refuse is not sent", async () => {
  const { push, sent } = sender(created);
  await push.send(subscription, "hello", { urgency: "high", topic: "reservation-42_updated" });
  assert.equal(sent[0]!.request.headers.get("urgency"), "high");
  assert.equal(sent[0]!.request.headers.get("topic"), "reservation-42_updated");
  for (const topic of ["", "a".repeat(33), "no spaces", "dots.are.out"]) {
    assert.deepEqual(await push.send(subscription, "hello", { topic }), {
      outcome: "permanent", reason: "the topic is not 1 to 32 characters of the URL-safe base64 alphabet",
    }, JSON.stringify(topic));
  }
  assert.equal(sent.length, 1);
});

Deno.test("the push service's answer: 2xx accepted, 404 and 410 gone, 429 and 5xx transient with Retry-After, other 4xx and redirects permanent", async () => {
  const cases: [Response, PushResult][] = [
    [created(), { outcome: "accepted", location: "https://push.example.net/m/42" }],
    [new Response(null, { status: 202 }), { outcome: "accepted", location: null }],
    [new Response("", { status: 410, statusText: "Gone" }), {
      outcome: "gone", status: 410, reason: "the push service at https://push.example.net answered 410: Gone",
    }],
    [Response.json({ code: 404, errno: 102, error: "Not Found" }, { status: 404 }), {
      outcome: "gone", status: 404,
      reason: 'the push service at https://push.example.net answered 404: {"code":404,"errno":102,"error":"Not Found"}',
    }],
    [new Response("slow down", { status: 429, headers: { "retry-after": "7" } }), {
      outcome: "transient", reason: "the push service at https://push.example.net answered 429: slow down", retryAfterSeconds: 7,
    }],
    [new Response("slow down", { status: 429, headers: { "retry-after": "Tue, 04 Mar 2031 09:32:00 GMT" } }), {
      outcome: "transient", reason: "the push service at https://push.example.net answered 429: slow down", retryAfterSeconds: 120,
    }],
    [new Response("", { status: 500, statusText: "Internal Server Error" }), {
      outcome: "transient", reason: "the push service at https://push.example.net answered 500: Internal Server Error",
      retryAfterSeconds: null,
    }],
    [new Response("maintenance", { status: 503, headers: { "retry-after": "30" } }), {
      outcome: "transient", reason: "the push service at https://push.example.net answered 503: maintenance", retryAfterSeconds: 30,
    }],
    [new Response("bad  encryption\nheaders", { status: 400 }), {
      outcome: "permanent", reason: "the push service at https://push.example.net answered 400: bad encryption headers",
    }],
    [Response.json({ reason: "BadJwtToken" }, { status: 403 }), {
      outcome: "permanent", reason: 'the push service at https://push.example.net answered 403: {"reason":"BadJwtToken"}',
    }],
    [new Response("", { status: 401, statusText: "Unauthorized" }), {
      outcome: "permanent", reason: "the push service at https://push.example.net answered 401: Unauthorized",
    }],
    [new Response("too big", { status: 413 }), {
      outcome: "permanent", reason: "the push service at https://push.example.net answered 413: too big",
    }],
    [new Response(null, { status: 307, headers: { location: "https://elsewhere.example/x" } }), {
      outcome: "permanent", reason: "the push service at https://push.example.net answered 307: no detail",
    }],
  ];
  for (const [response, expected] of cases) {
    const { push } = sender(() => response);
    assert.deepEqual(await push.send(subscription, "hello"), expected, `${response.status}`);
  }
});

Deno.test("a long answer is cut in the reason", async () => {
  const { push } = sender(() => new Response("x".repeat(1000), { status: 400 }));
  const result = await push.send(subscription, "hello");
  assert.equal(result.outcome, "permanent");
  assert.equal(result.outcome === "permanent" ? result.reason : "", `the push service at https://push.example.net answered 400: ${"x".repeat(200)}…`);
});

Deno.test("no answer: transient when no connection was made; unknown when the push service may have taken it, within the timeout", async () => {
  const unreachable = sender(() => Promise.reject(new TypeError("connection refused")));
  const down = await unreachable.push.send(subscription, "hello");
  assert.equal(down.outcome, "transient");
  assert.match(down.outcome === "transient" ? down.reason : "", /^the push service at https:\/\/push\.example\.net did not answer: TypeError: connection refused/);

  // A push service that never answers: the fetch ends when the request's signal does.
  const silent = sender((request) =>
    new Promise((_, reject) => request.signal.addEventListener("abort", () => reject(request.signal.reason)))
  , { timeoutMs: 50 });
  const started = performance.now();
  assert.deepEqual(await silent.push.send(subscription, "hello"), {
    outcome: "unknown", reason: "the push service at https://push.example.net did not answer within 50 ms",
  });
  assert.ok(performance.now() - started < 1000);
});

Deno.test("a payload too large for 4096 encrypted bytes, or an empty one, is refused before anything is sent", async () => {
  const { push, sent } = sender(created);
  assert.equal(PUSH_PAYLOAD_MAX_BYTES, 3993);
  assert.deepEqual(await push.send(subscription, "x".repeat(3993)), { outcome: "accepted", location: "https://push.example.net/m/42" });
  assert.equal((await sent[0]!.request.arrayBuffer()).byteLength, 4096, "the largest payload fills 4096 bytes exactly");
  assert.deepEqual(await push.send(subscription, "x".repeat(3994)), {
    outcome: "permanent",
    reason: "the payload is 3994 bytes (4097 encrypted), more than the 4096 encrypted bytes every push service must take (3993 bytes of payload)",
  });
  // Bytes, not characters: 1997 two-byte characters are 3994 bytes.
  assert.equal((await push.send(subscription, "é".repeat(1997))).outcome, "permanent");
  assert.deepEqual(await push.send(subscription, "x".repeat(100_000)), {
    outcome: "permanent",
    reason: "the payload is 100000 bytes, more than the 4096 encrypted bytes every push service must take (3993 bytes of payload)",
  });
  assert.deepEqual(await push.send(subscription, ""), { outcome: "permanent", reason: "the payload is empty" });
  assert.equal(sent.length, 1);
});

Deno.test("without VAPID settings, or with wrong ones, push is disabled: it says why and sends nothing", async () => {
  const cases: [PushSettings["vapid"], string][] = [
    [null, "push is disabled: VAPID_PUBLIC_KEY, VAPID_PRIVATE_KEY and VAPID_SUBJECT are not set"],
    [{ ...vapid, subject: "" }, "push is disabled: VAPID_SUBJECT is not set"],
    [{ ...vapid, publicKey: "", privateKey: "" }, "push is disabled: VAPID_PUBLIC_KEY and VAPID_PRIVATE_KEY are not set"],
    [{ ...vapid, subject: "ops@stays.example" }, "push is disabled: VAPID_SUBJECT is not a mailto: or https: URL (like mailto:ops@example.com)"],
    [{ ...vapid, subject: "http://stays.example" }, "push is disabled: VAPID_SUBJECT is not a mailto: or https: URL (like mailto:ops@example.com)"],
    [{ ...vapid, publicKey: vapid.publicKey.slice(1) }, "push is disabled: VAPID_PUBLIC_KEY is not an uncompressed P-256 point (65 bytes, starting 0x04)"],
    [{ ...vapid, privateKey: `${vapid.privateKey}=` }, "push is disabled: VAPID_PRIVATE_KEY is not 32 bytes of unpadded base64url"],
    [{ ...vapid, privateKey: webpush.generateVAPIDKeys().privateKey },
      "push is disabled: VAPID_PRIVATE_KEY is not the private half of VAPID_PUBLIC_KEY"],
  ];
  for (const [settings, reason] of cases) {
    const { push, sent } = sender(() => assert.fail("nothing is sent"), { vapid: settings });
    assert.equal(push.disabledReason, reason);
    assert.equal(push.vapidPublicKey, null);
    assert.deepEqual(await push.send(subscription, "hello"), { outcome: "permanent", reason });
    assert.equal(sent.length, 0);
  }
  assert.equal(sender(created, { vapid: { ...vapid, subject: "https://stays.example/contact" } }).push.disabledReason, null);
});

Deno.test("the VAPID settings and the endpoint policy come from the function's environment", () => {
  const env = (values: Record<string, string>) => (name: string) => values[name];
  assert.equal(vapidSettingsFromEnv(env({})), null);
  assert.deepEqual(vapidSettingsFromEnv(env({ VAPID_PUBLIC_KEY: "pub", VAPID_PRIVATE_KEY: "priv", VAPID_SUBJECT: "mailto:a@b.example" })),
    { publicKey: "pub", privateKey: "priv", subject: "mailto:a@b.example" });
  assert.deepEqual(vapidSettingsFromEnv(env({ VAPID_SUBJECT: "mailto:a@b.example" })), { publicKey: "", privateKey: "", subject: "mailto:a@b.example" });
  assert.deepEqual(endpointPolicyFromEnv(env({})), { allowLoopbackHttp: false });
  assert.deepEqual(endpointPolicyFromEnv(env({ PUSH_ALLOW_LOOPBACK_HTTP: "1" })), { allowLoopbackHttp: false });
  assert.deepEqual(endpointPolicyFromEnv(env({ PUSH_ALLOW_LOOPBACK_HTTP: "true" })), { allowLoopbackHttp: true });
});

Deno.test("a browser's PushSubscription.toJSON() is taken; its endpoint must be a push service's https URL", () => {
  const strict = { allowLoopbackHttp: false };
  const local = { allowLoopbackHttp: true };
  assert.deepEqual(parsePushSubscription(browser.subscription, strict), {
    ok: true, subscription: { ...subscription, expirationTime: null },
  });
  const { expirationTime: _, ...withoutExpiry } = browser.subscription;
  assert.deepEqual(parsePushSubscription(withoutExpiry, strict), { ok: true, subscription: { ...subscription, expirationTime: null } });
  assert.deepEqual(parsePushSubscription({ ...browser.subscription, expirationTime: 1_900_000_000_000 }, strict),
    { ok: true, subscription: { ...subscription, expirationTime: 1_900_000_000_000 } });

  const endpointProblem = (endpoint: string, policy = strict) => {
    const parsed = parsePushSubscription({ ...browser.subscription, endpoint }, policy);
    return parsed.ok ? null : parsed.problems.map((problem) => `${problem.path}: ${problem.message}`).join("; ");
  };
  assert.equal(endpointProblem("http://push.example.net/x"), "endpoint: the endpoint is not an https URL");
  assert.equal(endpointProblem("ftp://push.example.net/x"), "endpoint: the endpoint is not an https URL");
  assert.equal(endpointProblem("not a url"), "endpoint: the endpoint is not a URL");
  assert.equal(endpointProblem("https://user:secret@push.example.net/x"), "endpoint: the endpoint carries credentials");
  for (const endpoint of ["https://127.0.0.1/x", "https://10.0.0.7/x", "https://[fd00::1]/x", "https://localhost/x", "https://api.localhost/x", "http://127.0.0.1:54327/push/a"]) {
    assert.match(endpointProblem(endpoint) ?? "", /^endpoint: the endpoint/, endpoint);
  }
  assert.equal(endpointProblem(`https://push.example.net/${"a".repeat(2048)}`), "endpoint: Too big: expected string to have <=2048 characters");
  // The local stack's push double: loopback, over http too, when the policy allows it.
  for (const endpoint of ["http://127.0.0.1:54327/push/a", "http://localhost:54327/push/a", "http://[::1]:54327/push/a", "https://127.0.0.1/x"]) {
    assert.equal(endpointProblem(endpoint, local), null, endpoint);
  }
  assert.equal(endpointProblem("http://10.0.0.7/x", local), "endpoint: the endpoint is not an https URL");
  assert.equal(endpointProblem("https://10.0.0.7/x", local), "endpoint: the endpoint's host is an address or localhost, not a push service");
});

Deno.test("a subscription's keys must be a P-256 point and a 16-byte secret in unpadded base64url; nothing else is taken", () => {
  const strict = { allowLoopbackHttp: false };
  const problems = (keys: Record<string, unknown>, extra: Record<string, unknown> = {}) => {
    const parsed = parsePushSubscription({ ...browser.subscription, keys: { ...browser.subscription.keys, ...keys }, ...extra }, strict);
    return parsed.ok ? [] : parsed.problems.map((problem) => `${problem.path}: ${problem.message}`);
  };
  const point = Buffer.from(subscription.p256dh, "base64url");
  const offCurve = Buffer.from(point);
  offCurve[64]! ^= 1;
  const compressedPrefix = Buffer.from(point);
  compressedPrefix[0] = 0x02;
  assert.deepEqual(problems({ p256dh: offCurve.toString("base64url") }), ["keys.p256dh: The p256dh key is not a point on the P-256 curve."]);
  assert.deepEqual(problems({ p256dh: compressedPrefix.toString("base64url") }),
    ["keys.p256dh: The p256dh key is not an uncompressed P-256 point (65 bytes, starting 0x04)."]);
  assert.deepEqual(problems({ p256dh: point.subarray(0, 33).toString("base64url") }),
    ["keys.p256dh: An uncompressed P-256 public key (65 bytes) in unpadded base64url."]);
  assert.deepEqual(problems({ p256dh: point.toString("base64") }), ["keys.p256dh: An uncompressed P-256 public key (65 bytes) in unpadded base64url."]);
  assert.deepEqual(problems({ p256dh: `${subscription.p256dh}=` }), ["keys.p256dh: An uncompressed P-256 public key (65 bytes) in unpadded base64url."]);
  assert.deepEqual(problems({ auth: Buffer.alloc(15).toString("base64url") }), ["keys.auth: A 16-byte secret in unpadded base64url."]);
  assert.deepEqual(problems({ auth: `${subscription.auth}==` }), ["keys.auth: A 16-byte secret in unpadded base64url."]);
  assert.deepEqual(problems({ auth: 42 }), ["keys.auth: Invalid input: expected string, received number"]);
  assert.deepEqual(problems({ extra: "x" }), ['keys: Unrecognized key: "extra"']);
  assert.deepEqual(problems({}, { expirationTime: -1 }), ["expirationTime: Too small: expected number to be >=0"]);
  assert.deepEqual(problems({}, { options: {} }), [': Unrecognized key: "options"']);
  const missingKeys = parsePushSubscription({ endpoint: ENDPOINT }, strict);
  assert.deepEqual(missingKeys.ok ? [] : missingKeys.problems.map((problem) => problem.path), ["keys"]);
  // The schema a route takes, as a whole.
  assert.equal(pushSubscriptionSchema(strict).safeParse(browser.subscription).success, true);
});

Deno.test("a stored subscription the browser could not have made is refused without sending", async () => {
  const { push, sent } = sender(created);
  const offCurve = Buffer.from(subscription.p256dh, "base64url");
  offCurve[64]! ^= 1;
  assert.deepEqual(await push.send({ ...subscription, p256dh: offCurve.toString("base64url") }, "hello"), {
    outcome: "permanent", reason: "the subscription cannot be used: the p256dh key is not a point on the P-256 curve",
  });
  assert.deepEqual(await push.send({ ...subscription, auth: "c2hvcnQ" }, "hello"), {
    outcome: "permanent", reason: "the subscription cannot be used: the auth secret is 5 bytes, not 16",
  });
  assert.deepEqual(await push.send({ ...subscription, endpoint: "http://127.0.0.1:54327/push/a" }, "hello"), {
    outcome: "permanent", reason: "the subscription cannot be used: the endpoint is not an https URL",
  });
  assert.equal(sent.length, 0);
  // The same endpoint where loopback is allowed (the local stack).
  const local = sender(created, { allowLoopbackHttp: true });
  assert.equal((await local.push.send({ ...subscription, endpoint: "http://127.0.0.1:54327/push/a" }, "hello")).outcome, "accepted");
});

Deno.test("settings a caller cannot mean are refused when the sender is made", () => {
  assert.throws(() => sender(created, { ttlSeconds: -1 }), RangeError);
  assert.throws(() => sender(created, { ttlSeconds: 1.5 }), RangeError);
  assert.throws(() => sender(created, { timeoutMs: 0 }), RangeError);
});

Deno.test("the JWT a push carries is one web-push signs per message, valid for 12 hours", async () => {
  const { push, sent } = sender(created);
  await push.send(subscription, "hello");
  const jwt = /t=([^,]+)/.exec(sent[0]!.request.headers.get("authorization") ?? "")?.[1] ?? "";
  const { exp } = decodeJwt(jwt);
  assert.ok(Math.abs(exp! - (Date.now() / 1000 + 12 * 3600)) < 60, `exp ${exp}`);
});
