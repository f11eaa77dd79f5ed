// What the SMS provider's status callbacks mean as delivery reports (src/webhooks/sms.ts),
// and what the two webhooks refuse before anything reaches the database
// (src/webhooks/handlers.ts, given a database that fails the test if it is touched).
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { createHmac } from "node:crypto";
import { smsStatusCallback } from "../../src/webhooks/schema.ts";
import { readSmsCallback } from "../../src/webhooks/sms.ts";
import { webhookEndpoints, type WebhookSettings } from "../../src/webhooks/handlers.ts";
import { createRouter } from "../../src/http/router.ts";

const TARGET = { tenantId: "0d3c2b1a-5f60-4e7d-8c9b-a1b2c3d4e5f6", notificationId: "6f1f0c2e-8a51-4d0e-9b1a-1d2c3b4a5f60" };
const SID = "SM0123456789abcdef0123456789abcdef";
const ACCOUNT = "AC00000000000000000000000000000001";

function callback(status: string, extra: Record<string, string> = {}) {
  return smsStatusCallback.parse({ AccountSid: ACCOUNT, MessageSid: SID, MessageStatus: status, ...extra });
}

Deno.test("delivered, undelivered and failed are delivery states with the provider's error code; other statuses are events only", () => {
  const at = "2026-11-25T10:00:00.000Z";
  const read = (status: string, extra?: Record<string, string>) => {
    const reading = readSmsCallback(TARGET, callback(status, extra), at);
    assert.equal(reading.kind, "event");
    return reading.kind === "event" ? reading.event : assert.fail();
  };
  assert.deepEqual(read("undelivered", { ErrorCode: "30003" }), {
    tenant_id: TARGET.tenantId, notification_id: TARGET.notificationId, provider_message_id: SID,
    provider_event_id: `${SID}:undelivered`, event: "undelivered", delivery_state: "undelivered", occurred_at: at,
    reason: null, code: "30003", undeliverable: false,
  });
  assert.deepEqual([read("failed", { ErrorCode: "30008", ErrorMessage: "Unknown error" })].map((e) => [e.delivery_state, e.code, e.reason]),
    [["failed", "30008", "Unknown error"]]);
  assert.deepEqual([read("delivered", { ErrorCode: "0" })].map((e) => [e.delivery_state, e.code]), [["delivered", null]]);
  for (const status of ["queued", "sending", "sent", "accepted", "read"]) {
    assert.deepEqual([read(status)].map((e) => [e.delivery_state, e.provider_event_id]), [[null, `${SID}:${status}`]], status);
  }
});

Deno.test("a status callback needs the message, its status and the account, in the provider's forms", () => {
  assert.equal(smsStatusCallback.safeParse({ AccountSid: ACCOUNT, MessageStatus: "sent" }).success, false);
  assert.equal(smsStatusCallback.safeParse({ AccountSid: ACCOUNT, MessageSid: "SM1", MessageStatus: "sent" }).success, false);
  assert.equal(smsStatusCallback.safeParse({ AccountSid: "x", MessageSid: SID, MessageStatus: "sent" }).success, false);
  assert.equal(smsStatusCallback.safeParse({ AccountSid: ACCOUNT, MessageSid: SID, MessageStatus: "Sent!" }).success, false);
  assert.equal(smsStatusCallback.safeParse({ AccountSid: ACCOUNT, MessageSid: SID, MessageStatus: "sent", ErrorCode: "x" }).success, false);
  assert.equal(smsStatusCallback.safeParse({ AccountSid: ACCOUNT, MessageSid: SID, MessageStatus: "sent", SmsSid: SID }).success, true);
});

// ---------------------------------------------------------------- the routes, before the database

const PUBLIC_URL = "https://project.example/functions/v1/api";
const settings: WebhookSettings = {
  sendGridVerificationKey: null, sendGridToleranceSeconds: 300, smsAccountSid: ACCOUNT, smsAuthToken: "token", publicUrl: PUBLIC_URL,
};

function app(overrides: Partial<WebhookSettings> = {}) {
  const logged: string[] = [];
  const untouchable = new Proxy({}, { get: () => assert.fail("the database was touched") });
  const endpoints = webhookEndpoints({
    db: untouchable as never,
    settings: { ...settings, ...overrides },
    now: () => Date.parse("2026-11-25T10:00:00Z"),
    logger: { error: (message) => logged.push(message), warn: (message) => logged.push(message) },
  });
  const handle = createRouter({
    functionName: "api", logger: { error: (message) => logged.push(message), warn: (message) => logged.push(message) },
    routes: endpoints.map((endpoint) => ({ method: endpoint.method, path: endpoint.path, handler: endpoint.handle })),
  });
  return { handle, logged };
}

const sign = (url: string, form: Record<string, string>, token = "token") =>
  createHmac("sha1", Buffer.from(token)).update(url + Object.keys(form).sort().map((k) => k + form[k]).join("")).digest("base64");

function smsPost(form: Record<string, string>, headers: Record<string, string>, query = new URLSearchParams(TARGET).toString()) {
  return new Request(`http://127.0.0.1:9999/api/v1/webhooks/sms?${query}`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
    body: new URLSearchParams(form).toString(),
  });
}

async function problem(response: Response) {
  assert.equal(response.headers.get("content-type"), "application/problem+json");
  const body = await response.json();
  return [response.status, body.type, response.headers.get("www-authenticate")];
}

Deno.test("the SMS webhook checks the signature over its public URL, not the address the function was called at", async () => {
  const { handle } = app();
  const form = { AccountSid: ACCOUNT, MessageSid: SID, MessageStatus: "delivered" };
  const query = new URLSearchParams(TARGET).toString();
  const signedLocally = sign(`http://127.0.0.1:9999/api/v1/webhooks/sms?${query}`, form);
  assert.deepEqual(await problem(await handle(smsPost(form, { "x-twilio-signature": signedLocally }))),
    [401, "urn:pms:problem:invalid-signature", 'Signature realm="pms-webhooks"']);
  assert.deepEqual(await problem(await handle(smsPost(form, {}))), [401, "urn:pms:problem:invalid-signature", 'Signature realm="pms-webhooks"']);
  const otherToken = sign(`${PUBLIC_URL}/v1/webhooks/sms?${query}`, form, "other");
  assert.deepEqual(await problem(await handle(smsPost(form, { "x-twilio-signature": otherToken }))),
    [401, "urn:pms:problem:invalid-signature", 'Signature realm="pms-webhooks"']);

  // Signed over the public URL it passes the signature; this account is another's: 400.
  const stranger = { ...form, AccountSid: "AC99999999999999999999999999999999" };
  const signed = sign(`${PUBLIC_URL}/v1/webhooks/sms?${query}`, stranger);
  assert.deepEqual(await problem(await handle(smsPost(stranger, { "x-twilio-signature": signed }))), [400, "urn:pms:problem:validation", null]);
  // A callback URL that names no notification, signed all the same: 400.
  const bare = sign(`${PUBLIC_URL}/v1/webhooks/sms?tenantId=x`, form);
  assert.deepEqual(await problem(await handle(smsPost(form, { "x-twilio-signature": bare }, "tenantId=x"))), [400, "urn:pms:problem:validation", null]);
});

Deno.test("without the provider's key or token every post is refused, and a key that does not import is logged", async () => {
  const none = app({ smsAuthToken: null });
  const form = { AccountSid: ACCOUNT, MessageSid: SID, MessageStatus: "delivered" };
  const signed = sign(`${PUBLIC_URL}/v1/webhooks/sms?${new URLSearchParams(TARGET)}`, form);
  assert.deepEqual(await problem(await none.handle(smsPost(form, { "x-twilio-signature": signed }))),
    [401, "urn:pms:problem:invalid-signature", 'Signature realm="pms-webhooks"']);
  const unset = await none.handle(new Request("http://x/api/v1/webhooks/sendgrid", { method: "POST", body: "[]" }));
  assert.deepEqual(await problem(unset), [401, "urn:pms:problem:invalid-signature", 'Signature realm="pms-webhooks"']);
  const broken = app({ sendGridVerificationKey: "bm90IGEga2V5" });
  const refused = await broken.handle(new Request("http://x/api/v1/webhooks/sendgrid", { method: "POST", body: "[]" }));
  assert.equal(refused.status, 401);
  assert.deepEqual(broken.logged, ["the SENDGRID_WEBHOOK_VERIFICATION_KEY setting is not a usable key; every post is refused"]);
});

Deno.test("a body past the limit is 413 before any signature is checked", async () => {
  const { handle } = app();
  const big = new Request("http://x/api/v1/webhooks/sms", {
    method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "a=".padEnd(70_000, "x"),
  });
  assert.deepEqual(await problem(await handle(big)), [413, "urn:pms:problem:payload-too-large", null]);
  const get = await handle(new Request("http://x/api/v1/webhooks/sendgrid"));
  assert.equal(get.status, 405);
  assert.equal(get.headers.get("allow"), "POST");
});
