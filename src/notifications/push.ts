// The Web Push channel's sending side: one message to one browser subscription, as RFC 8030
// (the push protocol) describes it, identified with VAPID (RFC 8292) and encrypted with
// aes128gcm (RFC 8291). The web-push library encrypts and signs; this module sends with
// the fetch it is given, so the timeout, the refusal to follow redirects and the tests are
// ours (the library's own sender uses node's https module). docs/notifications-push.md
// says why this library and what each outcome asks of the caller.
import { Buffer } from "node:buffer";
import { createECDH } from "node:crypto";
import webpush from "web-push";
import { z } from "zod";
import { failedBeforeSending, retryAfterSeconds } from "./delivery.ts";

// The part of web-push this module uses, typed here: Deno sees the package untyped, and
// naming @types/web-push to it would bring an @types/node of another version into every
// type check. tsc checks this shape against @types/web-push (a devDependency) below.
type WebPushLibrary = {
  generateRequestDetails(
    subscription: { endpoint: string; keys: { p256dh: string; auth: string } },
    payload: string,
    options: {
      vapidDetails: VapidSettings;
      TTL: number;
      contentEncoding: "aes128gcm";
      urgency: PushUrgency;
      topic?: string;
    },
  ): { headers: Record<string, string | number>; body: Uint8Array };
};
const webPush: WebPushLibrary = webpush;

export type VapidSettings = { subject: string; publicKey: string; privateKey: string };

// A subscription as the project keeps it: the push resource's URL and the browser's keys.
export type PushSubscriptionKeys = { endpoint: string; p256dh: string; auth: string };

// Where a subscription's endpoint may point. A push service is always an https origin with
// a name; plain http (and loopback addresses) only for the local stack's push double.
export type PushEndpointPolicy = { allowLoopbackHttp: boolean };

export type PushSettings = PushEndpointPolicy & {
  // Null: push is disabled (disabledReason says so).
  vapid: VapidSettings | null;
  // How long the push service keeps a message for a browser that is offline (the TTL header).
  ttlSeconds: number;
  timeoutMs: number;
  fetch: typeof fetch;
  now: () => number;
};

export type PushResult =
  // The push service took the message (201, or any 2xx); `location` names the message there.
  | { outcome: "accepted"; location: string | null }
  // 404 or 410: the subscription has expired or was withdrawn; it must be removed.
  | { outcome: "gone"; status: number; reason: string }
  // Throttling (429), a fault of the push service (5xx), or no connection made: worth trying again.
  | { outcome: "transient"; reason: string; retryAfterSeconds: number | null }
  // No answer once the request may have reached the push service (a timeout, a broken
  // connection): it may have taken the message.
  | { outcome: "unknown"; reason: string }
  // Refused for good: a bad payload (400), VAPID refused (401, 403), too large (413), any
  // other 4xx or redirect, or a message or subscription that could not be sent at all.
  | { outcome: "permanent"; reason: string };

export const PUSH_URGENCIES = ["very-low", "low", "normal", "high"] as const;
export type PushUrgency = typeof PUSH_URGENCIES[number];
export type PushSendOptions = { urgency?: PushUrgency; topic?: string };

export type PushSender = {
  // Null when the sender can send; otherwise why it is disabled (the warning logged).
  disabledReason: string | null;
  // The key browsers subscribe with (applicationServerKey), when push is enabled.
  vapidPublicKey: string | null;
  send(subscription: PushSubscriptionKeys, payload: string, options?: PushSendOptions): Promise<PushResult>;
};

// RFC 8030 (7.2) lets a push service refuse anything larger, but not less than 4096 bytes
// of encrypted body: the most a message can count on everywhere.
export const PUSH_MESSAGE_MAX_BYTES = 4096;
// What aes128gcm adds to the text in the single record a message is (RFC 8188, 8291): a
// header of salt (16), record size (4), key id length (1) and the sender's public key (65),
// then a padding delimiter (1) and the authentication tag (16).
const AES128GCM_OVERHEAD_BYTES = 16 + 4 + 1 + 65 + 1 + 16;
export const PUSH_PAYLOAD_MAX_BYTES = PUSH_MESSAGE_MAX_BYTES - AES128GCM_OVERHEAD_BYTES;
// No push service hands out a longer URL, and the bound keeps what a browser may make us
// store (and call) small.
export const PUSH_ENDPOINT_MAX_LENGTH = 2048;
// RFC 8030 (5.4): a topic is at most 32 characters of the URL-safe base64 alphabet.
const TOPIC = /^[A-Za-z0-9_-]{1,32}$/;

// ---------------------------------------------------------------- validation

const BASE64URL = /^[A-Za-z0-9_-]*$/;

function base64urlBytes(value: string): Buffer | null {
  return BASE64URL.test(value) ? Buffer.from(value, "base64url") : null;
}

// P-256's field prime and the b of its equation y² = x³ - 3x + b (SEC 2, 2.4.2).
const P256_P = 2n ** 256n - 2n ** 224n + 2n ** 192n + 2n ** 96n - 1n;
const P256_B = 0x5ac635d8aa3a93e7b3ebbd55769886bc651d06b0cc53b0f63bce3c3e27d2604bn;

function bigIntOf(bytes: Uint8Array): bigint {
  return BigInt(`0x${Buffer.from(bytes).toString("hex")}`);
}

// An uncompressed P-256 point (0x04, x, y) that lies on the curve, in unpadded base64url:
// a browser's p256dh key, and a VAPID public key. The curve's equation is checked here:
// WebCrypto's importKey under Deno does not check it, and node's ECDH.convertKey, which
// does, is not implemented in the Deno the Edge Runtime runs.
function p256PointProblem(value: string): string | null {
  const bytes = base64urlBytes(value);
  if (!bytes) return "is not unpadded base64url";
  if (bytes.length !== 65 || bytes[0] !== 0x04) return "is not an uncompressed P-256 point (65 bytes, starting 0x04)";
  const x = bigIntOf(bytes.subarray(1, 33));
  const y = bigIntOf(bytes.subarray(33, 65));
  const onCurve = x < P256_P && y < P256_P &&
    (y * y - (x * x * x - 3n * x + P256_B)) % P256_P === 0n;
  return onCurve ? null : "is not a point on the P-256 curve";
}

// Why a browser's keys cannot be used, or null: p256dh its ECDH public key, auth the
// 16-byte secret it shares with the sender (RFC 8291, 3.2).
export function pushKeysProblem(keys: { p256dh: string; auth: string }): string | null {
  const point = p256PointProblem(keys.p256dh);
  if (point) return `the p256dh key ${point}`;
  const auth = base64urlBytes(keys.auth);
  if (!auth) return "the auth secret is not unpadded base64url";
  if (auth.length !== 16) return `the auth secret is ${auth.length} bytes, not 16`;
  return null;
}

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"]);
const IP_LITERAL = /^(\d{1,3}(\.\d{1,3}){3}|\[[0-9a-f:.]+\])$/i;

// Why a subscription's endpoint is not one to send to, or null. The server POSTs to this
// URL on a browser's word, so it is held to what push services hand out: https, a host
// name (never an address, nor localhost), no credentials. Loopback, over http too, only
// when the policy allows it: the local stack's push double.
export function pushEndpointProblem(endpoint: string, policy: PushEndpointPolicy): string | null {
  if (endpoint.length > PUSH_ENDPOINT_MAX_LENGTH) return `the endpoint is longer than ${PUSH_ENDPOINT_MAX_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return "the endpoint is not a URL";
  }
  if (url.username || url.password) return "the endpoint carries credentials";
  const loopback = LOOPBACK_HOSTS.has(url.hostname);
  if (loopback && policy.allowLoopbackHttp) {
    return url.protocol === "https:" || url.protocol === "http:" ? null : "the endpoint is not an http or https URL";
  }
  if (url.protocol !== "https:") return "the endpoint is not an https URL";
  if (loopback || url.hostname.endsWith(".localhost") || IP_LITERAL.test(url.hostname)) {
    return "the endpoint's host is an address or localhost, not a push service";
  }
  return null;
}

// 65 bytes in unpadded base64url are 87 characters; 16 bytes are 22.
const P256DH_PATTERN = /^[A-Za-z0-9_-]{87}$/;

// The body a browser's PushSubscription.toJSON() gives: {endpoint, expirationTime, keys:
// {p256dh, auth}}, the keys in unpadded base64url as browsers write them. Routes take it
// with the endpoint policy they run under.
export function pushSubscriptionSchema(policy: PushEndpointPolicy) {
  return z.strictObject({
    endpoint: z.string().max(PUSH_ENDPOINT_MAX_LENGTH).superRefine((endpoint, context) => {
      // A URL too long is refused by the length rule alone.
      const problem = endpoint.length > PUSH_ENDPOINT_MAX_LENGTH ? null : pushEndpointProblem(endpoint, policy);
      if (problem) context.addIssue({ code: "custom", message: problem });
    }).meta({ description: "The push resource's URL, as the browser's push service handed it out: https." }),
    expirationTime: z.number().int().nonnegative().nullable().optional()
      .meta({ description: "When the subscription expires, in milliseconds since 1970 (UTC); null or absent when it does not." }),
    keys: z.strictObject({
      p256dh: z.string().regex(P256DH_PATTERN, "An uncompressed P-256 public key (65 bytes) in unpadded base64url.")
        .superRefine((p256dh, context) => {
          // The pattern's own message says what is wrong with a value of another length.
          const problem = P256DH_PATTERN.test(p256dh) ? p256PointProblem(p256dh) : null;
          if (problem) context.addIssue({ code: "custom", message: `The p256dh key ${problem}.` });
        })
        .meta({ description: "The browser's ECDH public key: an uncompressed P-256 point, 65 bytes in unpadded base64url." }),
      auth: z.string().regex(/^[A-Za-z0-9_-]{22}$/, "A 16-byte secret in unpadded base64url.")
        .meta({ description: "The browser's authentication secret: 16 bytes in unpadded base64url." }),
    }),
  }).meta({ description: "A Web Push subscription, as the browser's PushSubscription.toJSON() gives it." });
}

export type PushSubscriptionJson = z.output<ReturnType<typeof pushSubscriptionSchema>>;

export type ParsedPushSubscription =
  | { ok: true; subscription: PushSubscriptionKeys & { expirationTime: number | null } }
  | { ok: false; problems: { path: string; message: string }[] };

// The schema's verdict on one body, flattened to what the project stores.
export function parsePushSubscription(input: unknown, policy: PushEndpointPolicy): ParsedPushSubscription {
  const parsed = pushSubscriptionSchema(policy).safeParse(input);
  if (!parsed.success) {
    return { ok: false, problems: parsed.error.issues.map((issue) => ({ path: issue.path.join("."), message: issue.message })) };
  }
  const { endpoint, expirationTime, keys } = parsed.data;
  return { ok: true, subscription: { endpoint, p256dh: keys.p256dh, auth: keys.auth, expirationTime: expirationTime ?? null } };
}

// ---------------------------------------------------------------- settings

const VAPID_NAMES = { publicKey: "VAPID_PUBLIC_KEY", privateKey: "VAPID_PRIVATE_KEY", subject: "VAPID_SUBJECT" } as const;

// The VAPID settings from a function's environment: null when none of the three is set.
export function vapidSettingsFromEnv(env: (name: string) => string | undefined): VapidSettings | null {
  const publicKey = env(VAPID_NAMES.publicKey) ?? "";
  const privateKey = env(VAPID_NAMES.privateKey) ?? "";
  const subject = env(VAPID_NAMES.subject) ?? "";
  return publicKey || privateKey || subject ? { publicKey, privateKey, subject } : null;
}

// Whether the endpoints may be loopback http: only the local stack sets
// PUSH_ALLOW_LOOPBACK_HTTP=true, for its push double.
export function endpointPolicyFromEnv(env: (name: string) => string | undefined): PushEndpointPolicy {
  return { allowLoopbackHttp: env("PUSH_ALLOW_LOOPBACK_HTTP") === "true" };
}

// Why these VAPID settings cannot sign, or null. Checked once, when the sender is made, so
// a mistyped secret disables push with a reason instead of failing every message.
function vapidProblem(vapid: VapidSettings | null): string | null {
  if (!vapid) return "push is disabled: VAPID_PUBLIC_KEY, VAPID_PRIVATE_KEY and VAPID_SUBJECT are not set";
  const missing = (Object.keys(VAPID_NAMES) as (keyof VapidSettings)[]).filter((key) => !vapid[key]).map((key) => VAPID_NAMES[key]);
  if (missing.length > 0) return `push is disabled: ${missing.join(" and ")} ${missing.length === 1 ? "is" : "are"} not set`;
  let subject: URL | null = null;
  try {
    subject = new URL(vapid.subject);
  } catch {
    // Reported below.
  }
  if (!subject || (subject.protocol !== "mailto:" && subject.protocol !== "https:") || subject.href.length <= subject.protocol.length) {
    return "push is disabled: VAPID_SUBJECT is not a mailto: or https: URL (like mailto:ops@example.com)";
  }
  const point = p256PointProblem(vapid.publicKey);
  if (point) return `push is disabled: VAPID_PUBLIC_KEY ${point}`;
  const privateKey = base64urlBytes(vapid.privateKey);
  if (!privateKey || privateKey.length !== 32) return "push is disabled: VAPID_PRIVATE_KEY is not 32 bytes of unpadded base64url";
  // A private key that is not the public key's half would sign every message in vain.
  let derived: string;
  try {
    const curve = createECDH("prime256v1");
    curve.setPrivateKey(privateKey);
    derived = curve.getPublicKey("base64url");
  } catch {
    return "push is disabled: VAPID_PRIVATE_KEY is not a P-256 private key";
  }
  if (derived !== vapid.publicKey) return "push is disabled: VAPID_PRIVATE_KEY is not the private half of VAPID_PUBLIC_KEY";
  return null;
}

// ---------------------------------------------------------------- sending

// At most this much of a push service's answer goes into a reason, on one line.
const DETAIL_MAX = 200;

async function detailOf(response: Response): Promise<string> {
  const text = await response.text().catch(() => "");
  const line = text.replace(/\s+/g, " ").trim();
  if (!line) return response.statusText || "no detail";
  return line.length > DETAIL_MAX ? `${line.slice(0, DETAIL_MAX)}…` : line;
}

export function createPushSender(settings: PushSettings): PushSender {
  if (!Number.isInteger(settings.ttlSeconds) || settings.ttlSeconds < 0) {
    throw new RangeError(`ttlSeconds must be a whole number of seconds from 0, not ${settings.ttlSeconds}`);
  }
  if (!(settings.timeoutMs > 0)) throw new RangeError(`timeoutMs must be positive, not ${settings.timeoutMs}`);
  const disabledReason = vapidProblem(settings.vapid);
  const vapid = disabledReason ? null : settings.vapid;

  return {
    disabledReason,
    vapidPublicKey: vapid?.publicKey ?? null,
    async send(subscription, payload, options = {}): Promise<PushResult> {
      if (!vapid) return { outcome: "permanent", reason: disabledReason ?? "push is disabled" };
      const unusable = pushEndpointProblem(subscription.endpoint, settings) ?? pushKeysProblem(subscription);
      if (unusable) return { outcome: "permanent", reason: `the subscription cannot be used: ${unusable}` };
      if (options.topic !== undefined && !TOPIC.test(options.topic)) {
        return { outcome: "permanent", reason: "the topic is not 1 to 32 characters of the URL-safe base64 alphabet" };
      }
      if (options.urgency !== undefined && !PUSH_URGENCIES.includes(options.urgency)) {
        return { outcome: "permanent", reason: `the urgency ${options.urgency} is not one of ${PUSH_URGENCIES.join(", ")}` };
      }
      // Push services need not take a body of more than 4096 bytes, nor does a message
      // without a body carry anything for the browser to show.
      const payloadBytes = Buffer.byteLength(payload, "utf8");
      if (payloadBytes === 0) return { outcome: "permanent", reason: "the payload is empty" };
      if (payloadBytes > PUSH_MESSAGE_MAX_BYTES) return tooLarge(payloadBytes);

      let request: ReturnType<WebPushLibrary["generateRequestDetails"]>;
      try {
        request = webPush.generateRequestDetails(
          { endpoint: subscription.endpoint, keys: { p256dh: subscription.p256dh, auth: subscription.auth } },
          payload,
          {
            vapidDetails: vapid,
            TTL: settings.ttlSeconds,
            contentEncoding: "aes128gcm",
            urgency: options.urgency ?? "normal",
            ...(options.topic !== undefined ? { topic: options.topic } : {}),
          },
        );
      } catch (error) {
        return { outcome: "permanent", reason: `the message could not be encrypted and signed: ${String(error)}` };
      }
      if (request.body.length > PUSH_MESSAGE_MAX_BYTES) return tooLarge(payloadBytes, request.body.length);

      const origin = new URL(subscription.endpoint).origin;
      const headers = new Headers();
      for (const [name, value] of Object.entries(request.headers)) {
        // fetch counts the body itself.
        if (name.toLowerCase() !== "content-length") headers.set(name, String(value));
      }
      let response: Response;
      try {
        response = await settings.fetch(subscription.endpoint, {
          method: "POST",
          headers,
          body: new Uint8Array(request.body),
          // A push service answers where it is; a redirect is not followed to wherever it points.
          redirect: "manual",
          signal: AbortSignal.timeout(settings.timeoutMs),
        });
      } catch (error) {
        const timedOut = error instanceof DOMException && error.name === "TimeoutError";
        const reason = timedOut
          ? `the push service at ${origin} did not answer within ${settings.timeoutMs} ms`
          : `the push service at ${origin} did not answer: ${String(error)}`;
        return failedBeforeSending(error) ? { outcome: "transient", reason, retryAfterSeconds: null } : { outcome: "unknown", reason };
      }
      const { status } = response;
      if (status >= 200 && status < 300) {
        await response.body?.cancel();
        return { outcome: "accepted", location: response.headers.get("location") };
      }
      const reason = `the push service at ${origin} answered ${status}: ${await detailOf(response)}`;
      if (status === 404 || status === 410) return { outcome: "gone", status, reason };
      if (status === 429 || status >= 500) {
        return { outcome: "transient", reason, retryAfterSeconds: retryAfterSeconds(response.headers.get("retry-after"), settings.now()) };
      }
      // 3xx (not followed), 400, 401, 403, 413 and every other refusal.
      return { outcome: "permanent", reason };
    },
  };
}

function tooLarge(payloadBytes: number, encryptedBytes?: number): PushResult {
  const size = encryptedBytes === undefined ? `${payloadBytes} bytes` : `${payloadBytes} bytes (${encryptedBytes} encrypted)`;
  return {
    outcome: "permanent",
    reason: `the payload is ${size}, more than the ${PUSH_MESSAGE_MAX_BYTES} encrypted bytes every push service must take ` +
      `(${PUSH_PAYLOAD_MAX_BYTES} bytes of payload)`,
  };
}
