// Push subscriptions for tests: a browser's subscription as PushSubscription.toJSON() gives
// it, with a real P-256 key pair's public half, and the push routes as a client calls them,
// checked against the contract.
import { type Client, expectStatus, listPage, type Page, representation, type Schemas } from "./api.ts";

export type PushSubscription = Schemas["PushSubscription"];
export type BrowserSubscription = Schemas["PushSubscriptionRegistration"];

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
export async function browserSubscription(fields: Partial<BrowserSubscription> = {}): Promise<BrowserSubscription> {
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
  browser: BrowserSubscription,
  status: 200 | 201,
  headers: Record<string, string> = {},
): Promise<PushSubscription> {
  const response = await api.post("/push/subscriptions", browser, { ...representation, ...headers });
  return await expectStatus<PushSubscription>("POST", PUSH_SUBSCRIPTIONS, response, status);
}

export const listSubscriptions = (api: Client, query = ""): Promise<Page<PushSubscription>> =>
  listPage<PushSubscription>(api, PUSH_SUBSCRIPTIONS, query);
