// An API key as the integration holds it: live_<key id>_<secret>. The key id is
// public (lists show it, requests are looked up by it); the secret is 256 random
// bits, shown once and stored only as its SHA-256.
import { Buffer } from "node:buffer";
import { createHash } from "node:crypto";

const PREFIX = "live_";
const BASE32 = "abcdefghijklmnopqrstuvwxyz234567";
const KEY_ID_LENGTH = 16;
const SECRET_BYTES = 32;
const KEY_PATTERN = /^live_([a-z2-7]{16})_([A-Za-z0-9_-]{43})$/;

// Hashes travel as hex, which SQL's decode(…, 'hex') takes as it is.
export type IssuedKey = {
  // The whole key, for the one response that shows it.
  token: string;
  keyId: string;
  lastFour: string;
  secretHashHex: string;
};

export type PresentedKey = { keyId: string; secretHashHex: string };

function base32(bytes: Uint8Array): string {
  let bits = 0;
  let value = 0;
  let out = "";
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return out;
}

export function sha256Hex(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

export function prefixOf(keyId: string): string {
  return `${PREFIX}${keyId}`;
}

// 256 random bits as 43 base64url characters: an API key's secret, a calendar feed's token.
export function randomSecret(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(SECRET_BYTES))).toString("base64url");
}

export function issueKey(): IssuedKey {
  const keyId = base32(crypto.getRandomValues(new Uint8Array(KEY_ID_LENGTH * 5 / 8)));
  const secret = randomSecret();
  return { token: `${prefixOf(keyId)}_${secret}`, keyId, lastFour: secret.slice(-4), secretHashHex: sha256Hex(secret) };
}

// A string that cannot be a key is refused before the database is asked.
export function presentedKey(token: string): PresentedKey | null {
  const match = KEY_PATTERN.exec(token);
  if (!match) return null;
  return { keyId: match[1]!, secretHashHex: sha256Hex(match[2]!) };
}
