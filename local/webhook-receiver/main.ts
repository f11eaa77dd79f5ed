// A loopback double of a tenant's webhook endpoint, for tests and local runs: what the
// webhooks worker posts to, as local/push-capture is the push channel's push service.
//   POST   /hooks/{name}              a webhook for the endpoint {name} (any name): its Standard
//                                     Webhooks signature verified against {name}'s secrets, recorded,
//                                     and answered 204 (or as scripted); 401 when the signature fails
//   PUT    /_capture/endpoints/{name} {secrets: ["whsec_..."]}: the secrets {name}'s webhooks are
//                                     verified with from now on (the current and, during a rotation's
//                                     overlap, the previous); [] forgets them
//   POST   /_capture/script           {name?, responses: [{status, headers?, body?, delayMs?}]}: the
//                                     next webhooks (to that name, or to any) get these answers in
//                                     order, then 204 again
//   GET    /_capture/requests         every webhook received, oldest first; ?name= those of one endpoint
//   DELETE /_capture                  forget everything: requests, scripts and secrets
// Run with --port; with --tls-port, --cert and --key (PEM files) it also takes webhooks over
// https on that port, as a tenant's endpoint does (its control routes stay on the first).
//
// A test reads a subscription's secret from the API when it creates or rotates one,
// registers it here, and points the subscription at http://127.0.0.1:{port}/hooks/{name}
// (the stack's functions may post to loopback http: WEBHOOKS_ALLOW_LOOPBACK_HTTP). A webhook
// is verified as a receiver verifies it, with the specification's own library: each
// registered secret is tried, and the record names every one a signature matched. One that
// matches none (or is stale by more than the library's five minutes, or lacks the headers) is
// answered 401 and recorded, and takes no scripted answer; to an endpoint with no secret
// registered, nothing is verified (verified: null). A scripted answer stands for what a
// receiver does with a good webhook: fails (500), throttles (429 with Retry-After), is gone
// (410), redirects (3xx with Location), or answers after delayMs, later than the sender waits.
// Its body goes out as text when it is a string, as JSON otherwise.
import { Webhook } from "standardwebhooks";
import { readFlags, requireFlag } from "../args.ts";
import { createTargetedScripts, isRecord, json, loggingCalls, type ScriptedResponse, sleep } from "../capture.ts";

// One webhook as recorded; tests read these through GET /_capture/requests.
export type ReceivedWebhook = {
  receivedAt: string;
  name: string;
  // The query string as posted ("" for none).
  query: string;
  // Every header as received, names in lowercase.
  headers: Record<string, string>;
  // The body as sent, and as JSON when it is JSON (null otherwise).
  body: string;
  json: unknown;
  // true: a signature matched a registered secret; false: none did (answered 401); null:
  // the endpoint has no secret registered.
  verified: boolean | null;
  // The registered secrets a signature matched, in the order they were registered.
  verifiedWith: string[];
  // Why it did not verify, in the library's words; null when it did, or was not checked.
  refusal: string | null;
  // The status it was answered with (after a scripted delay, when the sender still waited).
  status: number;
  // It came over TLS (the https port).
  tls: boolean;
};

const flags = readFlags(Deno.args);
const port = Number(requireFlag(flags, "port"));

const HOOK_PATH = /^\/hooks\/([A-Za-z0-9._~-]{1,200})$/;
const ENDPOINT_PATH = /^\/_capture\/endpoints\/([A-Za-z0-9._~-]{1,200})$/;

let received: ReceivedWebhook[] = [];
let secrets = new Map<string, string[]>();
const scripts = createTargetedScripts("name");

function parsedJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

// What the reference verifier says of this webhook with each of the endpoint's secrets.
function verification(name: string, body: string, headers: Record<string, string>) {
  const registered = secrets.get(name) ?? [];
  if (registered.length === 0) return { verified: null, verifiedWith: [], refusal: null };
  const verifiedWith: string[] = [];
  let refusal: string | null = null;
  for (const secret of registered) {
    try {
      new Webhook(secret).verify(body, headers, { jsonParse: false });
      verifiedWith.push(secret);
    } catch (error) {
      refusal ??= error instanceof Error ? error.message : String(error);
    }
  }
  return verifiedWith.length > 0 ? { verified: true, verifiedWith, refusal: null } : { verified: false, verifiedWith, refusal };
}

async function receive(request: Request, name: string, tls: boolean): Promise<Response> {
  const receivedAt = new Date().toISOString();
  const body = await request.text();
  const headers = Object.fromEntries(request.headers);
  const checked = verification(name, body, headers);
  const record = (status: number) =>
    received.push({ receivedAt, name, query: new URL(request.url).search, headers, body, json: parsedJson(body), ...checked, status, tls });

  if (checked.verified === false) {
    record(401);
    return json(401, { message: `the signature does not verify: ${checked.refusal}` });
  }
  const scripted = scripts.take(name);
  // Recorded on arrival, so a test sees a webhook whose sender gave up waiting for the answer.
  record(scripted?.status ?? 204);
  if (scripted?.delayMs) await sleep(scripted.delayMs);
  if (!scripted) return new Response(null, { status: 204 });
  return scriptedAnswer(scripted);
}

// A scripted body goes out as text when it is a string, as JSON otherwise; 204, 205 and 304
// carry none, whatever the script says.
function scriptedAnswer({ status, headers, body }: ScriptedResponse): Response {
  if (body === undefined || [204, 205, 304].includes(status)) return new Response(null, { status, headers });
  const [text, type] = typeof body === "string" ? [body, "text/plain; charset=utf-8"] : [JSON.stringify(body), "application/json"];
  return new Response(text, { status, headers: { "content-type": type, ...headers } });
}

function isSecret(value: unknown): value is string {
  if (typeof value !== "string" || !value.startsWith("whsec_")) return false;
  try {
    new Webhook(value);
    return true;
  } catch {
    return false;
  }
}

async function registerSecrets(request: Request, name: string): Promise<Response> {
  const body: unknown = await request.json().catch(() => null);
  if (!isRecord(body) || !Array.isArray(body.secrets) || !body.secrets.every(isSecret)) {
    return json(400, { message: 'expected {secrets: ["whsec_<base64>", ...]}' });
  }
  secrets.set(name, body.secrets as string[]);
  return new Response(null, { status: 204 });
}

function control(request: Request): Response | Promise<Response> | null {
  const url = new URL(request.url);
  const endpoint = ENDPOINT_PATH.exec(url.pathname);
  if (endpoint) return request.method === "PUT" ? registerSecrets(request, endpoint[1]!) : json(405, { message: "PUT only" }, { allow: "PUT" });
  const name = url.searchParams.get("name");
  switch (`${request.method} ${url.pathname}`) {
    case "GET /_capture/requests":
      return json(200, received.filter((webhook) => name === null || webhook.name === name));
    case "POST /_capture/script":
      return scripts.set(request);
    case "DELETE /_capture":
      received = [];
      secrets = new Map();
      scripts.clear();
      return new Response(null, { status: 204 });
    default:
      return null;
  }
}

function hook(request: Request, tls: boolean): Response | Promise<Response> | null {
  const path = HOOK_PATH.exec(new URL(request.url).pathname);
  if (!path) return null;
  if (request.method === "POST") return receive(request, path[1]!, tls);
  return json(405, { message: "a webhook endpoint takes POST" }, { allow: "POST" });
}

Deno.serve({ hostname: "127.0.0.1", port, onListen: () => {} }, loggingCalls((request) =>
  hook(request, false) ?? control(request) ?? json(404, { message: "no such resource" })
));

if (flags.has("tls-port")) {
  Deno.serve({
    hostname: "127.0.0.1",
    port: Number(requireFlag(flags, "tls-port")),
    cert: Deno.readTextFileSync(requireFlag(flags, "cert")),
    key: Deno.readTextFileSync(requireFlag(flags, "key")),
    onListen: () => {},
  }, loggingCalls((request) => hook(request, true) ?? json(404, { message: "webhooks only: the control routes are on the http port" })));
}
