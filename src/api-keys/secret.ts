// An API key as the integration holds it: live_<key id>_<secret>. The key id is
// public (lists show it, requests are looked up by it); the secret is 256 random
// bits, shown once and stored only as its SHA-256.
import { createHash } from "node:crypto";

const PREFIX = "live_";
const BASE32 = "abcdefghijklmnopqrstuvwxyz234567";
const KEY_ID_LENGTH = 16;
const SECRET_BYTES = 32;
const KEY_PATTERN = /^live_([a-z2-7]{16})_([A-Za-z0-9_-]{43})$/;

export type IssuedKey = {
  // The whole key, for the one response that shows it.
  token: string;
  keyId: string;
  // What lists show: live_<key id>.
  prefix: string;
  lastFour: string;
  secretHash: Uint8Array;
};

export type PresentedKey = { keyId: string; secretHash: Uint8Array };

function base64url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

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

function sha256(text: string): Uint8Array {
  return new Uint8Array(createHash("sha256").update(text).digest());
}

export function prefixOf(keyId: string): string {
  return `${PREFIX}${keyId}`;
}

export function issueKey(random: (bytes: Uint8Array) => Uint8Array = (b) => crypto.getRandomValues(b)): IssuedKey {
  const keyId = base32(random(new Uint8Array(KEY_ID_LENGTH * 5 / 8)));
  const secret = base64url(random(new Uint8Array(SECRET_BYTES)));
  return {
    token: `${prefixOf(keyId)}_${secret}`,
    keyId,
    prefix: prefixOf(keyId),
    lastFour: secret.slice(-4),
    secretHash: sha256(secret),
  };
}

// A string that cannot be a key is refused before the database is asked.
export function presentedKey(token: string): PresentedKey | null {
  const match = KEY_PATTERN.exec(token);
  if (!match) return null;
  return { keyId: match[1]!, secretHash: sha256(match[2]!) };
}

export function hex(bytes: Uint8Array): string {
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
}
