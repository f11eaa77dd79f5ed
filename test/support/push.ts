// Web Push for tests: a browser's side of a subscription (its keys, and the decryption of
// what arrives for it), the sender with the stack's VAPID keys, the stack's push service
// double (local/push-capture) with its capture routes, and the push routes as a client
// calls them, checked against the contract.
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { createECDH, type ECDH, randomBytes } from "node:crypto";
import httpEce from "http_ece";
import type { ScriptedResponse } from "../../local/capture.ts";
import type { Attempt } from "../../local/push-capture/main.ts";
import { createPushSender, type PushSender, type PushSettings, type PushSubscriptionKeys } from "../../src/notifications/push.ts";
import { stack } from "./stack.ts";
import { type Client, expectStatus, listPage, type Page, representation, type Schemas } from "./api.ts";

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

// ---------------------------------------------------------------- the server's side

// The sender as the stack's functions make it: the stack's VAPID keys and subject, loopback
// endpoints allowed (the push double), the real fetch; `change` overrides any of it.
export function stackPushSender(change: Partial<PushSettings> = {}): PushSender {
  const { vapidPublicKey, vapidPrivateKey, vapidSubject } = stack.notifications.push;
  return createPushSender({
    vapid: { publicKey: vapidPublicKey, privateKey: vapidPrivateKey, subject: vapidSubject },
    ttlSeconds: 3600,
    timeoutMs: 10_000,
    allowLoopbackHttp: true,
    fetch,
    now: Date.now,
    ...change,
  });
}

// ---------------------------------------------------------------- the push service double

// One push the double took or refused (local/push-capture/main.ts).
export type PushAttempt = Attempt;

const tokenQuery = (token?: string) => token === undefined ? "" : `?token=${encodeURIComponent(token)}`;

async function getJson<T>(path: string): Promise<T> {
  const response = await fetch(`${stack.pushUrl}${path}`);
  assert.equal(response.status, 200, path);
  return await response.json() as T;
}

async function postJson<T>(path: string, body: unknown, status: number): Promise<T> {
  const response = await fetch(`${stack.pushUrl}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  assert.equal(response.status, status, text);
  return JSON.parse(text) as T;
}

async function remove(path: string): Promise<void> {
  const response = await fetch(`${stack.pushUrl}${path}`, { method: "DELETE" });
  await response.body?.cancel();
  assert.equal(response.status, 204, path);
}

export const pushService = {
  // A subscription's endpoint on the double; any token is one. A fresh token each call
  // without one, so tests never share a subscription.
  endpoint(token: string = crypto.randomUUID().replaceAll("-", "")): { token: string; endpoint: string } {
    return { token, endpoint: `${stack.pushUrl}/push/${token}` };
  },
  // A subscription the double hands out, tied to an application server key when one is
  // given (pushes signed with another key are refused with 403).
  subscribe: (applicationServerKey?: string) =>
    postJson<{ token: string; endpoint: string }>("/_capture/subscriptions", applicationServerKey ? { applicationServerKey } : {}, 201),
  // The accepted pushes, oldest first: all, or one subscription's.
  messages: (token?: string) => getJson<PushAttempt[]>(`/_capture/messages${tokenQuery(token)}`),
  // Every push with the status it got and why it was refused.
  requests: (token?: string) => getJson<PushAttempt[]>(`/_capture/requests${tokenQuery(token)}`),
  // Queues answers for one subscription's next pushes (or any push's, without a token).
  script: (token: string | undefined, ...responses: ScriptedResponse[]) =>
    postJson<{ pending: number }>("/_capture/script", token === undefined ? { responses } : { token, responses }, 200),
  // Forgets the recorded pushes (one subscription's), or everything.
  forgetMessages: (token?: string) => remove(`/_capture/messages${tokenQuery(token)}`),
  clear: () => remove("/_capture"),
};

// ---------------------------------------------------------------- the push routes
export type PushSubscription = Schemas["PushSubscription"];
export type SubscriptionRegistration = Schemas["PushSubscriptionRegistration"];

export const PUSH_PUBLIC_KEY = "/v1/push/public-key";
export const PUSH_SUBSCRIPTIONS = "/v1/push/subscriptions";
export const PUSH_SUBSCRIPTION = "/v1/push/subscriptions/{id}";

export function base64url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

// The public half of a new P-256 key pair, uncompressed: what a browser's p256dh, or a
// server's VAPID public key, is.
export async function p256PublicKey(): Promise<Uint8Array> {
  const pair = await crypto.subtle.generateKey({ name: "ECDH", namedCurve: "P-256" }, true, ["deriveBits"]);
  return new Uint8Array(await crypto.subtle.exportKey("raw", pair.publicKey));
}

// A browser's subscription at a push service of its own (a new endpoint each time).
export async function browserSubscription(fields: Partial<SubscriptionRegistration> = {}): Promise<SubscriptionRegistration> {
  return {
    endpoint: `https://push.example.test/send/${crypto.randomUUID()}`,
    expirationTime: null,
    keys: { p256dh: base64url(await p256PublicKey()), auth: base64url(crypto.getRandomValues(new Uint8Array(16))) },
    ...fields,
  };
}

// POST /v1/push/subscriptions with return=representation: the status (201 new, 200 already
// registered) and the subscription.
export async function register(
  api: Client,
  browser: SubscriptionRegistration,
  status: 200 | 201,
  headers: Record<string, string> = {},
): Promise<PushSubscription> {
  const response = await api.post("/push/subscriptions", browser, { ...representation, ...headers });
  return await expectStatus<PushSubscription>("POST", PUSH_SUBSCRIPTIONS, response, status);
}

export const listSubscriptions = (api: Client, query = ""): Promise<Page<PushSubscription>> =>
  listPage<PushSubscription>(api, PUSH_SUBSCRIPTIONS, query);
