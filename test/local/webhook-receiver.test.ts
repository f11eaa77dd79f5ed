// The webhook receiver double receives what the webhook sender posts (src/webhook-delivery:
// signed with the subscription's secrets, posted to the checked address) as a tenant's
// endpoint would: it verifies the Standard Webhooks signature with the specification's own
// library against the secrets a test registered, answers 401 when it does not verify,
// records every webhook, and answers as scripted: failures, throttling, gone, redirects,
// and answers later than the sender waits.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { postWebhook, type WebhookPostResult } from "../../src/webhook-delivery/endpoint.ts";
import { signWebhook } from "../../src/webhook-delivery/signing.ts";
import { stack } from "../support/stack.ts";
import { webhookReceiver } from "../support/webhook-receiver.ts";

const newSecret = () => `whsec_${randomBytes(32).toString("base64")}`;
const event = (id: string) => ({ id, type: "reservation.created", data: { reservation: { id: "r1", guestName: "Zoë 🏨" } } });

// A webhook as the worker sends it: signed with `secrets`, posted with the stack's policy.
async function deliver(
  url: string,
  secrets: string[],
  options: { body?: string; at?: Date; timeoutMs?: number; trustedCertificates?: string[] } = {},
) {
  const id = `msg_${crypto.randomUUID()}`;
  const body = options.body ?? JSON.stringify(event(id));
  const headers = signWebhook(id, options.at ?? new Date(), body, secrets);
  const result = await postWebhook({
    url,
    headers,
    body,
    policy: { allowLoopbackHttp: stack.webhooksAllowLoopbackEndpoints },
    timeoutMs: options.timeoutMs ?? 5000,
    ...(options.trustedCertificates ? { trustedCertificates: options.trustedCertificates } : {}),
  });
  return { id, body, headers, result };
}

function statusOf(result: WebhookPostResult): number | string {
  return result.outcome === "response" ? result.status : `${result.outcome}: ${result.reason}`;
}

Deno.test("webhook receiver: a webhook signed with the registered secret is verified, answered 204 and recorded as sent", async () => {
  const { name, url } = webhookReceiver.endpoint();
  const secret = newSecret();
  await webhookReceiver.register(name, [secret]);
  const { id, body, headers, result } = await deliver(`${url}?tenant=t1`, [secret]);
  assert.equal(statusOf(result), 204);

  const [received, ...more] = await webhookReceiver.requests(name);
  assert.deepEqual(more, []);
  assert.deepEqual({ ...received!, receivedAt: "", headers: {} }, {
    receivedAt: "", name, query: "?tenant=t1", headers: {}, body, json: JSON.parse(body),
    verified: true, verifiedWith: [secret], refusal: null, status: 204, tls: false,
  });
  assert.ok(Math.abs(Date.parse(received!.receivedAt) - Date.now()) < 60_000);
  assert.equal(received!.headers["webhook-id"], id);
  assert.equal(received!.headers["webhook-timestamp"], headers["webhook-timestamp"]);
  assert.equal(received!.headers["webhook-signature"], headers["webhook-signature"]);
  assert.equal(received!.headers["content-type"], "application/json");
  assert.equal(received!.headers["user-agent"], "pms-webhooks/1");
});

Deno.test("webhook receiver: over https, with a certificate for localhost from the stack's CA, it receives the same; by another name TLS fails", async () => {
  const { name, url } = webhookReceiver.endpoint(undefined, { https: true });
  assert.match(url, /^https:\/\/localhost:\d+\/hooks\//);
  const secret = newSecret();
  await webhookReceiver.register(name, [secret]);
  const ca = await Deno.readTextFile(stack.localCa);
  const { result } = await deliver(url, [secret], { trustedCertificates: [ca] });
  assert.equal(statusOf(result), 204);
  const [received] = await webhookReceiver.requests(name);
  assert.deepEqual([received!.tls, received!.verified], [true, true]);

  // Its address instead of its name: the certificate does not name it.
  const byAddress = url.replace("https://localhost:", "https://127.0.0.1:");
  assert.equal(statusOf((await deliver(byAddress, [secret], { trustedCertificates: [ca] })).result), "network-error: tls-failure");
  assert.equal((await webhookReceiver.requests(name)).length, 1);
});

Deno.test("webhook receiver: during a rotation's overlap a receiver with either secret, or both, verifies; one with neither refuses", async () => {
  const [current, previous] = [newSecret(), newSecret()];
  const both = webhookReceiver.endpoint();
  await webhookReceiver.register(both.name, [current, previous]);
  assert.equal(statusOf((await deliver(both.url, [current, previous])).result), 204);
  assert.deepEqual((await webhookReceiver.requests(both.name)).map((webhook) => webhook.verifiedWith), [[current, previous]]);

  // A receiver that has not moved to the new secret yet.
  const old = webhookReceiver.endpoint();
  await webhookReceiver.register(old.name, [previous]);
  assert.equal(statusOf((await deliver(old.url, [current, previous])).result), 204);
  assert.deepEqual((await webhookReceiver.requests(old.name)).map((webhook) => webhook.verifiedWith), [[previous]]);

  // After the overlap the old secret no longer signs: a receiver still on it refuses.
  assert.equal(statusOf((await deliver(old.url, [current])).result), 401);
  const [, refused] = await webhookReceiver.requests(old.name);
  assert.deepEqual({ verified: refused!.verified, verifiedWith: refused!.verifiedWith, status: refused!.status }, { verified: false, verifiedWith: [], status: 401 });
  assert.equal(refused!.refusal, "No matching signature found");
});

Deno.test("webhook receiver: a wrong signature, a tampered body and a stale timestamp are answered 401 and recorded, and take no scripted answer", async () => {
  const { name, url } = webhookReceiver.endpoint();
  const secret = newSecret();
  await webhookReceiver.register(name, [secret]);
  await webhookReceiver.script(name, { status: 500 });

  assert.equal(statusOf((await deliver(url, [newSecret()])).result), 401);
  const stale = await deliver(url, [secret], { at: new Date(Date.now() - 10 * 60_000) });
  assert.equal(statusOf(stale.result), 401);
  // Signed for one body, sent with another.
  const signed = signWebhook("msg_tampered", new Date(), JSON.stringify(event("a")), [secret]);
  const tampered = await fetch(url, { method: "POST", headers: { ...signed, "content-type": "application/json" }, body: JSON.stringify(event("b")) });
  assert.equal(tampered.status, 401);
  await tampered.body?.cancel();
  const unsigned = await fetch(url, { method: "POST", body: "{}" });
  assert.equal(unsigned.status, 401);
  await unsigned.body?.cancel();
  // The script is still there for the first good one.
  assert.equal(statusOf((await deliver(url, [secret])).result), 500);

  const received = await webhookReceiver.requests(name);
  assert.deepEqual(received.map(({ verified, status, refusal }) => ({ verified, status, refusal })), [
    { verified: false, status: 401, refusal: "No matching signature found" },
    { verified: false, status: 401, refusal: "Message timestamp too old" },
    { verified: false, status: 401, refusal: "No matching signature found" },
    { verified: false, status: 401, refusal: "Missing required headers" },
    { verified: true, status: 500, refusal: null },
  ]);
  assert.equal(received[2]!.body, JSON.stringify(event("b")));
});

Deno.test("webhook receiver: without a registered secret nothing is verified, and every webhook is taken", async () => {
  const { name, url } = webhookReceiver.endpoint();
  assert.equal(statusOf((await deliver(url, [newSecret()])).result), 204);
  const notJson = await fetch(url, { method: "POST", body: "plain text" });
  assert.equal(notJson.status, 204);
  await notJson.body?.cancel();
  const received = await webhookReceiver.requests(name);
  assert.deepEqual(received.map(({ verified, verifiedWith, refusal, status }) => ({ verified, verifiedWith, refusal, status })), [
    { verified: null, verifiedWith: [], refusal: null, status: 204 },
    { verified: null, verifiedWith: [], refusal: null, status: 204 },
  ]);
  assert.equal(received[1]!.json, null);
  assert.equal(received[1]!.body, "plain text");
});

Deno.test("webhook receiver: scripted answers come in order, one endpoint's before any endpoint's, then 204 again", async () => {
  const first = webhookReceiver.endpoint();
  const second = webhookReceiver.endpoint();
  const secret = newSecret();
  await webhookReceiver.register(first.name, [secret]);
  await webhookReceiver.register(second.name, [secret]);
  await webhookReceiver.script(first.name,
    { status: 500, body: { error: "database down" } },
    { status: 429, headers: { "retry-after": "7" } },
    { status: 302, headers: { location: `${second.url}?redirected` } },
    { status: 410, body: "endpoint removed" },
  );
  await webhookReceiver.script(undefined, { status: 503 });

  const results = [];
  for (let i = 0; i < 5; i++) results.push((await deliver(first.url, [secret])).result);
  assert.deepEqual(results.map(statusOf), [500, 429, 302, 410, 503]);
  assert.ok(results[0]!.outcome === "response" && results[0]!.snippet === '{"error":"database down"}');
  assert.ok(results[1]!.outcome === "response" && results[1]!.retryAfter === "7");
  assert.ok(results[3]!.outcome === "response" && results[3]!.snippet === "endpoint removed", "a string body goes out as text");
  assert.equal(statusOf((await deliver(first.url, [secret])).result), 204);
  // The redirect was not followed: the endpoint it named got nothing.
  assert.deepEqual(await webhookReceiver.requests(second.name), []);
  assert.deepEqual((await webhookReceiver.requests(first.name)).map((webhook) => webhook.status), [500, 429, 302, 410, 503, 204]);
});

Deno.test("webhook receiver: an answer delayed past the sender's timeout is a timeout to the sender, and the webhook is recorded", async () => {
  const { name, url } = webhookReceiver.endpoint();
  const secret = newSecret();
  await webhookReceiver.register(name, [secret]);
  await webhookReceiver.script(name, { status: 200, delayMs: 1500 });
  const { id, result } = await deliver(url, [secret], { timeoutMs: 300 });
  assert.equal(statusOf(result), "network-error: timeout");
  const [received] = await webhookReceiver.requests(name);
  assert.deepEqual({ id: received!.headers["webhook-id"], verified: received!.verified, status: received!.status }, { id, verified: true, status: 200 });
});

Deno.test("webhook receiver: malformed control calls are refused, and DELETE /_capture forgets requests, scripts and secrets", async () => {
  const base = stack.webhookReceiverUrl;
  const refusals: [string, RequestInit, number][] = [
    ["/_capture/endpoints/a", { method: "PUT", body: JSON.stringify({ secrets: ["not-a-secret"] }) }, 400],
    ["/_capture/endpoints/a", { method: "PUT", body: JSON.stringify({}) }, 400],
    ["/_capture/endpoints/a", { method: "GET" }, 405],
    ["/_capture/script", { method: "POST", body: JSON.stringify({ name: 7, responses: [] }) }, 400],
    ["/_capture/script", { method: "POST", body: JSON.stringify({ responses: [{}] }) }, 400],
    ["/hooks/a", { method: "GET" }, 405],
    ["/hooks/", { method: "POST" }, 404],
    ["/nowhere", { method: "GET" }, 404],
  ];
  for (const [path, init, status] of refusals) {
    const response = await fetch(`${base}${path}`, init);
    await response.body?.cancel();
    assert.equal(response.status, status, `${init.method} ${path}`);
  }

  const { name, url } = webhookReceiver.endpoint();
  const secret = newSecret();
  await webhookReceiver.register(name, [secret]);
  await deliver(url, [secret]);
  await webhookReceiver.script(name, { status: 500 });
  await webhookReceiver.clear();
  assert.deepEqual(await webhookReceiver.requests(), []);
  // Neither the script nor the secret is left: a webhook signed with another secret is taken.
  assert.equal(statusOf((await deliver(url, [newSecret()])).result), 204);
  assert.deepEqual((await webhookReceiver.requests(name)).map(({ verified, status }) => ({ verified, status })), [{ verified: null, status: 204 }]);
});
