// The Web Push service double speaks RFC 8030 with VAPID (RFC 8292) as a push service
// does to the push sender: it verifies the VAPID JWT against the key it names, checks the
// message's headers and size, answers 201 with the message's Location, and records what
// it took, so a test decrypts it with the browser's keys; scripted answers stand for a
// subscription that is gone or a service that throttles.
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { importJWK, SignJWT } from "jose";
import webpush from "web-push";
import { createPushSender } from "../../src/notifications/push.ts";
import { decryptPush, newBrowserSubscription, pushService, stackPushSender, storedSubscription } from "../support/push.ts";
import { stack } from "../support/stack.ts";

type VapidKeys = { publicKey: string; privateKey: string };

const stackKeys = (): VapidKeys => ({ publicKey: stack.notifications.push.vapidPublicKey, privateKey: stack.notifications.push.vapidPrivateKey });
const otherKeys: VapidKeys = webpush.generateVAPIDKeys();

// A push's request as the sender makes it (web-push's encryption and VAPID), for a test to
// change one thing of before sending it by hand.
function pushRequest(endpoint: string, payload = "hello") {
  const browser = newBrowserSubscription(endpoint);
  const details = webpush.generateRequestDetails(browser.subscription, payload, {
    vapidDetails: { subject: stack.notifications.push.vapidSubject, ...stackKeys() },
    TTL: 60,
    contentEncoding: "aes128gcm",
  });
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(details.headers as Record<string, string | number>)) {
    if (name.toLowerCase() !== "content-length") headers[name.toLowerCase()] = String(value);
  }
  return { headers, body: new Uint8Array(details.body as Uint8Array) };
}

async function post(endpoint: string, headers: Record<string, string>, body: Uint8Array<ArrayBuffer> | null) {
  const response = await fetch(endpoint, { method: "POST", headers, body });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) as { code: number; error: string; message: string } : null };
}

// A VAPID JWT with claims web-push would not make (it refuses an exp over 24 hours and a
// sub that is not a URL), signed with ES256 by `keys`.
async function vapidJwt(keys: VapidKeys, claims: Record<string, unknown>): Promise<string> {
  const point = Buffer.from(keys.publicKey, "base64url");
  const privateKey = await importJWK({
    kty: "EC", crv: "P-256",
    x: point.subarray(1, 33).toString("base64url"), y: point.subarray(33).toString("base64url"), d: keys.privateKey,
  }, "ES256");
  return await new SignJWT(claims).setProtectedHeader({ typ: "JWT", alg: "ES256" }).sign(privateKey);
}

const inAnHour = () => Math.floor(Date.now() / 1000) + 3600;

Deno.test("push capture: a push sent through the sender is taken with 201 and a Location, recorded, and decrypts to the exact payload", async () => {
  const { token, endpoint } = pushService.endpoint();
  const browser = newBrowserSubscription(endpoint);
  const payload = JSON.stringify({ title: "Check-in at 15:00", body: "Quarto 12 está pronto — door code 4829 🔑" });
  const sent = await stackPushSender({ ttlSeconds: 600 }).send(storedSubscription(browser), payload, { urgency: "high", topic: "checkin" });
  assert.equal(sent.outcome, "accepted", JSON.stringify(sent));
  const location = sent.outcome === "accepted" ? sent.location ?? "" : "";
  assert.match(location, new RegExp(`^${RegExp.escape(stack.pushUrl)}/message/[0-9a-f-]{36}$`));

  const [message, ...more] = await pushService.messages(token);
  assert.deepEqual(more, []);
  assert.deepEqual({ ...message!, receivedAt: "", bodyBase64: "" }, {
    receivedAt: "", token, status: 201, refusal: null, messageId: location.split("/").pop(),
    ttl: "600", urgency: "high", topic: "checkin", contentEncoding: "aes128gcm",
    vapidPublicKey: stack.notifications.push.vapidPublicKey, vapidSubject: stack.notifications.push.vapidSubject, bodyBase64: "",
  });
  assert.equal(decryptPush(message!.bodyBase64, browser.keys), payload);
});

Deno.test("push capture: VAPID is verified as RFC 8292 says: no vapid credentials 401, invalid ones 403", async () => {
  const { token, endpoint } = pushService.endpoint();
  const valid = pushRequest(endpoint);
  const origin = new URL(endpoint).origin;
  const withAuthorization = (authorization: string | null) => {
    const headers = { ...valid.headers };
    if (authorization === null) delete headers.authorization;
    else headers.authorization = authorization;
    return headers;
  };
  const [, jwt] = /^vapid t=([^,]+), k=/.exec(valid.headers.authorization!)!;
  const signedBy = (keys: VapidKeys, claims: Record<string, unknown>) =>
    vapidJwt(keys, claims).then((t) => `vapid t=${t}, k=${keys.publicKey}`);
  const subject = stack.notifications.push.vapidSubject;

  const unauthenticated = await post(endpoint, withAuthorization(null), valid.body);
  assert.equal(unauthenticated.status, 401);
  assert.equal(unauthenticated.headers.get("www-authenticate"), "vapid");
  assert.equal((await post(endpoint, withAuthorization(`WebPush ${jwt}`), valid.body)).status, 401, "the draft's WebPush scheme");
  assert.equal((await post(endpoint, withAuthorization(`Bearer ${jwt}`), valid.body)).status, 401);

  const forbidden: [string, string, RegExp][] = [
    ["no k", `vapid t=${jwt}`, /need both t .* and k/],
    ["k another key than the one that signed", `vapid t=${jwt}, k=${otherKeys.publicKey}`, /^the JWT is not valid for k: signature verification failed/],
    ["k not a point", `vapid t=${jwt}, k=${otherKeys.privateKey}`, /^k is not an uncompressed P-256 public key/],
    ["aud another origin",
      webpush.getVapidHeaders("https://push.example.net", subject, stackKeys().publicKey, stackKeys().privateKey, "aes128gcm").Authorization,
      /^the JWT's aud is "https:\/\/push\.example\.net", not this push service's origin/],
    ["exp passed",
      webpush.getVapidHeaders(origin, subject, stackKeys().publicKey, stackKeys().privateKey, "aes128gcm", Math.floor(Date.now() / 1000) - 60).Authorization,
      /^the JWT is not valid for k: .*"exp" claim timestamp check failed/],
    ["exp more than 24 hours ahead", await signedBy(stackKeys(), { aud: origin, sub: subject, exp: Math.floor(Date.now() / 1000) + 25 * 3600 }),
      /^the JWT's exp is more than 24 hours ahead$/],
    ["no exp", await signedBy(stackKeys(), { aud: origin, sub: subject }), /"exp" claim/],
    ["sub not a URL", await signedBy(stackKeys(), { aud: origin, sub: "ops@pms.test", exp: inAnHour() }), /^the JWT's sub "ops@pms.test" is not a mailto: or https: URL$/],
    ["sub http", await signedBy(stackKeys(), { aud: origin, sub: "http://pms.test", exp: inAnHour() }), /is not a mailto: or https: URL$/],
    ["no sub", await signedBy(stackKeys(), { aud: origin, exp: inAnHour() }), /^the JWT's sub undefined is not a mailto: or https: URL$/],
  ];
  for (const [label, authorization, message] of forbidden) {
    const refused = await post(endpoint, withAuthorization(authorization), valid.body);
    assert.equal(refused.status, 403, label);
    assert.deepEqual({ ...refused.body!, message: "" }, { code: 403, error: "Forbidden", message: "" }, label);
    assert.match(refused.body!.message, message, label);
  }
  // Any key that signs well, with the claims right, is taken by a subscription made without one.
  const anotherServer = await signedBy(otherKeys, { aud: origin, sub: "https://pms.test/contact", exp: inAnHour() });
  assert.equal((await post(endpoint, withAuthorization(anotherServer), valid.body)).status, 201);
  assert.equal((await post(endpoint, valid.headers, valid.body)).status, 201);

  const attempts = await pushService.requests(token);
  assert.deepEqual(attempts.map((attempt) => attempt.status), [401, 401, 401, ...forbidden.map(() => 403), 201, 201]);
  assert.equal(attempts.filter((attempt) => attempt.refusal === null).length, 2);
  assert.equal((await pushService.messages(token)).length, 2);
});

Deno.test("push capture: a subscription made with an application server key takes pushes signed with that key alone", async () => {
  const restricted = await pushService.subscribe(stack.notifications.push.vapidPublicKey);
  assert.match(restricted.endpoint, new RegExp(`^${RegExp.escape(stack.pushUrl)}/push/${restricted.token}$`));
  const browser = newBrowserSubscription(restricted.endpoint);
  assert.equal((await stackPushSender().send(storedSubscription(browser), "for the right server")).outcome, "accepted");
  const stranger = stackPushSender({ vapid: { ...otherKeys, subject: "mailto:someone@else.example" } });
  assert.deepEqual(await stranger.send(storedSubscription(browser), "from another server"), {
    outcome: "permanent",
    reason: `the push service at ${stack.pushUrl} answered 403: ` +
      '{"code":403,"error":"Forbidden","message":"k is not the application server key this subscription was made with"}',
  });
  const messages = await pushService.messages(restricted.token);
  assert.deepEqual(messages.map((message) => decryptPush(message.bodyBase64, browser.keys)), ["for the right server"]);
});

Deno.test("push capture: the message's headers and size are checked as RFC 8030 says", async () => {
  const { token, endpoint } = pushService.endpoint();
  const valid = pushRequest(endpoint);
  const without = (name: string) => Object.fromEntries(Object.entries(valid.headers).filter(([header]) => header !== name));
  const cases: [string, Record<string, string>, Uint8Array<ArrayBuffer> | null, number, RegExp][] = [
    ["no TTL", without("ttl"), valid.body, 400, /needs a TTL header/],
    ["a TTL that is not whole seconds", { ...valid.headers, ttl: "1.5" }, valid.body, 400, /needs a TTL header/],
    ["an unknown Urgency", { ...valid.headers, urgency: "urgent" }, valid.body, 400, /^Urgency urgent is not/],
    ["a Topic too long", { ...valid.headers, topic: "t".repeat(33) }, valid.body, 400, /^a Topic is 1 to 32/],
    ["a body of 4097 bytes", valid.headers, new Uint8Array(4097), 413, /^the body is 4097 bytes, more than 4096$/],
    ["the draft's aesgcm", { ...valid.headers, "content-encoding": "aesgcm" }, valid.body, 400, /needs Content-Encoding: aes128gcm/],
    ["no Content-Encoding", without("content-encoding"), valid.body, 400, /needs Content-Encoding: aes128gcm/],
    ["an aes128gcm header without the sender's key", valid.headers, valid.body.slice(0, 20), 400, /shorter than an aes128gcm header/],
    ["a key id that is no public key", valid.headers, Uint8Array.from([...valid.body.subarray(0, 20), 16, ...valid.body.subarray(21)]), 400,
      /key id is not the sender's/],
  ];
  for (const [label, headers, body, status, message] of cases) {
    const refused = await post(endpoint, headers, body);
    assert.equal(refused.status, status, label);
    assert.match(refused.body!.message, message, label);
  }
  // A push without a body (a tickle) needs no Content-Encoding; the TTL kept is echoed.
  const tickle = await post(endpoint, without("content-encoding"), null);
  assert.equal(tickle.status, 201);
  assert.equal(tickle.headers.get("ttl"), "60");
  const requests = await pushService.requests(token);
  assert.deepEqual(requests.map((attempt) => attempt.status), [...cases.map(([, , , status]) => status), 201]);
  assert.ok(requests.slice(0, -1).every((attempt) => attempt.refusal !== null && attempt.messageId === null));

  const get = await fetch(endpoint);
  assert.equal(get.status, 405);
  assert.equal(get.headers.get("allow"), "POST");
  await get.body?.cancel();
});

Deno.test("push capture: scripted answers for one subscription (410, then 201 again; 429 with Retry-After; 500) come in order, and touch no other", async () => {
  const sender = stackPushSender();
  const { token, endpoint } = pushService.endpoint();
  const other = pushService.endpoint();
  const browser = newBrowserSubscription(endpoint);
  const bystander = newBrowserSubscription(other.endpoint);

  assert.deepEqual(await pushService.script(token, { status: 410 }), { pending: 1 });
  assert.equal((await sender.send(storedSubscription(bystander), "not scripted")).outcome, "accepted", "another subscription keeps its 201");
  const gone = await sender.send(storedSubscription(browser), "first");
  assert.deepEqual(gone, {
    outcome: "gone", status: 410,
    reason: `the push service at ${stack.pushUrl} answered 410: {"code":410,"error":"Scripted","message":"scripted 410"}`,
  });
  assert.equal((await sender.send(storedSubscription(browser), "second")).outcome, "accepted", "then 201 again");

  await pushService.script(token, { status: 429, headers: { "retry-after": "3" } }, { status: 500 }, { status: 404, body: { reason: "Unregistered" } });
  const throttled = await sender.send(storedSubscription(browser), "third");
  assert.equal(throttled.outcome === "transient" ? throttled.retryAfterSeconds : "not transient", 3);
  const failing = await sender.send(storedSubscription(browser), "fourth");
  assert.deepEqual(failing.outcome === "transient" ? [failing.retryAfterSeconds] : failing, [null]);
  assert.deepEqual(await sender.send(storedSubscription(browser), "fifth"), {
    outcome: "gone", status: 404, reason: `the push service at ${stack.pushUrl} answered 404: {"reason":"Unregistered"}`,
  });

  assert.deepEqual((await pushService.requests(token)).map((attempt) => attempt.status), [410, 201, 429, 500, 404]);
  const [taken] = await pushService.messages(token);
  assert.equal(decryptPush(taken!.bodyBase64, browser.keys), "second");
  assert.deepEqual((await pushService.requests(other.token)).map((attempt) => attempt.status), [201]);
});

Deno.test("push capture: a script without a token answers the next push to any subscription; a bad script is 400; forgetting works per subscription", async () => {
  const sender = stackPushSender();
  const first = pushService.endpoint();
  const second = pushService.endpoint();
  await pushService.script(undefined, { status: 503, headers: { "retry-after": "1" } });
  const unavailable = await sender.send(storedSubscription(newBrowserSubscription(first.endpoint)), "hello");
  assert.equal(unavailable.outcome, "transient");
  assert.equal((await sender.send(storedSubscription(newBrowserSubscription(second.endpoint)), "hello")).outcome, "accepted");

  for (const script of [{ responses: [{}] }, { token: 7, responses: [] }, {}]) {
    const bad = await fetch(`${stack.pushUrl}/_capture/script`, { method: "POST", body: JSON.stringify(script) });
    assert.equal(bad.status, 400, JSON.stringify(script));
    await bad.body?.cancel();
  }
  const badKey = await fetch(`${stack.pushUrl}/_capture/subscriptions`, { method: "POST", body: JSON.stringify({ applicationServerKey: "nope" }) });
  assert.equal(badKey.status, 400);
  await badKey.body?.cancel();

  await pushService.forgetMessages(first.token);
  assert.deepEqual(await pushService.requests(first.token), []);
  assert.equal((await pushService.requests(second.token)).length, 1, "another subscription's pushes are kept");
});

Deno.test("push capture: a push service that does not answer in time leaves the outcome unknown: it may have taken the push", async () => {
  const { token, endpoint } = pushService.endpoint();
  await pushService.script(token, { status: 201, delayMs: 500 });
  const sender = createPushSender({
    vapid: { ...stackKeys(), subject: stack.notifications.push.vapidSubject },
    ttlSeconds: 60, timeoutMs: 100, allowLoopbackHttp: true, fetch, now: Date.now,
  });
  assert.deepEqual(await sender.send(storedSubscription(newBrowserSubscription(endpoint)), "late"), {
    outcome: "unknown", reason: `the push service at ${stack.pushUrl} did not answer within 100 ms`,
  });
});
