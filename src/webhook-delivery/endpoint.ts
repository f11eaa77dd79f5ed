// Where a webhook may be posted, and the post itself. A subscription's URL is a tenant's
// word, and the server posts to it: unchecked, it would make our servers call this machine,
// the provider's private network or the cloud's metadata service for anyone who can save a
// URL. So a URL is checked when it is saved (checkEndpointUrl: https, no credentials, no
// address or name that is not on the public internet) and again at every delivery, after
// its name is resolved: every address the name has must be public, and the connection goes
// to one of exactly those addresses, so a name that resolves elsewhere a moment later (DNS
// rebinding) changes nothing.
//
// The post goes through node:http and node:https rather than fetch: their `lookup` option
// hands the connection the addresses already checked, while the URL's host name stays the
// Host header, the TLS server name (SNI) and the name the certificate is verified for.
// Deno's fetch has no such option (Deno.createHttpClient's tcp "proxy" connects to a
// chosen address, but then speaks plain HTTP to an https URL). test/webhook-delivery/
// endpoint.test.ts proves both paths under Deno: plain http, and https to a server whose
// certificate names only the URL's host, reached at the address the resolver gave. Under
// Deno, node:https reads the runtime's root certificates only with --allow-sys and
// --allow-env, which the stack gives its functions (scripts/stack.sh); without them a post
// to an https endpoint throws NotCapable, a deployment's mistake rather than the endpoint's.
import { Buffer } from "node:buffer";
import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import { ADDRESS_KIND_NAMES, addressBytes, type AddressKind, addressKind } from "./addresses.ts";

// Loopback (localhost, 127.0.0.0/8, ::1), by plain http as well, only for the local stack's
// receiver double: never where tenants save URLs, or the worker would post to this machine.
export type WebhookEndpointPolicy = { allowLoopbackHttp: boolean };

// From a function's environment: WEBHOOKS_ALLOW_LOOPBACK_HTTP, true or false (unset is
// false). Anything else stops the function, as any malformed setting does, rather than
// guess which way a typo leans.
export function webhookEndpointPolicyFromEnv(env: (name: string) => string | undefined): WebhookEndpointPolicy {
  const flag = env("WEBHOOKS_ALLOW_LOOPBACK_HTTP") || "false";
  if (flag !== "true" && flag !== "false") throw new Error("WEBHOOKS_ALLOW_LOOPBACK_HTTP must be true or false");
  return { allowLoopbackHttp: flag === "true" };
}

// As webhook_subscriptions_url_check has it.
export const WEBHOOK_URL_MAX_LENGTH = 2000;

export type EndpointRefusalReason =
  // Not a URL, or longer than WEBHOOK_URL_MAX_LENGTH.
  | "invalid-url"
  // Not https (http only to loopback, when the policy allows it).
  | "scheme-not-allowed"
  // user:password@ in the URL.
  | "credentials-in-url"
  // A name that is never on the public internet: localhost, .local, .internal, a bare label.
  | "host-not-allowed"
  // An address (written in the URL, or one the name resolves to) that is not public.
  | "address-not-allowed";

export type EndpointCheck =
  | { ok: true; url: URL }
  | { ok: false; reason: EndpointRefusalReason; message: string };

// Names that never reach the public internet: RFC 6761's localhost, mDNS's .local, the
// private-use .internal and home networks' .home.arpa.
const LOCAL_SUFFIXES = [".local", ".internal", ".home.arpa"];

type Host =
  | { type: "address"; address: string; loopback: boolean }
  | { type: "name"; name: string; loopback: boolean };

type CheckedEndpoint = { ok: true; url: URL; host: Host } | Extract<EndpointCheck, { ok: false }>;

function refusal(reason: EndpointRefusalReason, message: string): Extract<EndpointCheck, { ok: false }> {
  return { ok: false, reason, message };
}

// "10.0.0.5 is a private address, …", or "hooks.example.com resolves to 10.0.0.5, which is …".
function addressRefusal(address: string, kind: AddressKind, name?: string) {
  const subject = name === undefined ? address : `${name} resolves to ${address}, which`;
  return refusal("address-not-allowed", `${subject} is ${ADDRESS_KIND_NAMES[kind]}, not one on the public internet`);
}

function checkEndpoint(text: string, policy: WebhookEndpointPolicy): CheckedEndpoint {
  if (text.length > WEBHOOK_URL_MAX_LENGTH) return refusal("invalid-url", `the URL is longer than ${WEBHOOK_URL_MAX_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return refusal("invalid-url", "the endpoint is not a URL");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return refusal("scheme-not-allowed", "the endpoint must be an https URL");
  if (url.username || url.password) return refusal("credentials-in-url", "the endpoint's URL carries a user name or password");

  // The URL parser has lowercased the host and written any IPv4 form as a dotted quad.
  const hostname = url.hostname.replace(/\.$/, "");
  let host: Host;
  const kind = addressKind(hostname);
  if (kind !== null) {
    const loopback = kind === "loopback" && policy.allowLoopbackHttp;
    if (kind !== "public" && !loopback) return addressRefusal(hostname, kind);
    host = { type: "address", address: hostname.replace(/^\[|\]$/g, ""), loopback };
  } else {
    const localhost = hostname === "localhost" || hostname.endsWith(".localhost");
    if (localhost && !policy.allowLoopbackHttp) return refusal("host-not-allowed", `${hostname} is this machine, not a receiver on the internet`);
    if (LOCAL_SUFFIXES.some((suffix) => hostname.endsWith(suffix))) {
      return refusal("host-not-allowed", `${hostname} is a name on a local network, not on the internet`);
    }
    // A bare label is completed from the resolver's search domains: a local network's name.
    if (!localhost && !hostname.includes(".")) return refusal("host-not-allowed", `${hostname} is not a fully qualified domain name`);
    host = { type: "name", name: hostname, loopback: localhost };
  }
  if (url.protocol === "http:" && !host.loopback) {
    const also = policy.allowLoopbackHttp ? " (http only to this machine)" : "";
    return refusal("scheme-not-allowed", `the endpoint must be an https URL${also}`);
  }
  return { ok: true, url, host };
}

// Whether a URL may be saved as a subscription's endpoint: https to a name or public
// address, no credentials, and loopback (by http too) only when the policy allows it. The
// reason is for machines (an API's error code), the message for the person who typed it.
export function checkEndpointUrl(url: string, policy: WebhookEndpointPolicy): EndpointCheck {
  const checked = checkEndpoint(url, policy);
  return checked.ok ? { ok: true, url: checked.url } : checked;
}

// ---------------------------------------------------------------- resolving

// Every address `hostname` has (A and AAAA); rejects when it has none or cannot be resolved
// by the time `signal` aborts.
export type ResolveHost = (hostname: string, signal: AbortSignal) => Promise<string[]>;

// Deno's resolver, both record types at once. One type failing while the other answers is
// enough: only the addresses seen are ever connected to.
export const resolveWithDenoDns: ResolveHost = async (hostname, signal) => {
  const lookups = await Promise.allSettled([
    Deno.resolveDns(hostname, "A", { signal }),
    Deno.resolveDns(hostname, "AAAA", { signal }),
  ]);
  const addresses = lookups.flatMap((lookup) => lookup.status === "fulfilled" ? lookup.value : []);
  if (addresses.length > 0) return addresses;
  const failed = lookups.find((lookup) => lookup.status === "rejected");
  throw failed ? failed.reason : new Error(`${hostname} has no A or AAAA record`);
};

// ---------------------------------------------------------------- posting

export const WEBHOOK_USER_AGENT = "pms-webhooks/1";

export type WebhookPost = {
  url: string;
  // The signature's headers (signing.ts); content-type, user-agent and content-length are ours.
  headers: Readonly<Record<string, string>>;
  // The exact text that was signed, sent as UTF-8.
  body: string;
  policy: WebhookEndpointPolicy;
  // The time from the start to the response's status line: resolution, connection, TLS and
  // the request included. Default 10 s.
  timeoutMs?: number;
  // How much of the response body is kept as the snippet (the attempt's record keeps 1 KiB).
  // Default 1024 bytes.
  maxResponseBytes?: number;
  // The most of a response body read before the connection is closed: a receiver that
  // streams without end costs us no more. Default 64 KiB.
  maxReadBytes?: number;
  // Default: resolveWithDenoDns.
  resolve?: ResolveHost;
  // A monotonic clock in milliseconds, for the duration. Default performance.now.
  now?: () => number;
  // When given, the only certificates trusted as roots for https (PEM): a test's own
  // self-signed server. Default: the runtime's roots.
  trustedCertificates?: readonly string[];
};

export type NetworkErrorReason =
  | "dns-failure"
  | "timeout"
  | "connection-refused"
  // The certificate is not valid for the host, or TLS could not be agreed.
  | "tls-failure"
  // The endpoint's answer is not HTTP.
  | "protocol-error"
  // Reset, unreachable, or any other failure of the connection.
  | "connection-failed";

export type WebhookPostResult =
  // The endpoint answered: any status, a redirect too (never followed). The snippet is the
  // start of the body as text, at most maxResponseBytes of it; retryAfter is the header as
  // sent, for a 429 or 503.
  | { outcome: "response"; status: number; snippet: string; retryAfter: string | null; durationMs: number }
  // Not sent: the URL, or an address its name resolves to, is not one to post to.
  | { outcome: "refused"; reason: EndpointRefusalReason; message: string; durationMs: number }
  // Sent nowhere, or no answer: worth another attempt.
  | { outcome: "network-error"; reason: NetworkErrorReason; message: string; durationMs: number };

// A reason goes into the attempt's record (webhook_attempts.error holds 1000 characters).
const MESSAGE_MAX = 300;

function shortened(text: string): string {
  return text.length > MESSAGE_MAX ? `${text.slice(0, MESSAGE_MAX)}…` : text;
}

function positiveInteger(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value <= 0) throw new RangeError(`${name} must be a positive whole number, not ${value}`);
  return value;
}

function networkErrorReason(code: string | undefined): NetworkErrorReason {
  if (code === "ECONNREFUSED") return "connection-refused";
  if (code === "ETIMEDOUT") return "timeout";
  if (code?.startsWith("HPE_")) return "protocol-error";
  if (code && /^ERR_(TLS|SSL)_|CERT|^UNABLE_TO_|^HOSTNAME_MISMATCH$/.test(code)) return "tls-failure";
  return "connection-failed";
}

// Posts one webhook. Never throws for anything the endpoint or the network does; throws
// only on a caller's mistake (an option out of range, a header value HTTP cannot carry).
export async function postWebhook(post: WebhookPost): Promise<WebhookPostResult> {
  const timeoutMs = positiveInteger("timeoutMs", post.timeoutMs ?? 10_000);
  const maxResponseBytes = positiveInteger("maxResponseBytes", post.maxResponseBytes ?? 1024);
  const maxReadBytes = positiveInteger("maxReadBytes", post.maxReadBytes ?? 65_536);
  if (maxReadBytes < maxResponseBytes) throw new RangeError("maxReadBytes must be at least maxResponseBytes");
  const now = post.now ?? (() => performance.now());
  const resolve = post.resolve ?? resolveWithDenoDns;
  const started = now();
  const elapsed = () => Math.max(0, Math.round(now() - started));

  const checked = checkEndpoint(post.url, post.policy);
  if (!checked.ok) return { outcome: "refused", reason: checked.reason, message: checked.message, durationMs: elapsed() };
  const { url, host } = checked;

  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), timeoutMs);
  const timedOut = (): WebhookPostResult => ({
    outcome: "network-error",
    reason: "timeout",
    message: `${url.origin} did not answer within ${timeoutMs} ms`,
    durationMs: elapsed(),
  });
  try {
    let addresses: string[];
    if (host.type === "address") {
      addresses = [host.address];
    } else if (host.loopback) {
      // RFC 6761: localhost is this machine, whatever a resolver says.
      addresses = ["127.0.0.1"];
    } else {
      const resolved = await resolveBefore(resolve, host.name, deadline.signal);
      if (deadline.signal.aborted) return timedOut();
      if (!resolved.ok) {
        return { outcome: "network-error", reason: "dns-failure", message: shortened(resolved.message), durationMs: elapsed() };
      }
      for (const address of resolved.addresses) {
        const kind = addressKind(address);
        if (kind === null) {
          const message = `the resolver answered ${shortened(address)} for ${host.name}, not an address`;
          return { outcome: "network-error", reason: "dns-failure", message, durationMs: elapsed() };
        }
        if (kind !== "public" && !(kind === "loopback" && post.policy.allowLoopbackHttp)) {
          const { reason, message } = addressRefusal(address, kind, host.name);
          return { outcome: "refused", reason, message, durationMs: elapsed() };
        }
      }
      addresses = resolved.addresses;
    }
    const exchanged = await exchange(url, addresses, post, { maxResponseBytes, maxReadBytes }, deadline.signal);
    if (exchanged.type === "timeout") return timedOut();
    if (exchanged.type === "error") {
      const message = `${url.origin} could not be reached: ${shortened(exchanged.error.message)}`;
      return { outcome: "network-error", reason: networkErrorReason(exchanged.error.code), message, durationMs: elapsed() };
    }
    return { outcome: "response", status: exchanged.status, snippet: exchanged.snippet, retryAfter: exchanged.retryAfter, durationMs: elapsed() };
  } finally {
    clearTimeout(timer);
  }
}

// The resolver's answer, or none when the deadline comes first: a resolver that ignores the
// signal holds up no post.
async function resolveBefore(resolve: ResolveHost, name: string, signal: AbortSignal) {
  const deadline = new Promise<"deadline">((settle) => signal.addEventListener("abort", () => settle("deadline"), { once: true }));
  try {
    const addresses = await Promise.race([resolve(name, signal), deadline]);
    if (addresses === "deadline") return { ok: false as const, message: `${name} was not resolved in time` };
    if (addresses.length === 0) return { ok: false as const, message: `${name} has no address` };
    return { ok: true as const, addresses };
  } catch (error) {
    return { ok: false as const, message: `${name} could not be resolved: ${error instanceof Error ? error.message : String(error)}` };
  }
}

type Exchange =
  | { type: "response"; status: number; snippet: string; retryAfter: string | null }
  | { type: "timeout" }
  | { type: "error"; error: Error & { code?: string } };

// The text of the body's first bytes. A character cut at the end is left out rather than
// mangled; a NUL, which a Postgres text column refuses, becomes U+FFFD.
function snippetOf(bytes: Buffer): string {
  return new TextDecoder().decode(bytes, { stream: true }).replaceAll("\0", "\uFFFD");
}

// One request and its answer, over a connection to one of `addresses`. Once the status
// line is in, the outcome is that response whatever follows: the body is read until it
// ends, maxReadBytes are in, or the deadline, and the connection is then closed.
function exchange(
  url: URL,
  addresses: readonly string[],
  post: WebhookPost,
  limits: { maxResponseBytes: number; maxReadBytes: number },
  deadline: AbortSignal,
): Promise<Exchange> {
  const candidates = addresses.map((address) => ({ address, family: addressBytes(address)!.length === 4 ? 4 : 6 }));
  // node asks for one address, or for all of them (to try each family in turn); either way
  // it gets only those checked, never the resolver's answer of the moment.
  const lookup: LookupFunction = (_hostname, options, callback) => {
    const allowed = candidates.filter(({ family }) => !options.family || options.family === family);
    if (allowed.length === 0) {
      callback(Object.assign(new Error("no checked address of the family asked for"), { code: "ENOTFOUND" }), "", 0);
    } else if (options.all) {
      callback(null, allowed);
    } else {
      callback(null, allowed[0]!.address, allowed[0]!.family);
    }
  };
  const body = Buffer.from(post.body, "utf8");
  const transport = url.protocol === "https:" ? https : http;

  return new Promise<Exchange>((settle) => {
    let settled = false;
    const finish = (outcome: Exchange) => {
      if (settled) return;
      settled = true;
      deadline.removeEventListener("abort", onDeadline);
      request.destroy();
      settle(outcome);
    };
    let answer: { status: number; retryAfter: string | null; chunks: Buffer[]; kept: number; read: number } | null = null;
    const answered = () => {
      const { status, retryAfter, chunks } = answer!;
      finish({ type: "response", status, retryAfter, snippet: snippetOf(Buffer.concat(chunks)) });
    };
    const onDeadline = () => answer ? answered() : finish({ type: "timeout" });

    const request = transport.request({
      protocol: url.protocol,
      hostname: url.hostname.replace(/^\[|\]$/g, ""),
      port: url.port || undefined,
      path: `${url.pathname}${url.search}`,
      method: "POST",
      headers: {
        ...post.headers,
        "content-type": "application/json",
        "user-agent": WEBHOOK_USER_AGENT,
        "content-length": String(body.length),
      },
      lookup,
      // A connection of its own: none is shared with a post to another address.
      agent: false,
      ...(post.trustedCertificates ? { ca: [...post.trustedCertificates] } : {}),
    });
    request.on("response", (response) => {
      const retryAfter = response.headers["retry-after"];
      answer = { status: response.statusCode ?? 0, retryAfter: retryAfter ?? null, chunks: [], kept: 0, read: 0 };
      response.on("data", (chunk: Buffer) => {
        const state = answer!;
        state.read += chunk.length;
        if (state.kept < limits.maxResponseBytes) {
          const part = chunk.subarray(0, limits.maxResponseBytes - state.kept);
          state.chunks.push(part);
          state.kept += part.length;
        }
        if (state.read >= limits.maxReadBytes) answered();
      });
      response.on("end", answered);
      // The connection broke or closed mid-body: the status stands.
      response.on("error", answered);
      response.on("close", answered);
    });
    request.on("error", (error: Error & { code?: string }) => answer ? answered() : finish({ type: "error", error }));
    if (deadline.aborted) return onDeadline();
    deadline.addEventListener("abort", onDeadline);
    request.end(body);
  });
}
