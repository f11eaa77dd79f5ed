// A loopback double of a Web Push service (RFC 8030, with VAPID, RFC 8292, and aes128gcm
// messages, RFC 8291), for tests and local runs: the push side of local/sendgrid-capture
// and local/sms-capture.
//   POST   /push/{token}            a push message to the subscription {token}: 201 with a
//                                   Location naming the message, or the refusal a push service gives
//   POST   /_capture/subscriptions  {applicationServerKey?}: 201 {token, endpoint}, a new
//                                   subscription; with a key, pushes to it must be signed with that key
//                                   (403 otherwise), as a browser's subscription made with it is
//   GET    /_capture/messages       the accepted messages, oldest first; ?token= those of one subscription
//   GET    /_capture/requests       every attempt with the status it got (and why); ?token= likewise
//   POST   /_capture/script         {token?, responses: [{status, headers?, body?, delayMs?}]}: the next
//                                   pushes (to that token, or to any) get these answers in order, then 201
//   DELETE /_capture/messages       forget the recorded attempts (?token=: of one subscription)
//   DELETE /_capture                forget everything: attempts, scripts and subscriptions
// Run with --port.
//
// Any token is a subscription: a test makes one up (or asks for one above) and sends to
// http://127.0.0.1:{port}/push/{token}. A push is checked as a push service checks it, in
// this order:
//   401 (with WWW-Authenticate: vapid) when there is no Authorization of the vapid scheme;
//   403 when it is there but invalid: t a JWT signed with ES256 by the key k (an uncompressed
//       P-256 point), whose aud is this service's origin, exp in the future and at most 24
//       hours ahead, sub a mailto: or https: URL; or k not the key the subscription was made with;
//   400 without a TTL header of whole seconds, with an Urgency other than very-low, low,
//       normal or high, or a Topic that is not 1 to 32 URL-safe base64 characters;
//   413 for a body of more than 4096 bytes;
//   400 for a body not in Content-Encoding aes128gcm, or whose aes128gcm header is not one
//       of Web Push (the sender's 65-byte public key as the key id, one record).
// A push without a body (a tickle) needs no Content-Encoding. Scripted answers come after
// those checks, as a subscription that is gone or a throttled service answers a valid push.
import { jwtVerify } from "jose";
import { readFlags, requireFlag } from "../args.ts";
import { createTargetedScripts, isRecord, json, loggingCalls, sleep } from "../capture.ts";

// One push as recorded; test/support/push.ts reads these through /_capture.
export type Attempt = {
  receivedAt: string;
  token: string;
  status: number;
  // Why the push was refused; null when it was accepted, or answered from a script.
  refusal: string | null;
  // The message's id in its Location, when accepted.
  messageId: string | null;
  ttl: string | null;
  urgency: string | null;
  topic: string | null;
  contentEncoding: string | null;
  // The VAPID key (k) and the JWT's sub, when the Authorization header carried them.
  vapidPublicKey: string | null;
  vapidSubject: string | null;
  // The body as sent (base64): the test decrypts it with the browser's keys.
  bodyBase64: string;
};

const flags = readFlags(Deno.args);
const port = Number(requireFlag(flags, "port"));

// RFC 8030 (7.2): a push service must take at least 4096 bytes; this one takes no more.
const MAX_BODY_BYTES = 4096;
// RFC 8292 (2): exp no more than 24 hours after the request.
const MAX_EXP_AHEAD_SECONDS = 24 * 3600;
const URGENCIES = new Set(["very-low", "low", "normal", "high"]);
const TOPIC = /^[A-Za-z0-9_-]{1,32}$/;
const BASE64URL = /^[A-Za-z0-9_-]+$/;
const PUSH_PATH = /^\/push\/([A-Za-z0-9_-]{1,200})$/;

let attempts: Attempt[] = [];
// Scripted answers for one subscription's next pushes, and for any push after those.
const scripts = createTargetedScripts("token");
// Subscriptions made with an application server key: pushes to them must carry it.
let restrictedTo = new Map<string, string>();

// The error body of a push service: a status, its name and what was wrong.
const STATUS_NAMES: Record<number, string> = {
  400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed", 413: "Payload Too Large",
};

function refusal(status: number, message: string, headers: Record<string, string> = {}): Response {
  return json(status, { code: status, error: STATUS_NAMES[status] ?? "Error", message }, headers);
}

function base64urlDecode(value: string): Uint8Array | null {
  if (!BASE64URL.test(value)) return null;
  const base64 = value.replaceAll("-", "+").replaceAll("_", "/");
  try {
    return Uint8Array.from(atob(base64 + "=".repeat((4 - base64.length % 4) % 4)), (c) => c.charCodeAt(0));
  } catch {
    return null;
  }
}

// `vapid t=<JWT>, k=<key>` (RFC 8292, 3): the scheme, then comma-separated parameters.
function vapidParameters(authorization: string): Map<string, string> | null {
  const match = /^vapid\s+(.*)$/is.exec(authorization.trim());
  if (!match) return null;
  const parameters = new Map<string, string>();
  for (const part of match[1]!.split(",")) {
    const at = part.indexOf("=");
    if (at < 0) continue;
    const value = part.slice(at + 1).trim();
    parameters.set(part.slice(0, at).trim().toLowerCase(), value.replace(/^"(.*)"$/, "$1"));
  }
  return parameters;
}

// Why the VAPID credentials are invalid for a push to `origin`, or null; and the key and
// subject they name.
async function checkVapid(parameters: Map<string, string>, origin: string) {
  const token = parameters.get("t");
  const key = parameters.get("k");
  const named = { vapidPublicKey: key ?? null, vapidSubject: null as string | null };
  if (!token || !key) return { ...named, problem: "the vapid credentials need both t (the JWT) and k (the public key)" };
  const point = base64urlDecode(key);
  if (!point || point.length !== 65 || point[0] !== 0x04) {
    return { ...named, problem: "k is not an uncompressed P-256 public key in unpadded base64url" };
  }
  let claims: Record<string, unknown>;
  try {
    const publicKey = await crypto.subtle.importKey("raw", point.slice(), { name: "ECDSA", namedCurve: "P-256" }, false, ["verify"]);
    ({ payload: claims } = await jwtVerify(token, publicKey, { algorithms: ["ES256"], requiredClaims: ["exp"] }));
  } catch (error) {
    return { ...named, problem: `the JWT is not valid for k: ${error instanceof Error ? error.message : String(error)}` };
  }
  const subject = typeof claims.sub === "string" ? claims.sub : null;
  named.vapidSubject = subject;
  if (claims.aud !== origin) return { ...named, problem: `the JWT's aud is ${JSON.stringify(claims.aud)}, not this push service's origin ${origin}` };
  const exp = claims.exp as number;
  if (exp > Math.floor(Date.now() / 1000) + MAX_EXP_AHEAD_SECONDS) {
    return { ...named, problem: "the JWT's exp is more than 24 hours ahead" };
  }
  let subjectUrl: URL | null = null;
  try {
    subjectUrl = subject === null ? null : new URL(subject);
  } catch {
    // Reported below.
  }
  if (!subjectUrl || (subjectUrl.protocol !== "mailto:" && subjectUrl.protocol !== "https:")) {
    return { ...named, problem: `the JWT's sub ${JSON.stringify(claims.sub)} is not a mailto: or https: URL` };
  }
  return { ...named, problem: null };
}

// Why an aes128gcm body is not a Web Push message, or null (RFC 8188, 2.1; RFC 8291, 4):
// salt (16), record size (4), key id length (1), the key id (the sender's 65-byte public
// key), then one record of ciphertext with its 16-byte tag.
function aes128gcmProblem(body: Uint8Array): string | null {
  if (body.length < 21) return "the body is shorter than an aes128gcm header";
  const view = new DataView(body.buffer, body.byteOffset, body.byteLength);
  const recordSize = view.getUint32(16);
  const keyIdLength = body[20]!;
  if (keyIdLength !== 65 || body[21] !== 0x04) return "the aes128gcm key id is not the sender's uncompressed P-256 public key";
  const records = body.length - 21 - keyIdLength;
  if (recordSize < 18) return "the aes128gcm record size is below 18";
  if (records < 17) return "the aes128gcm body holds no record";
  if (records > recordSize) return "the aes128gcm body holds more than one record";
  return null;
}

async function push(request: Request, token: string): Promise<Response> {
  const receivedAt = new Date().toISOString();
  const origin = new URL(request.url).origin;
  const body = new Uint8Array(await request.arrayBuffer());
  const headers = request.headers;
  const attempt: Attempt = {
    receivedAt, token, status: 0, refusal: null, messageId: null,
    ttl: headers.get("ttl"), urgency: headers.get("urgency"), topic: headers.get("topic"),
    contentEncoding: headers.get("content-encoding"), vapidPublicKey: null, vapidSubject: null,
    bodyBase64: btoa(Array.from(body, (byte) => String.fromCharCode(byte)).join("")),
  };
  const refuse = (status: number, message: string, extra: Record<string, string> = {}) => {
    attempts.push({ ...attempt, status, refusal: message });
    return refusal(status, message, extra);
  };

  const parameters = vapidParameters(headers.get("authorization") ?? "");
  if (!parameters) return refuse(401, "a push needs vapid authorization (RFC 8292)", { "www-authenticate": "vapid" });
  const vapid = await checkVapid(parameters, origin);
  attempt.vapidPublicKey = vapid.vapidPublicKey;
  attempt.vapidSubject = vapid.vapidSubject;
  if (vapid.problem) return refuse(403, vapid.problem);
  const required = restrictedTo.get(token);
  if (required && required !== vapid.vapidPublicKey) {
    return refuse(403, "k is not the application server key this subscription was made with");
  }

  const ttl = headers.get("ttl");
  if (ttl === null || !/^\d{1,10}$/.test(ttl.trim())) return refuse(400, "a push needs a TTL header of whole seconds (RFC 8030, 5.2)");
  const urgency = headers.get("urgency");
  if (urgency !== null && !URGENCIES.has(urgency)) return refuse(400, `Urgency ${urgency} is not very-low, low, normal or high`);
  const topic = headers.get("topic");
  if (topic !== null && !TOPIC.test(topic)) return refuse(400, "a Topic is 1 to 32 characters of the URL-safe base64 alphabet");
  if (body.length > MAX_BODY_BYTES) return refuse(413, `the body is ${body.length} bytes, more than ${MAX_BODY_BYTES}`);
  if (body.length > 0) {
    // A push service cannot read a message in another encoding on the browser's behalf; it
    // refuses it as a bad request, as the push services do.
    if (headers.get("content-encoding")?.toLowerCase() !== "aes128gcm") return refuse(400, "a body needs Content-Encoding: aes128gcm");
    const problem = aes128gcmProblem(body);
    if (problem) return refuse(400, problem);
  }

  const scripted = scripts.take(token);
  if (scripted?.delayMs) await sleep(scripted.delayMs);
  if (scripted && (scripted.status < 200 || scripted.status > 299)) {
    attempts.push({ ...attempt, status: scripted.status });
    if (scripted.body !== undefined) return json(scripted.status, scripted.body, scripted.headers);
    return json(scripted.status, { code: scripted.status, error: "Scripted", message: `scripted ${scripted.status}` }, scripted.headers);
  }

  const messageId = crypto.randomUUID();
  attempts.push({ ...attempt, status: 201, messageId });
  // RFC 8030 (5.2): the TTL kept is echoed; the Location names the message resource.
  return new Response(null, {
    status: 201,
    headers: { location: `${origin}/message/${messageId}`, ttl: ttl.trim(), ...scripted?.headers },
  });
}

async function subscribe(request: Request): Promise<Response> {
  const body: unknown = await request.json().catch(() => ({}));
  const key = isRecord(body) ? body.applicationServerKey : undefined;
  const point = typeof key === "string" ? base64urlDecode(key) : null;
  if (key !== undefined && (!point || point.length !== 65 || point[0] !== 0x04)) {
    return json(400, { message: "applicationServerKey is an uncompressed P-256 public key in unpadded base64url" });
  }
  const token = crypto.randomUUID().replaceAll("-", "");
  if (typeof key === "string") restrictedTo.set(token, key);
  return json(201, { token, endpoint: `${new URL(request.url).origin}/push/${token}` });
}

function control(request: Request): Response | Promise<Response> | null {
  const url = new URL(request.url);
  const token = url.searchParams.get("token");
  const ofToken = (attempt: Attempt) => token === null || attempt.token === token;
  switch (`${request.method} ${url.pathname}`) {
    case "GET /_capture/messages":
      return json(200, attempts.filter((attempt) => attempt.status === 201 && ofToken(attempt)));
    case "GET /_capture/requests":
      return json(200, attempts.filter(ofToken));
    case "DELETE /_capture/messages":
      attempts = attempts.filter((attempt) => !ofToken(attempt));
      return new Response(null, { status: 204 });
    case "POST /_capture/script":
      return scripts.set(request);
    case "POST /_capture/subscriptions":
      return subscribe(request);
    case "DELETE /_capture":
      attempts = [];
      scripts.clear();
      restrictedTo = new Map();
      return new Response(null, { status: 204 });
    default:
      return null;
  }
}

Deno.serve({ hostname: "127.0.0.1", port, onListen: () => {} }, loggingCalls((request) => {
  const { pathname } = new URL(request.url);
  const pushPath = PUSH_PATH.exec(pathname);
  if (pushPath) {
    if (request.method === "POST") return push(request, pushPath[1]!);
    return refusal(405, "a push resource takes POST", { allow: "POST" });
  }
  return control(request) ?? refusal(404, "no such resource");
}));
