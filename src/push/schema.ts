import { z } from "zod";
import { domainRule, id, timestamp } from "../http/schemas.ts";
import { AUTH_SECRET_PATTERN, base64UrlBytes, isP256Point, P256_PUBLIC_KEY_PATTERN } from "./keys.ts";

// The longest endpoint the table keeps (push_subscriptions_endpoint_check).
export const MAX_ENDPOINT_LENGTH = 2048;
// The last millisecond of 2999, the last year a timestamp of this API takes.
export const LAST_EXPIRATION_TIME = Date.UTC(3000, 0, 1) - 1;
// The most of a User-Agent header kept (push_subscriptions_user_agent_check).
export const MAX_USER_AGENT_LENGTH = 500;

const p256PublicKey = new RegExp(P256_PUBLIC_KEY_PATTERN);

// What PushSubscription.toJSON() gives in a browser, as it gives it: the endpoint its push
// service made, when that service will end it, and the keys a push is encrypted to.
export const pushSubscriptionBody = z.strictObject({
  endpoint: z.string().max(MAX_ENDPOINT_LENGTH)
    .regex(/^https?:\/\/[!-~]+$/, "A URL of the browser's push service, like https://fcm.googleapis.com/fcm/send/...")
    .meta({
      description: "The URL of the browser's push service. It must be https, name its host by name (not an IP address) and " +
        "carry no user name or password; one on this machine (localhost, 127.0.0.0/8, ::1) is refused unless the " +
        "deployment allows loopback endpoints. Those rules answer 422; a string that is not an http(s) URL of visible " +
        "ASCII characters answers 400.",
    }),
  expirationTime: z.number().min(0).max(LAST_EXPIRATION_TIME).nullable().optional().meta({
    description: "When the push service will end the subscription, in milliseconds since 1970-01-01 UTC; null or absent " +
      "when it did not say.",
  }),
  keys: z.strictObject({
    p256dh: z.string()
      .regex(p256PublicKey, "The browser's P-256 public key: base64url of 65 bytes starting with 0x04.")
      // The pattern fixes the length and the first byte; a string it refuses has that issue already.
      .refine((key) => !p256PublicKey.test(key) || isP256Point(base64UrlBytes(key)), {
        message: "The key is not a point on the P-256 curve: no push could be encrypted to it.",
        params: domainRule,
      })
      .meta({
        description: "The browser's public key (RFC 8291): base64url of the uncompressed P-256 point, 65 bytes starting " +
          "with 0x04. One of that form that is not on the curve answers 422.",
      }),
    auth: z.string().regex(new RegExp(AUTH_SECRET_PATTERN), "The authentication secret: base64url of 16 bytes.")
      .meta({ description: "The browser's authentication secret (RFC 8291): base64url of 16 bytes." }),
  }),
}).meta({
  id: "PushSubscriptionRegistration",
  description: "A browser's PushSubscription as its toJSON() gives it.",
});

export type PushSubscriptionRegistration = z.output<typeof pushSubscriptionBody>;

// The keys are not answered: the browser holds them, and nothing a client does needs them back.
export const pushSubscription = z.object({
  id,
  endpoint: z.string(),
  expiresAt: timestamp.nullable().meta({ description: "When the push service will end it, if it said." }),
  userAgent: z.string().nullable().meta({ description: "The User-Agent it was registered with, to tell a member's browsers apart." }),
  lastAcceptedAt: timestamp.nullable().meta({ description: "When its push service last accepted a push for it." }),
  createdAt: timestamp,
  updatedAt: timestamp,
}).meta({ id: "PushSubscription", description: "One browser of the caller's that receives the tenant's push notifications." });

export const pushPublicKey = z.object({
  publicKey: z.string().regex(p256PublicKey).meta({
    description: "The VAPID public key (RFC 8292), base64url of the uncompressed P-256 point, to give " +
      "pushManager.subscribe() as applicationServerKey.",
  }),
}).meta({ id: "PushPublicKey" });

// Where a push may go. The worker posts to whatever endpoint is stored, so one that names
// this machine or an address instead of a push service's host is refused, unless the
// deployment runs a local stand-in for a push service (allowLoopback). Returns why, or null.
export function endpointRefusal(endpoint: string, allowLoopback: boolean): string | null {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return "endpoint is not a URL.";
  }
  if (url.username !== "" || url.password !== "") return "endpoint must not carry a user name or password.";
  // The URL parser writes every form of an IPv4 address (0x7f.1, 2130706433) as a dotted quad.
  const host = url.hostname.toLowerCase();
  if (host === "localhost" || host.endsWith(".localhost") || /^127\.\d+\.\d+\.\d+$/.test(host) || host === "[::1]") {
    return allowLoopback ? null : "endpoint names this machine, which this deployment does not allow: register the URL the browser's push service gave.";
  }
  if (url.protocol !== "https:") return "endpoint must be an https URL: push services are reached over TLS.";
  if (/^\d+\.\d+\.\d+\.\d+$/.test(host) || host.startsWith("[")) {
    return "endpoint must name its push service by host name, not by IP address.";
  }
  return null;
}

// What is kept of a User-Agent header: without control characters, at most 500 characters.
export function userAgentOf(request: Request): string | null {
  const header = request.headers.get("user-agent");
  if (header === null) return null;
  // deno-lint-ignore no-control-regex
  const kept = Array.from(header.replace(/[\u0000-\u001f\u007f]/g, "").trim()).slice(0, MAX_USER_AGENT_LENGTH).join("");
  return kept === "" ? null : kept;
}
