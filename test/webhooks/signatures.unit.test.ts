// The providers' signatures on their own: SendGrid's ECDSA over the timestamp and the body
// (signed here with node:crypto, as the SendGrid double signs, and checked with the
// WebCrypto code under test), the strict reading of a DER signature, and Twilio's
// HMAC-SHA1 of the URL and the sorted parameters, against the example Twilio's
// documentation gives.
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { sign } from "node:crypto";
import {
  base64Bytes,
  derSignatureToP1363,
  importSendGridVerificationKey,
  importTwilioAuthToken,
  twilioSignature,
  twilioSignedText,
  verifySendGridSignature,
  verifyTwilioSignature,
} from "../../src/webhooks/signatures.ts";

async function keyPair() {
  const pair = await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign", "verify"]);
  const spki = Buffer.from(await crypto.subtle.exportKey("spki", pair.publicKey)).toString("base64");
  const pkcs8 = Buffer.from(await crypto.subtle.exportKey("pkcs8", pair.privateKey));
  return { spki, signDer: (text: string) => sign("sha256", Buffer.from(text), { key: pkcs8, format: "der", type: "pkcs8" }) };
}

const NOW_MS = Date.parse("2026-11-25T10:00:00Z");
const NOW = String(NOW_MS / 1000);
const options = { nowMs: NOW_MS, toleranceSeconds: 300 };
const encode = (text: string) => new TextEncoder().encode(text);

Deno.test("SendGrid: a DER signature of the timestamp and the raw body verifies; any change to either does not", async () => {
  const { spki, signDer } = await keyPair();
  const key = await importSendGridVerificationKey(spki);
  const body = '[{"event":"delivered","sg_event_id":"e1"}]';
  const signature = signDer(NOW + body).toString("base64");
  assert.deepEqual(await verifySendGridSignature(key, { signature, timestamp: NOW, body: encode(body) }, options), { ok: true });

  const refused = async (signed: Parameters<typeof verifySendGridSignature>[1]) =>
    (await verifySendGridSignature(key, signed, options)).ok;
  assert.equal(await refused({ signature, timestamp: NOW, body: encode(body.replace("e1", "e2")) }), false, "another body");
  assert.equal(await refused({ signature, timestamp: String(NOW_MS / 1000 - 1), body: encode(body) }), false, "another timestamp");
  assert.equal(await refused({ signature: signDer(body).toString("base64"), timestamp: NOW, body: encode(body) }), false,
    "the body alone, without the timestamp");
  const other = await keyPair();
  assert.equal(await refused({ signature: other.signDer(NOW + body).toString("base64"), timestamp: NOW, body: encode(body) }), false,
    "another key");
  // Whitespace in the body is part of what is signed: a re-serialized body does not verify.
  assert.equal(await refused({ signature, timestamp: NOW, body: encode(JSON.stringify(JSON.parse(body), null, 1)) }), false);
});

Deno.test("SendGrid: a missing header, a timestamp that is not seconds or is outside the tolerance either way is refused, saying why", async () => {
  const { spki, signDer } = await keyPair();
  const key = await importSendGridVerificationKey(spki);
  const body = encode("[]");
  const at = (seconds: number) => ({ timestamp: String(seconds), signature: signDer(`${seconds}[]`).toString("base64"), body });
  const why = async (signed: Parameters<typeof verifySendGridSignature>[1]) => {
    const verdict = await verifySendGridSignature(key, signed, options);
    return verdict.ok ? "ok" : verdict.why;
  };
  assert.equal(await why({ ...at(NOW_MS / 1000), signature: null }), "The signature or timestamp header is missing.");
  assert.equal(await why({ ...at(NOW_MS / 1000), timestamp: null }), "The signature or timestamp header is missing.");
  assert.equal(await why({ ...at(NOW_MS / 1000), timestamp: "1.5e9" }), "The timestamp header is not a Unix time in seconds.");
  assert.equal(await why(at(NOW_MS / 1000 - 300)), "ok", "exactly the tolerance old");
  assert.equal(await why(at(NOW_MS / 1000 + 300)), "ok", "exactly the tolerance ahead");
  assert.equal(await why(at(NOW_MS / 1000 - 301)), "The timestamp is 301 s from now, more than the 300 s allowed.");
  assert.equal(await why(at(NOW_MS / 1000 + 301)), "The timestamp is 301 s from now, more than the 300 s allowed.");
  assert.equal(await why({ ...at(NOW_MS / 1000), signature: "****" }), "The signature is not a base64 DER ECDSA signature.");
});

Deno.test("DER ECDSA signatures: r and s are read into 32 bytes each; any other encoding is refused", () => {
  const integer = (bytes: number[]) => [0x02, bytes.length, ...bytes];
  const sequence = (...parts: number[][]) => new Uint8Array([0x30, parts.flat().length, ...parts.flat()]);
  const r = Array.from({ length: 32 }, (_, i) => i + 1);
  const s = Array.from({ length: 32 }, (_, i) => 0xa0 + (i % 16));
  // s has its high bit set, so DER puts a 0x00 before it to keep it positive.
  const raw = derSignatureToP1363(sequence(integer(r), integer([0, ...s])));
  assert.deepEqual([...raw!], [...r, ...s]);
  // A short r (leading zero bytes dropped) is padded back.
  assert.deepEqual([...derSignatureToP1363(sequence(integer([5]), integer([0, ...s])))!], [...Array(31).fill(0), 5, ...s]);
  const refused: [string, Uint8Array][] = [
    ["a positive value without its 0x00", sequence(integer(r), integer(s))],
    ["a needless leading zero", sequence(integer([0, ...r]), integer([0, ...s]))],
    ["33 value bytes", sequence(integer([1, ...r]), integer([0, ...s]))],
    ["a trailing byte", new Uint8Array([...sequence(integer(r), integer([0, ...s])), 0])],
    ["a wrong length", new Uint8Array([0x30, 0x7f, ...integer(r), ...integer([0, ...s])])],
    ["no SEQUENCE", new Uint8Array([0x31, 70, ...integer(r), ...integer([0, ...s])])],
    ["one INTEGER", sequence(integer(r))],
    ["nothing", new Uint8Array()],
  ];
  for (const [label, der] of refused) assert.equal(derSignatureToP1363(der), null, label);
});

Deno.test("base64 is read strictly: padding where it belongs, nothing outside the alphabet", () => {
  assert.deepEqual([...base64Bytes("AQID")!], [1, 2, 3]);
  assert.deepEqual([...base64Bytes("AQI=")!], [1, 2]);
  for (const text of ["AQI", "A=QI", "AQ I", "AQ-_", "AQI==="]) assert.equal(base64Bytes(text), null, text);
});

Deno.test("SendGrid's verification key: base64 of an SPKI DER, as SendGrid shows it; anything else does not import", async () => {
  const { spki } = await keyPair();
  assert.equal((await importSendGridVerificationKey(`${spki.slice(0, 40)}\n${spki.slice(40)}`)).type, "public", "line breaks are ignored");
  await assert.rejects(importSendGridVerificationKey("not base64!"));
  await assert.rejects(importSendGridVerificationKey(btoa("not a key")));
});

// Twilio's documentation's own example: this URL and these parameters, auth token 12345.
const TWILIO_URL = "https://mycompany.com/myapp.php?foo=1&bar=2";
const TWILIO_PARAMS: [string, string][] = [
  ["CallSid", "CA1234567890ABCDE"], ["Caller", "+12349013030"], ["Digits", "1234"], ["From", "+12349013030"],
  ["To", "+18005551212"],
];

Deno.test("Twilio: the URL and the parameters sorted by name, signed with HMAC-SHA1 of the auth token, as Twilio's example gives", async () => {
  const key = await importTwilioAuthToken("12345");
  const shuffled = [...TWILIO_PARAMS].reverse();
  assert.equal(twilioSignedText(TWILIO_URL, shuffled),
    "https://mycompany.com/myapp.php?foo=1&bar=2CallSidCA1234567890ABCDECaller+12349013030Digits1234From+12349013030To+18005551212");
  assert.equal(await twilioSignature(key, TWILIO_URL, shuffled), "0/KCTR6DLpKmkAf8muzZqo1nDgQ=");
  assert.deepEqual(await verifyTwilioSignature(key, "0/KCTR6DLpKmkAf8muzZqo1nDgQ=", TWILIO_URL, shuffled), { ok: true });
});

Deno.test("Twilio: another URL, another parameter value, another token or no signature is refused", async () => {
  const key = await importTwilioAuthToken("12345");
  const signature = "0/KCTR6DLpKmkAf8muzZqo1nDgQ=";
  const ok = async (...args: Parameters<typeof verifyTwilioSignature>) => (await verifyTwilioSignature(...args)).ok;
  assert.equal(await ok(key, signature, TWILIO_URL.replace("foo=1", "foo=2"), TWILIO_PARAMS), false, "another query");
  assert.equal(await ok(key, signature, TWILIO_URL.replace("https:", "http:"), TWILIO_PARAMS), false, "another scheme");
  assert.equal(await ok(key, signature, TWILIO_URL, [...TWILIO_PARAMS, ["MessageStatus", "delivered"]]), false, "a parameter more");
  assert.equal(await ok(key, signature, TWILIO_URL, TWILIO_PARAMS.map(([n, v]) => [n, n === "Digits" ? "4321" : v])), false);
  assert.equal(await ok(await importTwilioAuthToken("54321"), signature, TWILIO_URL, TWILIO_PARAMS), false, "another token");
  assert.deepEqual(await verifyTwilioSignature(key, null, TWILIO_URL, TWILIO_PARAMS),
    { ok: false, why: "The X-Twilio-Signature header is missing." });
  assert.deepEqual(await verifyTwilioSignature(key, "AAAA", TWILIO_URL, TWILIO_PARAMS),
    { ok: false, why: "The signature is not a base64 HMAC-SHA1." });
});
