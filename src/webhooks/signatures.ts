// The two signatures the providers put on their delivery reports, verified with WebCrypto
// (crypto.subtle), which every runtime the functions run on has:
// - SendGrid's signed Event Webhook: ECDSA over P-256 with SHA-256, of the timestamp
//   header's text followed by the body's raw bytes, checked with the verification key
//   SendGrid shows (base64 of the key's SubjectPublicKeyInfo DER). The signature header is
//   base64 of an ASN.1 DER ECDSA-Sig-Value, SEQUENCE { r INTEGER, s INTEGER }; WebCrypto
//   takes the IEEE P1363 form, r and s as 32 big-endian bytes each, so it is converted.
// - Twilio's request validation (X-Twilio-Signature): base64 of HMAC-SHA1, keyed with the
//   account's auth token, of the full URL the provider called followed by each POST
//   parameter's name and value, sorted by name.
// Written by hand rather than with SendGrid's helper package (@sendgrid/eventwebhook, which
// verifies in pure JavaScript through a third-party ECDSA library) or Twilio's SDK (a large
// client for one HMAC): the checks are a few lines over the platform's own primitives, and
// the strict DER reading below refuses every encoding but the one canonical form.

const encoder = new TextEncoder();

export function base64Bytes(text: string): Uint8Array<ArrayBuffer> | null {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) return null;
  try {
    return Uint8Array.from(atob(text), (char) => char.charCodeAt(0));
  } catch {
    return null;
  }
}

function base64Text(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

// ---------------------------------------------------------------- SendGrid

export async function importSendGridVerificationKey(base64Spki: string): Promise<CryptoKey> {
  const spki = base64Bytes(base64Spki.replace(/\s+/g, ""));
  if (!spki) throw new Error("the SendGrid verification key is not base64");
  return await crypto.subtle.importKey("spki", spki, { name: "ECDSA", namedCurve: "P-256" }, false, ["verify"]);
}

// One DER INTEGER at `at` as `size` unsigned big-endian bytes, and where the next element
// starts; null unless it is a minimal, non-negative encoding of at most `size` bytes.
function derInteger(der: Uint8Array, at: number, size: number): { value: Uint8Array; next: number } | null {
  if (der[at] !== 0x02) return null;
  const length = der[at + 1];
  if (length === undefined || length === 0 || length > size + 1) return null;
  const start = at + 2;
  const end = start + length;
  if (end > der.length) return null;
  const first = der[start]!;
  // Negative, or a leading zero that is not needed to keep the value positive.
  if (first & 0x80) return null;
  if (first === 0 && length > 1 && !(der[start + 1]! & 0x80)) return null;
  let digits = der.subarray(start, end);
  if (digits.length === size + 1) {
    if (digits[0] !== 0) return null;
    digits = digits.subarray(1);
  }
  const value = new Uint8Array(size);
  value.set(digits, size - digits.length);
  return { value, next: end };
}

// An ECDSA-Sig-Value in DER as r || s, each `size` bytes (32 for P-256); null for anything
// that is not exactly one such SEQUENCE.
export function derSignatureToP1363(der: Uint8Array, size = 32): Uint8Array<ArrayBuffer> | null {
  // Two INTEGERs of at most size + 1 bytes fit a short-form length.
  if (der.length < 8 || der[0] !== 0x30 || der[1] !== der.length - 2) return null;
  const r = derInteger(der, 2, size);
  if (!r) return null;
  const s = derInteger(der, r.next, size);
  if (!s || s.next !== der.length) return null;
  const raw = new Uint8Array(2 * size);
  raw.set(r.value, 0);
  raw.set(s.value, size);
  return raw;
}

export type SignedEvents = { signature: string | null; timestamp: string | null; body: Uint8Array };

export type Verdict = { ok: true } | { ok: false; why: string };

// SendGrid signs each post when it sends it, retries included, so a post whose timestamp
// is further than `toleranceSeconds` from now either way is a replay or a clock gone
// wrong, and is refused like a bad signature.
export async function verifySendGridSignature(
  key: CryptoKey,
  signed: SignedEvents,
  options: { nowMs: number; toleranceSeconds: number },
): Promise<Verdict> {
  const { signature, timestamp, body } = signed;
  if (!signature || !timestamp) return { ok: false, why: "The signature or timestamp header is missing." };
  if (!/^[0-9]{1,12}$/.test(timestamp)) return { ok: false, why: "The timestamp header is not a Unix time in seconds." };
  const skew = Math.abs(options.nowMs / 1000 - Number(timestamp));
  if (skew > options.toleranceSeconds) {
    return { ok: false, why: `The timestamp is ${Math.round(skew)} s from now, more than the ${options.toleranceSeconds} s allowed.` };
  }
  const der = base64Bytes(signature.trim());
  const raw = der && derSignatureToP1363(der);
  if (!raw) return { ok: false, why: "The signature is not a base64 DER ECDSA signature." };
  const prefix = encoder.encode(timestamp);
  const payload = new Uint8Array(prefix.length + body.length);
  payload.set(prefix, 0);
  payload.set(body, prefix.length);
  const valid = await crypto.subtle.verify({ name: "ECDSA", hash: "SHA-256" }, key, raw, payload);
  return valid ? { ok: true } : { ok: false, why: "The signature does not match the timestamp and body." };
}

// ---------------------------------------------------------------- Twilio

export async function importTwilioAuthToken(authToken: string): Promise<CryptoKey> {
  return await crypto.subtle.importKey("raw", encoder.encode(authToken), { name: "HMAC", hash: "SHA-1" }, false, ["sign", "verify"]);
}

// The text Twilio signs: the URL, then each parameter's name and value, by name (and by
// value where a name repeats), in code-unit order as its libraries sort.
export function twilioSignedText(url: string, params: Iterable<[string, string]>): string {
  const sorted = [...params].sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0));
  return url + sorted.map(([name, value]) => name + value).join("");
}

export async function twilioSignature(key: CryptoKey, url: string, params: Iterable<[string, string]>): Promise<string> {
  return base64Text(new Uint8Array(await crypto.subtle.sign("HMAC", key, encoder.encode(twilioSignedText(url, params)))));
}

// Compared by WebCrypto's HMAC verify, which takes time independent of where they differ.
export async function verifyTwilioSignature(
  key: CryptoKey,
  signature: string | null,
  url: string,
  params: Iterable<[string, string]>,
): Promise<Verdict> {
  if (!signature) return { ok: false, why: "The X-Twilio-Signature header is missing." };
  const mac = base64Bytes(signature.trim());
  if (!mac || mac.length !== 20) return { ok: false, why: "The signature is not a base64 HMAC-SHA1." };
  const valid = await crypto.subtle.verify("HMAC", key, mac, encoder.encode(twilioSignedText(url, params)));
  return valid ? { ok: true } : { ok: false, why: "The signature does not match the URL and parameters." };
}
