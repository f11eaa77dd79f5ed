// A Supabase Auth process of a test's own: the stack's Auth (the local double, local/auth)
// with the environment the stack runs it with (.stack/auth.env), some settings changed, on
// a port of its own and the stack's database. For what the stack's Auth cannot show without
// being restarted: other signing keys, the legacy HS256 secret, rate limits.
import assert from "node:assert/strict";
import { createApi } from "../../src/app.ts";
import { type AccessTokenVerifierDeps, createAccessTokenVerifier } from "../../src/auth/access-token.ts";
import { createSupabaseAuth } from "../../src/auth/supabase-auth.ts";
import { createDb } from "../../src/db/database.ts";
import { createPool, fixedPool, type PoolMode } from "../../src/db/pool.ts";
import type { PushSettings } from "../../src/push/settings.ts";
import { calendarImportRouteSettings } from "../../src/calendar-imports/handlers.ts";
import { webhookRouteSettings } from "../../src/webhook-subscriptions/handlers.ts";
import { functionsDatabase, stack } from "./stack.ts";

export type AuthProcess = { url: string; stop(): Promise<void> };

function readAuthEnv(): Record<string, string> {
  const text = Deno.readTextFileSync(new URL("../../.stack/auth.env", import.meta.url));
  const env: Record<string, string> = {};
  for (const line of text.split("\n")) {
    const match = /^([A-Z_]+)='(.*)'$/.exec(line);
    // The file quotes a ' inside a value as '\''.
    if (match) env[match[1]!] = match[2]!.replaceAll(`'\\''`, "'");
  }
  return env;
}

// A loopback port nothing listens on (it was free a moment ago).
export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}

// `changes` replace the stack's settings; a setting given as null is left out.
export async function startAuth(changes: Record<string, string | null>): Promise<AuthProcess> {
  const port = freePort();
  const env: Record<string, string> = { ...readAuthEnv(), PORT: String(port) };
  for (const [name, value] of Object.entries(changes)) {
    if (value === null) delete env[name];
    else env[name] = value;
  }
  const denoDir = Deno.env.get("DENO_DIR");
  const child = new Deno.Command(Deno.execPath(), {
    args: stack.authDoubleArgs,
    env: { ...env, NO_COLOR: "1", ...(denoDir ? { DENO_DIR: denoDir } : {}) },
    clearEnv: true,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const url = `http://127.0.0.1:${port}`;
  const stderr = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  let log = "";
  const collecting = (async () => {
    for (;;) {
      const { done, value } = await stderr.read();
      if (done) return;
      log += value;
    }
  })();
  const stop = async () => {
    try {
      child.kill("SIGTERM");
    } catch {
      // already gone
    }
    await child.status;
    await collecting;
  };
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      const response = await fetch(`${url}/health`);
      await response.body?.cancel();
      if (response.ok) return { url, stop };
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`Supabase Auth did not start on ${url}:\n${log.slice(-2000)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

// A password sign-in at that Auth: the access token it issues.
export async function signInAt(auth: AuthProcess, email: string, password: string): Promise<string> {
  const response = await fetch(`${auth.url}/token?grant_type=password`, {
    method: "POST",
    headers: { apikey: stack.anonKey, "content-type": "application/json" },
    body: JSON.stringify({ email, password }),
  });
  const body = await response.json() as { access_token?: string };
  if (!response.ok || !body.access_token) throw new Error(`sign-in answered ${response.status}: ${JSON.stringify(body)}`);
  return body.access_token;
}

export type InProcessApi = { handle(request: Request): Promise<Response>; close(): Promise<void> };

// The api function's app, built in this process with the real adapter aimed at the Auth
// at `authUrl`: what the API answers when Auth is configured otherwise than the stack's.
// `verifier` changes how it verifies tokens (the legacy secret, the key set's cache).
// It reaches the database as the api function does (through the pooler) unless
// `database` names another way.
export function apiWithAuthAt(
  authUrl: string,
  verifier: Partial<Pick<AccessTokenVerifierDeps, "jwtSecret" | "jwksCacheMaxAgeMs" | "jwksCooldownMs">> = {},
  database: { url: string; mode: PoolMode } = functionsDatabase(),
  // No VAPID key and no loopback endpoints unless a test asks for them.
  push: PushSettings = { vapidPublicKey: null, allowLoopbackPushEndpoints: false },
): InProcessApi {
  const sql = createPool(database.url, { max: 2, generatedTypes: true, mode: database.mode });
  const now = () => Date.now();
  const handle = createApi({
    pool: fixedPool(sql),
    db: createDb(sql),
    identity: createSupabaseAuth({ url: `${authUrl}/`, apiKey: stack.anonKey, fetch, now, timeoutMs: 5000 }),
    verifyAccessToken: createAccessTokenVerifier({ jwksUrl: `${authUrl}/.well-known/jwks.json`, now, ...verifier }),
    // No provider's key: these tests send no delivery report.
    webhooks: {
      sendGridVerificationKey: null, sendGridToleranceSeconds: 300, smsAccountSid: null, smsAuthToken: null,
      publicUrl: `${stack.apiUrl}/functions/v1/api`,
    },
    push,
    webhookSubscriptions: webhookRouteSettings({ allowLoopbackHttp: false }),
    calendarImports: calendarImportRouteSettings({ allowLoopbackHttp: false }),
    referenceRenderer: { readScript: () => Promise.reject(new Error("these tests serve no reference page")) },
    now,
    logger: {
      error: (message) => assert.fail(`unexpected error log: ${message}`),
      warn: (message) => assert.fail(`unexpected warning: ${message}`),
    },
  });
  return { handle, close: () => sql.end() };
}

// A POST of JSON to the in-process API, with the X-Forwarded-For the gateway sets for a
// client at `clientAddress`.
export function postJson(path: string, body: unknown, clientAddress?: string): Request {
  return new Request(`http://function/api/v1${path}`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(clientAddress ? { "x-forwarded-for": clientAddress } : {}),
    },
    body: JSON.stringify(body),
  });
}
