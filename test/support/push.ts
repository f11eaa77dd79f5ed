// Web Push for tests: a browser's side of a subscription (its keys, and the decryption of
// what arrives for it).
import { Buffer } from "node:buffer";
import { createECDH, type ECDH, randomBytes } from "node:crypto";
import httpEce from "http_ece";
import type { PushSubscriptionKeys } from "../../src/notifications/push.ts";

// ---------------------------------------------------------------- the browser's side

// What a browser keeps to itself for one subscription: its ECDH key pair (P-256) and the
// authentication secret it shares with the application server (RFC 8291, 3).
export type BrowserKeys = { ecdh: ECDH; authSecret: string };

// PushSubscription.toJSON() of a browser.
export type BrowserSubscriptionJson = {
  endpoint: string;
  expirationTime: number | null;
  keys: { p256dh: string; auth: string };
};

export type BrowserSubscription = { subscription: BrowserSubscriptionJson; keys: BrowserKeys };

// A subscription to `endpoint` as a browser makes one: a fresh P-256 key pair and 16
// random bytes of authentication secret, given out in unpadded base64url.
export function newBrowserSubscription(endpoint: string): BrowserSubscription {
  const ecdh = createECDH("prime256v1");
  ecdh.generateKeys();
  const authSecret = randomBytes(16).toString("base64url");
  return {
    subscription: { endpoint, expirationTime: null, keys: { p256dh: ecdh.getPublicKey("base64url"), auth: authSecret } },
    keys: { ecdh, authSecret },
  };
}

// The subscription as the project stores it.
export function storedSubscription(browser: BrowserSubscription): PushSubscriptionKeys {
  const { endpoint, keys } = browser.subscription;
  return { endpoint, p256dh: keys.p256dh, auth: keys.auth };
}

// The part of http_ece (web-push's own encryption package) a browser's role needs, typed
// here: the package ships no types. For aes128gcm the sender's public key travels in the
// body's header, so the receiver's key pair and the shared secret are all it takes.
type HttpEce = {
  decrypt(content: Uint8Array, params: { version: "aes128gcm"; privateKey: ECDH; authSecret: string }): Uint8Array;
};
const ece: HttpEce = httpEce;

// The text of an aes128gcm message body (base64, as the push double records it), decrypted
// as the browser would with its keys. Throws when the body was not encrypted for them.
export function decryptPush(bodyBase64: string, keys: BrowserKeys): string {
  const plain = ece.decrypt(Buffer.from(bodyBase64, "base64"), { version: "aes128gcm", privateKey: keys.ecdh, authSecret: keys.authSecret });
  return new TextDecoder("utf-8", { fatal: true }).decode(plain);
}
