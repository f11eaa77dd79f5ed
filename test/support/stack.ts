// Where the running local stack is and what it runs with, read from the env file
// scripts/stack.sh writes (NAME=value, or NAME='value' for the settings). Read on first
// use, not when this module loads: a unit test may import a module that imports this
// one, and must not need a stack for it (nor the permission to read its file).
import type { components } from "../../examples/front-desk/src/api-types.ts";

const root = new URL("../../", import.meta.url);

function readStackEnv(): Record<string, string> {
  const text = Deno.readTextFileSync(new URL(".stack/stack.env", root));
  return Object.fromEntries(
    text.split("\n").filter((line) => line.includes("=")).map((line) => {
      const at = line.indexOf("=");
      const value = line.slice(at + 1);
      return [line.slice(0, at), /^'.*'$/.test(value) ? value.slice(1, -1) : value];
    }),
  );
}

let env: Record<string, string> | undefined;

function setting(name: string): string {
  env ??= readStackEnv();
  const value = env[name];
  if (value === undefined) throw new Error(`.stack/stack.env has no ${name}: run scripts/stack.sh up`);
  return value;
}

// A setting the stack may not have (one another part of the stack adds when it runs it).
function optionalSetting(name: string): string | null {
  env ??= readStackEnv();
  return env[name] || null;
}

// The URLs follow the stack's port base (PMS_PORT_BASE), so they are read, not written here.
export const stack = {
  get apiUrl() {
    return setting("API_URL");
  },
  get v1() {
    return `${setting("API_URL")}/functions/v1/api/v1`;
  },
  // Postgres itself: Auth, the migrations and the tests' own fixtures and checks.
  get dbUrl() {
    return setting("DB_URL");
  },
  // PgBouncer in transaction mode before the same database: how the functions connect
  // (scripts/stack.sh gives them DATABASE_URL and DATABASE_POOL_MODE=transaction), and
  // so how a function's code run in a test's own process connects (functionsDatabase).
  get poolerUrl() {
    return setting("POOLER_URL");
  },
  // The pooler's admin console (SHOW POOLS, CLIENTS, SERVERS).
  get poolerAdminUrl() {
    const url = new URL(setting("POOLER_URL"));
    url.pathname = "/pgbouncer";
    return url.href;
  },
  // The browser origins the api function grants (CORS_ALLOWED_ORIGINS, comma-separated).
  get corsAllowedOrigins(): string[] {
    return setting("CORS_ALLOWED_ORIGINS").split(",").map((origin) => origin.trim()).filter(Boolean);
  },
  get authUrl() {
    return setting("AUTH_URL");
  },
  // Where each function's local Edge Runtime listens (the gateway's upstream), by name: its
  // own routes (/_edge-runtime/workers, /_edge-runtime/limits) are there.
  get functionPorts(): Record<string, number> {
    return Object.fromEntries(setting("FUNCTION_PORTS").split(",").map((route) => {
      const [name, port] = route.split("=");
      return [name!, Number(port)];
    }));
  },
  // How the stack runs its Auth, the local double of Supabase Auth's HTTP API: Deno's
  // arguments, as scripts/stack.sh gives them.
  get authDoubleArgs(): string[] {
    const file = (path: string) => new URL(path, root).pathname;
    return ["run", "--quiet", "--config", file("deno.json"), "--allow-net=127.0.0.1", "--allow-env",
      `--allow-read=${file("local/auth/schema.sql")}`, file("local/auth/main.ts")];
  },
  get mailUrl() {
    return setting("MAIL_URL");
  },
  get smsUrl() {
    return setting("SMS_URL");
  },
  // The Web Push service double (local/push-capture): endpoints are {pushUrl}/push/{token}.
  get pushUrl() {
    return setting("PUSH_URL");
  },
  // The webhook receiver double (local/webhook-receiver): a subscription's endpoint is
  // {webhookReceiverUrl}/hooks/{name}.
  get webhookReceiverUrl() {
    return setting("WEBHOOK_RECEIVER_URL");
  },
  // The same double over https: {webhookReceiverHttpsUrl}/hooks/{name}, its certificate for
  // localhost issued by the stack's CA (localCa, a PEM file), which the functions trust.
  get webhookReceiverHttpsUrl() {
    return setting("WEBHOOK_RECEIVER_HTTPS_URL");
  },
  get localCa() {
    return setting("LOCAL_CA");
  },
  // The front-desk example (examples/front-desk), served on an origin of its own.
  get frontDeskUrl() {
    return setting("FRONT_DESK_URL");
  },
  get jwtSecret() {
    return setting("JWT_SECRET");
  },
  // Auth's key set (GOTRUE_JWT_KEYS): its ES256 signing key and the legacy secret.
  get authJwtKeys() {
    return setting("AUTH_JWT_KEYS");
  },
  get anonKey() {
    return setting("ANON_KEY");
  },
  get serviceRoleKey() {
    return setting("SERVICE_ROLE_KEY");
  },
  // The key pair of the SendGrid double's signed Event Webhook: the public half the api
  // function verifies with, the private half only the double (and the tests that forge or
  // replay posts) holds.
  sendGridWebhook: {
    get verificationKey() {
      return setting("SENDGRID_WEBHOOK_VERIFICATION_KEY");
    },
    get privateKey() {
      return setting("SENDGRID_EVENT_WEBHOOK_PRIVATE_KEY");
    },
  },
  // Whether the api function takes push subscriptions whose endpoint is on this machine.
  get pushAllowsLoopbackEndpoints() {
    return setting("PUSH_ALLOW_LOOPBACK_HTTP") === "true";
  },
  // Whether the functions post webhooks to endpoints on this machine (the receiver double).
  get webhooksAllowLoopbackEndpoints() {
    return setting("WEBHOOKS_ALLOW_LOOPBACK_HTTP") === "true";
  },
  // The VAPID public key the api function offers browsers; null when the stack gives it none.
  get vapidPublicKey() {
    return optionalSetting("VAPID_PUBLIC_KEY");
  },
  // What the notifications worker function runs with.
  notifications: {
    get sendGridApiKey() {
      return setting("SENDGRID_API_KEY");
    },
    get fromEmail() {
      return setting("NOTIFICATIONS_FROM_EMAIL");
    },
    get fromName() {
      return setting("NOTIFICATIONS_FROM_NAME");
    },
    // The worker's backoff: base * 2^(attempt - 1) seconds, capped, with jitter.
    get retryBaseSeconds() {
      return Number(setting("NOTIFICATIONS_RETRY_BASE_SECONDS"));
    },
    get retryMaxSeconds() {
      return Number(setting("NOTIFICATIONS_RETRY_MAX_SECONDS"));
    },
    sms: {
      get accountSid() {
        return setting("SMS_ACCOUNT_SID");
      },
      get authToken() {
        return setting("SMS_AUTH_TOKEN");
      },
      get fromNumber() {
        return setting("SMS_FROM_NUMBER");
      },
    },
    // The push channel's VAPID key pair and contact (RFC 8292), made once per stack.
    push: {
      get vapidPublicKey() {
        return setting("VAPID_PUBLIC_KEY");
      },
      get vapidPrivateKey() {
        return setting("VAPID_PRIVATE_KEY");
      },
      get vapidSubject() {
        return setting("VAPID_SUBJECT");
      },
    },
  },
};

// The connection a function's code gets when a test runs it in its own process: the one
// the stack's functions get.
export function functionsDatabase(): { url: string; mode: "transaction" } {
  return { url: stack.poolerUrl, mode: "transaction" };
}

// An error's body, as the document describes it.
export type Problem = components["schemas"]["Problem"];

export async function readProblem(response: Response): Promise<Problem> {
  if (response.headers.get("content-type") !== "application/problem+json") {
    throw new Error(`expected a problem document, got ${response.headers.get("content-type")}: ${await response.text()}`);
  }
  return await response.json() as Problem;
}

// The workers the local Edge Runtime runs for a function (local/edge-runtime/main.ts).
export type RuntimeWorker = { pid: number; state: string; inFlight: number };

export async function runtimeWorkers(name: string): Promise<RuntimeWorker[]> {
  const response = await fetch(`http://127.0.0.1:${stack.functionPorts[name]}/_edge-runtime/workers`);
  return await response.json() as RuntimeWorker[];
}

// Waits until no worker of the function holds a request, so that a run started before
// (a scheduled run following the queue) cannot take the next test's jobs.
export async function functionIdle(name: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await runtimeWorkers(name)).some((worker) => worker.inFlight > 0)) {
    if (Date.now() > deadline) throw new Error(`${name} still holds a request after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
