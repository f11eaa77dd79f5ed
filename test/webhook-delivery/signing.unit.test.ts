// The outbound webhook's signature on its own: what the Standard Webhooks library's own
// verifier (what a receiver runs) accepts and refuses, the HMAC worked out again with
// node:crypto from the specification's wording, and the mistakes a caller is stopped at.
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { createHmac, randomBytes } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { signWebhook } from "../../src/webhook-delivery/signing.ts";

const newSecret = () => `whsec_${randomBytes(32).toString("base64")}`;
const BODY = JSON.stringify({ type: "reservation.created", data: { reservation: { id: "r1", guestName: "Zoë Ñúñez 🏨" } } });
const ID = "0e4b3f2a-7c1d-4b6e-9f3a-2d5c8e1a9b07";

// What a receiver does with the secret it holds: the library's verify, true when it accepts.
function verifies(secret: string, body: string, headers: Record<string, string>): boolean {
  try {
    new Webhook(secret).verify(body, headers, { jsonParse: false });
    return true;
  } catch {
    return false;
  }
}

Deno.test("signing: the three headers, the timestamp in whole seconds, one v1 signature per secret", () => {
  const secret = newSecret();
  const headers = signWebhook(ID, new Date("2031-03-04T09:30:15.987Z"), BODY, [secret]);
  assert.deepEqual(Object.keys(headers).sort(), ["webhook-id", "webhook-signature", "webhook-timestamp"]);
  assert.equal(headers["webhook-id"], ID);
  assert.equal(headers["webhook-timestamp"], String(Date.parse("2031-03-04T09:30:15Z") / 1000));
  assert.match(headers["webhook-signature"], /^v1,[A-Za-z0-9+/]{43}=$/);
});

Deno.test("signing: the signature is base64 of HMAC-SHA256 over id.timestamp.body, keyed with the secret's decoded bytes", () => {
  const secret = newSecret();
  const at = new Date("2031-03-04T09:30:15Z");
  const headers = signWebhook(ID, at, BODY, [secret]);
  const key = Buffer.from(secret.slice("whsec_".length), "base64");
  const expected = createHmac("sha256", key).update(`${ID}.${at.getTime() / 1000}.${BODY}`, "utf8").digest("base64");
  assert.equal(headers["webhook-signature"], `v1,${expected}`);
});

Deno.test("signing: the library's verifier accepts a fresh request with the one secret", () => {
  const secret = newSecret();
  assert.ok(verifies(secret, BODY, signWebhook(ID, new Date(), BODY, [secret])));
  // And parses the body it verified, as a receiver reads it.
  const parsed = new Webhook(secret).verify(BODY, signWebhook(ID, new Date(), BODY, [secret]));
  assert.deepEqual(parsed, JSON.parse(BODY));
});

Deno.test("signing: during a rotation's overlap both signatures travel, and a receiver with either secret verifies", () => {
  const current = newSecret();
  const previous = newSecret();
  const headers = signWebhook(ID, new Date(), BODY, [current, previous]);
  const signatures = headers["webhook-signature"].split(" ");
  assert.equal(signatures.length, 2);
  assert.equal(signatures[0], signWebhook(ID, new Date(Number(headers["webhook-timestamp"]) * 1000), BODY, [current])["webhook-signature"]);
  assert.ok(verifies(current, BODY, headers), "the receiver that already holds the new secret");
  assert.ok(verifies(previous, BODY, headers), "the receiver still on the old one");
  assert.ok(!verifies(newSecret(), BODY, headers), "a receiver with neither");
});

Deno.test("signing: a tampered body, another secret, another id and a stale or future timestamp are refused", () => {
  const secret = newSecret();
  const headers = signWebhook(ID, new Date(), BODY, [secret]);
  assert.ok(!verifies(secret, BODY.replace("r1", "r2"), headers), "tampered body");
  assert.ok(!verifies(secret, `${BODY} `, headers), "one byte more");
  assert.ok(!verifies(newSecret(), BODY, headers), "another secret");
  assert.ok(!verifies(secret, BODY, { ...headers, "webhook-id": "another-id" }), "another id");
  const replayed = { ...headers, "webhook-timestamp": String(Number(headers["webhook-timestamp"]) + 1) };
  assert.ok(!verifies(secret, BODY, replayed), "the timestamp changed after signing");
  // The library tolerates five minutes either way.
  const stale = signWebhook(ID, new Date(Date.now() - 6 * 60_000), BODY, [secret]);
  assert.ok(!verifies(secret, BODY, stale), "stale");
  const future = signWebhook(ID, new Date(Date.now() + 6 * 60_000), BODY, [secret]);
  assert.ok(!verifies(secret, BODY, future), "from the future");
  const recent = signWebhook(ID, new Date(Date.now() - 4 * 60_000), BODY, [secret]);
  assert.ok(verifies(secret, BODY, recent), "four minutes old is still accepted");
});

Deno.test("signing: a malformed id or secret, no secret or an invalid date is the caller's mistake and throws", () => {
  const secret = newSecret();
  const now = new Date();
  assert.throws(() => signWebhook(ID, now, BODY, []), RangeError);
  assert.throws(() => signWebhook(ID, now, BODY, ["not-a-secret"]), RangeError);
  assert.throws(() => signWebhook(ID, now, BODY, [secret, `whsec_${randomBytes(16).toString("base64")}`]), RangeError);
  assert.throws(() => signWebhook(ID, now, BODY, [secret.slice("whsec_".length)]), RangeError);
  for (const id of ["", "has space", "has.dot", "line\nbreak", "x".repeat(201)]) {
    assert.throws(() => signWebhook(id, now, BODY, [secret]), RangeError, JSON.stringify(id));
  }
  assert.throws(() => signWebhook(ID, new Date(Number.NaN), BODY, [secret]), RangeError);
});
