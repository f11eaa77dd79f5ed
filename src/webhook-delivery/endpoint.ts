// Where a webhook may be posted, and the post itself. A subscription's URL is a tenant's
// word, and the server posts to it: unchecked, it would make our servers call this machine,
// the provider's private network or the cloud's metadata service for anyone who can save a
// URL. So a URL is checked when it is saved (checkEndpointUrl: https, no credentials, no
// address or name that is not on the public internet) and again at every delivery, after
// its name is resolved: every address the name has must be public, and the connection goes
// to one of exactly those addresses, so a name that resolves elsewhere a moment later (DNS
// rebinding) changes nothing.
//
// The post goes over a connection this module opens itself (Deno.connect, then
// Deno.startTls for https) to an address already checked, while the URL's host name stays
// the Host header, the TLS server name (SNI) and the name the certificate is verified for.
// Only Deno's socket APIs allow that in the Edge Runtime: fetch cannot be told which address
// to reach, and the runtime's node:http is built on fetch (its `lookup` throws and its `ca`
// is ignored). test/webhook-delivery/endpoint.test.ts proves both schemes: plain http, and
// https to a server whose certificate names only the URL's host, reached at the address
// the resolver gave.
import { ADDRESS_KIND_NAMES, type AddressKind, addressKind } from "./addresses.ts";

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

// The resolver for one run of the worker: each name is resolved once, and its answer (or
// its failure) stands for every post of the run to that name. A run holds many deliveries
// for few endpoints, and one endpoint whose name does not resolve would otherwise cost a
// lookup, up to the timeout, for each of its deliveries. Every address is still checked at
// every post, so an answer kept for the run is never a way around the check.
export function resolverForOneRun(resolve: ResolveHost): ResolveHost {
  const answers = new Map<string, Promise<string[]>>();
  return (hostname, signal) => {
    let answer = answers.get(hostname);
    if (answer === undefined) {
      answer = resolve(hostname, signal);
      answers.set(hostname, answer);
    }
    return answer;
  };
}

// The connections of one run of the worker, kept open between its posts. A run posts many
// deliveries to few endpoints, and a connection of its own for each (the TCP handshake,
// TLS's, and the close) was most of a post's cost. A connection is reused only for the same
// checked address, port, scheme and name (TLS's server name and certificate), after an
// answer whose end was read and which did not ask to close, and only while it has been
// idle less than maxIdleMs, inside the idle timeouts servers commonly keep. Everything is
// closed when the run ends (closeAll).
export type ConnectionsForOneRun = {
  take(key: string): Connection | null;
  give(key: string, connection: Connection): void;
  closeAll(): void;
};

export function connectionsForOneRun(settings: { maxIdlePerKey?: number; maxIdleMs?: number; now?: () => number } = {}): ConnectionsForOneRun {
  const maxIdlePerKey = settings.maxIdlePerKey ?? 16;
  const maxIdleMs = settings.maxIdleMs ?? 2000;
  const now = settings.now ?? (() => performance.now());
  const idle = new Map<string, { connection: Connection; since: number }[]>();
  const close = (connection: Connection) => {
    try {
      connection.close();
    } catch {
      // already closed
    }
  };
  let closed = false;
  return {
    take(key) {
      const list = idle.get(key);
      while (list && list.length > 0) {
        const { connection, since } = list.pop()!;
        if (now() - since < maxIdleMs) return connection;
        close(connection);
      }
      return null;
    },
    give(key, connection) {
      const list = idle.get(key) ?? [];
      if (closed || list.length >= maxIdlePerKey) return close(connection);
      list.push({ connection, since: now() });
      idle.set(key, list);
    },
    closeAll() {
      closed = true;
      for (const list of idle.values()) for (const { connection } of list) close(connection);
      idle.clear();
    },
  };
}

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
  // The run's open connections (connectionsForOneRun): with them a post asks to keep its
  // connection and the next post to the same address and name reuses it. Without, each
  // post has a connection of its own, closed with its answer.
  connections?: ConnectionsForOneRun;
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

// Posts one webhook. Never throws for anything the endpoint or the network does; throws
// only on a caller's mistake (an option out of range, a header value HTTP cannot carry).
export async function postWebhook(post: WebhookPost): Promise<WebhookPostResult> {
  const maxResponseBytes = positiveInteger("maxResponseBytes", post.maxResponseBytes ?? 1024);
  const maxReadBytes = positiveInteger("maxReadBytes", post.maxReadBytes ?? 65_536);
  if (maxReadBytes < maxResponseBytes) throw new RangeError("maxReadBytes must be at least maxResponseBytes");
  const body = new TextEncoder().encode(post.body);
  const sent = await send({
    ...post,
    method: "POST",
    headers: { ...post.headers, "content-type": "application/json", "user-agent": WEBHOOK_USER_AGENT },
    body,
    maxResponseBytes,
    maxReadBytes,
  });
  if (sent.outcome !== "response") return sent;
  const { status, headers, body: kept, durationMs } = sent;
  return { outcome: "response", status, snippet: snippetOf(kept), retryAfter: headers.get("retry-after") ?? null, durationMs };
}

// ---------------------------------------------------------------- fetching a document

export type DocumentGet = {
  url: string;
  // Conditional and content headers (If-None-Match, If-Modified-Since, Accept).
  headers: Readonly<Record<string, string>>;
  userAgent: string;
  policy: WebhookEndpointPolicy;
  // For the whole fetch, redirects included. Default 10 s.
  timeoutMs?: number;
  // A longer body is refused as too large. Default 1 MiB.
  maxBytes?: number;
  // How many redirects are followed, each to a URL checked as the first was. Default 3.
  maxRedirects?: number;
  resolve?: ResolveHost;
  now?: () => number;
  trustedCertificates?: readonly string[];
};

export type DocumentGetResult =
  // The document, whole: a 2xx with its body, or a 304 with none.
  | { outcome: "response"; status: number; headers: ReadonlyMap<string, string>; body: Uint8Array; url: string; durationMs: number }
  // An answer that is not the document: another status, too many redirects, a body too large.
  | { outcome: "rejected"; reason: "http-status" | "too-many-redirects" | "too-large" | "incomplete"; status: number; message: string; durationMs: number }
  | { outcome: "refused"; reason: EndpointRefusalReason; message: string; durationMs: number }
  | { outcome: "network-error"; reason: NetworkErrorReason; message: string; durationMs: number };

// Fetches a document a tenant named by its URL (an imported calendar), with the same
// safety as a webhook's post: each URL, a redirect's too, is checked, its name resolved and
// every address checked, and the connection goes to one of those addresses.
export async function getDocument(get: DocumentGet): Promise<DocumentGetResult> {
  const maxBytes = positiveInteger("maxBytes", get.maxBytes ?? 1_048_576);
  const timeoutMs = positiveInteger("timeoutMs", get.timeoutMs ?? 10_000);
  const maxRedirects = get.maxRedirects ?? 3;
  const now = get.now ?? (() => performance.now());
  const started = now();
  const elapsed = () => Math.max(0, Math.round(now() - started));
  let url = get.url;
  for (let redirects = 0;; redirects++) {
    const left = timeoutMs - elapsed();
    if (left <= 0) return { outcome: "network-error", reason: "timeout", message: `no answer within ${timeoutMs} ms`, durationMs: elapsed() };
    const sent = await send({
      ...get,
      url,
      method: "GET",
      headers: { ...get.headers, "user-agent": get.userAgent },
      timeoutMs: left,
      maxResponseBytes: maxBytes + 1,
      maxReadBytes: maxBytes + 1,
    });
    if (sent.outcome !== "response") return { ...sent, durationMs: elapsed() };
    const { status, headers, body, ended } = sent;
    const location = headers.get("location");
    if ([301, 302, 303, 307, 308].includes(status) && location) {
      if (redirects >= maxRedirects) {
        return { outcome: "rejected", reason: "too-many-redirects", status, message: `more than ${maxRedirects} redirects`, durationMs: elapsed() };
      }
      try {
        url = new URL(location, url).href;
      } catch {
        return { outcome: "rejected", reason: "http-status", status, message: "a redirect to something that is not a URL", durationMs: elapsed() };
      }
      continue;
    }
    if (status === 304) return { outcome: "response", status, headers, body: new Uint8Array(0), url, durationMs: elapsed() };
    if (status < 200 || status > 299) {
      return { outcome: "rejected", reason: "http-status", status, message: `${new URL(url).host} answered ${status}`, durationMs: elapsed() };
    }
    if (body.length > maxBytes) {
      return { outcome: "rejected", reason: "too-large", status, message: `the document is larger than ${maxBytes} bytes`, durationMs: elapsed() };
    }
    if (!ended) {
      return { outcome: "rejected", reason: "incomplete", status, message: "the answer ended before its body did", durationMs: elapsed() };
    }
    return { outcome: "response", status, headers, body, url, durationMs: elapsed() };
  }
}

// ---------------------------------------------------------------- one request

type OutboundRequest = {
  method: "GET" | "POST";
  url: string;
  // All but host, content-length and connection, which are the exchange's.
  headers: Readonly<Record<string, string>>;
  body?: Uint8Array;
  policy: WebhookEndpointPolicy;
  timeoutMs?: number;
  maxResponseBytes: number;
  maxReadBytes: number;
  resolve?: ResolveHost;
  now?: () => number;
  trustedCertificates?: readonly string[];
  connections?: ConnectionsForOneRun;
};

type OutboundResult =
  | { outcome: "response"; status: number; headers: ReadonlyMap<string, string>; body: Uint8Array; ended: boolean; durationMs: number }
  | { outcome: "refused"; reason: EndpointRefusalReason; message: string; durationMs: number }
  | { outcome: "network-error"; reason: NetworkErrorReason; message: string; durationMs: number };

// One request to a URL a tenant gave, and the start of its answer: checked, resolved and
// sent to a checked address.
async function send(request: OutboundRequest): Promise<OutboundResult> {
  const timeoutMs = positiveInteger("timeoutMs", request.timeoutMs ?? 10_000);
  const now = request.now ?? (() => performance.now());
  const resolve = request.resolve ?? resolveWithDenoDns;
  const started = now();
  const elapsed = () => Math.max(0, Math.round(now() - started));

  const checked = checkEndpoint(request.url, request.policy);
  if (!checked.ok) return { outcome: "refused", reason: checked.reason, message: checked.message, durationMs: elapsed() };
  const { url, host } = checked;

  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), timeoutMs);
  const timedOut = (): OutboundResult => ({
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
        if (kind !== "public" && !(kind === "loopback" && request.policy.allowLoopbackHttp)) {
          const { reason, message } = addressRefusal(address, kind, host.name);
          return { outcome: "refused", reason, message, durationMs: elapsed() };
        }
      }
      addresses = resolved.addresses;
    }
    const limits = { maxResponseBytes: request.maxResponseBytes, maxReadBytes: request.maxReadBytes };
    const exchanged = await exchange(url, addresses, request, limits, deadline.signal);
    if (exchanged.type === "timeout") return timedOut();
    if (exchanged.type === "error") {
      const message = `${url.origin} could not be reached: ${shortened(exchanged.message)}`;
      return { outcome: "network-error", reason: exchanged.reason, message, durationMs: elapsed() };
    }
    const { status, headers, body, ended } = exchanged;
    return { outcome: "response", status, headers, body, ended, durationMs: elapsed() };
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
  // `ended`: the body is whole, by its framing or by the connection's end.
  | { type: "response"; status: number; headers: ReadonlyMap<string, string>; body: Uint8Array; ended: boolean; reusable?: boolean }
  | { type: "timeout" }
  | { type: "error"; reason: NetworkErrorReason; message: string };

// A connection that can be closed at any moment from outside, whatever it is doing.
type Connection = Deno.Conn | Deno.TlsConn;

class ProtocolError extends Error {}

// A kept connection the server had closed: nothing of the answer came, so the request can go
// again on a new connection.
class ClosedWhileIdle extends Error {}

// The text of the body's first bytes. A character cut at the end is left out rather than
// mangled; a NUL, which a Postgres text column refuses, becomes U+FFFD.
function snippetOf(bytes: Uint8Array): string {
  return new TextDecoder().decode(bytes, { stream: true }).replaceAll("\0", "\uFFFD");
}

// How Deno names a failure of the network or of TLS, as a reason an attempt records.
function errorReason(error: unknown): NetworkErrorReason {
  if (error instanceof ProtocolError) return "protocol-error";
  if (error instanceof Deno.errors.ConnectionRefused) return "connection-refused";
  if (error instanceof Deno.errors.TimedOut) return "timeout";
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof Deno.errors.InvalidData || /certificate|handshake|tls|alert/i.test(message)) return "tls-failure";
  return "connection-failed";
}

// One request and its answer, over a connection to one of `addresses`, tried in turn
// until one takes it. Once the status line is in, the outcome is that response whatever
// follows: the body is read until it ends, maxReadBytes are in, or the deadline, and the
// connection is then closed.
//
// The request is written and its answer read here, over Deno.connect and Deno.startTls:
// the connection must go to a checked address while the URL's name stays the Host header,
// the TLS server name and the name the certificate is verified for, and neither fetch
// (no way to choose the address) nor the Edge Runtime's node:http (built on fetch; its
// `lookup` option throws, its `ca` is ignored) can do that. One POST and a bounded answer
// need only the HTTP/1.1 below: a status line, headers, and a body by Content-Length, by
// chunks, or until the connection closes. With the run's connections, a kept connection
// to the same address and name is tried first; one the server closed while it was idle
// fails before any byte of the answer, and the request goes on a new connection.
async function exchange(
  url: URL,
  addresses: readonly string[],
  post: OutboundRequest,
  limits: { maxResponseBytes: number; maxReadBytes: number },
  deadline: AbortSignal,
): Promise<Exchange> {
  const open = new Set<Connection>();
  const closeAll = () => {
    for (const connection of open) {
      try {
        connection.close();
      } catch {
        // already closed
      }
    }
    open.clear();
  };
  deadline.addEventListener("abort", closeAll, { once: true });
  const port = Number(url.port) || (url.protocol === "https:" ? 443 : 80);
  const hostname = url.hostname.replace(/^\[|\]$/g, "");
  const pool = post.connections;
  const request = requestBytes(url, post, pool !== undefined);
  let lastError: unknown = new Error("no address to connect to");
  try {
    for (const address of addresses) {
      if (deadline.aborted) return { type: "timeout" };
      const key = `${url.protocol}//${address}:${port}/${hostname}${post.trustedCertificates ? "/own-roots" : ""}`;
      const kept = post.trustedCertificates ? null : pool?.take(key) ?? null;
      if (kept) {
        open.add(kept);
        try {
          return await keptWhenReusable(await converse(kept, request, limits, true), kept, key);
        } catch (error) {
          if (!(error instanceof ClosedWhileIdle)) throw error;
          open.delete(kept);
          try {
            kept.close();
          } catch {
            // already closed
          }
        }
      }
      let tcp: Deno.TcpConn;
      try {
        const connecting = Deno.connect({ hostname: address, port, transport: "tcp" });
        const connected = await Promise.race([connecting, aborted(deadline)]);
        if (connected === "aborted") {
          // A connection that comes after the deadline is closed as it arrives.
          connecting.then((late) => late.close(), () => {});
          return { type: "timeout" };
        }
        tcp = connected;
      } catch (error) {
        lastError = error;
        continue;
      }
      open.add(tcp);
      let connection: Connection = tcp;
      if (url.protocol === "https:") {
        connection = await Deno.startTls(tcp, {
          hostname,
          alpnProtocols: ["http/1.1"],
          ...(post.trustedCertificates ? { caCerts: [...post.trustedCertificates] } : {}),
        });
        open.add(connection);
      }
      return await keptWhenReusable(await converse(connection, request, limits, false), connection, key);
    }
    return { type: "error", reason: errorReason(lastError), message: messageOf(lastError) };
  } catch (error) {
    if (deadline.aborted) return { type: "timeout" };
    return { type: "error", reason: errorReason(error), message: messageOf(error) };
  } finally {
    deadline.removeEventListener("abort", closeAll);
    closeAll();
  }

  // A connection whose answer ended cleanly goes back to the run's pool, out of the set
  // closed when this post is done.
  function keptWhenReusable(exchanged: Exchange, connection: Connection, key: string): Exchange {
    if (pool && exchanged.type === "response" && exchanged.reusable && !deadline.aborted) {
      open.clear();
      pool.give(key, connection);
    }
    return exchanged;
  }
}

function aborted(signal: AbortSignal): Promise<"aborted"> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve("aborted");
    else signal.addEventListener("abort", () => resolve("aborted"), { once: true });
  });
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

// The request as it goes on the wire: the caller's headers, then the length of a body;
// asking to close the connection after the answer unless it is to be kept.
function requestBytes(url: URL, request: OutboundRequest, keepAlive: boolean): Uint8Array {
  const body = request.body ?? new Uint8Array(0);
  const headers: Record<string, string> = {
    ...request.headers,
    ...(request.body ? { "content-length": String(body.length) } : {}),
  };
  let head = `${request.method} ${url.pathname}${url.search} HTTP/1.1\r\nhost: ${url.host}\r\n`;
  for (const [name, value] of Object.entries(headers)) {
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name) || /[\r\n\0]/.test(value)) {
      throw new TypeError(`the header ${JSON.stringify(name)} cannot be sent as it is`);
    }
    head += `${name}: ${value}\r\n`;
  }
  head += keepAlive ? "\r\n" : "connection: close\r\n\r\n";
  const headBytes = new TextEncoder().encode(head);
  const bytes = new Uint8Array(headBytes.length + body.length);
  bytes.set(headBytes);
  bytes.set(body, headBytes.length);
  return bytes;
}

// The most of a status line and headers read before the answer is called not HTTP.
const MAX_HEAD_BYTES = 16_384;

async function converse(
  connection: Connection,
  request: Uint8Array,
  limits: { maxResponseBytes: number; maxReadBytes: number },
  reused: boolean,
): Promise<Exchange> {
  const reader = new ByteReader(connection);
  let head: string;
  try {
    for (let written = 0; written < request.length;) written += await connection.write(request.subarray(written));
    head = await reader.readHead(MAX_HEAD_BYTES);
  } catch (error) {
    // A kept connection the server closed while it was idle fails before any byte of an
    // answer: its request was not taken.
    if (reused && reader.nothingRead) throw new ClosedWhileIdle(messageOf(error));
    throw error;
  }
  const [statusLine, ...headerLines] = head.split("\r\n");
  const status = /^HTTP\/1\.([01]) ([1-9][0-9]{2})(?: |$)/.exec(statusLine ?? "");
  if (!status) throw new ProtocolError(`the answer does not start with an HTTP/1.1 status line`);
  const headers = new Map<string, string>();
  for (const line of headerLines) {
    const colon = line.indexOf(":");
    if (colon <= 0) throw new ProtocolError("the answer has a header line that is not a header");
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers.set(name, headers.has(name) ? `${headers.get(name)}, ${value}` : value);
  }
  // From here the status stands: a body cut short, or the deadline, ends only the snippet.
  const kept = new Uint8Array(limits.maxResponseBytes);
  let keptLength = 0;
  let read = 0;
  const take = (bytes: Uint8Array) => {
    read += bytes.length;
    const part = bytes.subarray(0, Math.max(0, limits.maxResponseBytes - keptLength));
    kept.set(part, keptLength);
    keptLength += part.length;
    return read < limits.maxReadBytes;
  };
  // A 1xx, 204 or 304 answer has no body, whatever its headers say (RFC 9112, 6.3).
  const code = Number(status[2]);
  let body: "framed" | "closed" | "cut" = code < 200 || code === 204 || code === 304 ? "framed" : "cut";
  try {
    if (body !== "framed") body = await readBody(reader, headers, take);
  } catch {
    // The connection broke, closed or timed out mid-body: what was read is the snippet.
  }
  const ended = body === "framed";
  // Kept for another request only when its answer ended where its framing said, HTTP/1.1
  // keeps it by default, and the server did not ask to close it.
  const reusable = ended && status[1] === "1" && reader.drained &&
    !/\bclose\b/i.test(headers.get("connection") ?? "") && code >= 200;
  return { type: "response", status: code, headers, body: kept.slice(0, keptLength), ended: body !== "cut", reusable };
}

// The body by the framing the headers give, handed to `take` a piece at a time until it
// ends or `take` has had enough: "framed" when it ended where its framing said (a length,
// or the last chunk), "closed" when a body with neither ended with the connection, as
// such a body does, and "cut" when it stopped short of its end or at `take`'s word.
async function readBody(
  reader: ByteReader,
  headers: Map<string, string>,
  take: (bytes: Uint8Array) => boolean,
): Promise<"framed" | "closed" | "cut"> {
  if (/\bchunked\b/i.test(headers.get("transfer-encoding") ?? "")) {
    for (;;) {
      const size = Number.parseInt((await reader.readLine(1024)).split(";")[0]!.trim(), 16);
      if (!Number.isFinite(size) || size < 0) throw new ProtocolError("a chunk's size is not hexadecimal");
      if (size === 0) {
        // The trailer section, usually empty, ends with a blank line.
        while ((await reader.readLine(1024)) !== "");
        return "framed";
      }
      let left = size;
      while (left > 0) {
        const piece = await reader.read(left);
        if (piece === null) return "cut";
        left -= piece.length;
        if (!take(piece)) return "cut";
      }
      await reader.readLine(2);
    }
  }
  const length = headers.get("content-length");
  if (length !== undefined && !/^[0-9]+$/.test(length)) return "cut";
  let left = length === undefined ? Infinity : Number(length);
  while (left > 0) {
    const piece = await reader.read(Math.min(left, 16_384));
    if (piece === null) return length === undefined ? "closed" : "cut";
    left -= piece.length;
    if (!take(piece) && left > 0) return "cut";
  }
  return "framed";
}

// Reads a connection a line or a number of bytes at a time, keeping what it read ahead.
class ByteReader {
  #buffer = new Uint8Array(0);
  // No byte came from the connection yet.
  nothingRead = true;
  constructor(private readonly connection: Connection) {}

  // Nothing read ahead is left over: the connection holds no bytes of another answer.
  get drained(): boolean {
    return this.#buffer.length === 0;
  }

  async #fill(): Promise<boolean> {
    const chunk = new Uint8Array(16_384);
    const count = await this.connection.read(chunk);
    if (count === null) return false;
    this.nothingRead = false;
    const joined = new Uint8Array(this.#buffer.length + count);
    joined.set(this.#buffer);
    joined.set(chunk.subarray(0, count), this.#buffer.length);
    this.#buffer = joined;
    return true;
  }

  #take(length: number): Uint8Array {
    const taken = this.#buffer.slice(0, length);
    this.#buffer = this.#buffer.slice(length);
    return taken;
  }

  // The status line and headers, without the blank line that ends them.
  async readHead(max: number): Promise<string> {
    for (;;) {
      const end = indexOf(this.#buffer, [13, 10, 13, 10]);
      if (end >= 0) return new TextDecoder("latin1").decode(this.#take(end + 4)).slice(0, -4);
      if (this.#buffer.length > max) throw new ProtocolError(`the answer's head is longer than ${max} bytes`);
      if (!await this.#fill()) {
        throw new ProtocolError(this.#buffer.length === 0 ? "the connection closed without an answer" : "the answer's head ended early");
      }
    }
  }

  async readLine(max: number): Promise<string> {
    for (;;) {
      const end = indexOf(this.#buffer, [13, 10]);
      if (end >= 0) return new TextDecoder("latin1").decode(this.#take(end + 2)).slice(0, -2);
      if (this.#buffer.length > max) throw new ProtocolError("a line of the body's framing is too long");
      if (!await this.#fill()) throw new ProtocolError("the body ended inside its framing");
    }
  }

  // Up to `max` bytes, or null at the end of the connection.
  async read(max: number): Promise<Uint8Array | null> {
    if (this.#buffer.length === 0 && !await this.#fill()) return null;
    return this.#take(Math.min(max, this.#buffer.length));
  }
}

function indexOf(bytes: Uint8Array, pattern: number[]): number {
  outer: for (let i = 0; i + pattern.length <= bytes.length; i++) {
    for (let j = 0; j < pattern.length; j++) if (bytes[i + j] !== pattern[j]) continue outer;
    return i;
  }
  return -1;
}
