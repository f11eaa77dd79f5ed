// A Supabase Auth process of a test's own: the stack's binary with the environment the
// stack runs Auth with (.stack/auth.env), some settings changed, on a free port. It
// shares the stack's database, so users made through the stack's Auth exist in it too.
// An in-process API (createApi) aimed at it shows what the API answers when Auth is
// configured otherwise than the stack's (rate limits per client, sign-up closed).
import assert from "node:assert/strict";
import { createApi } from "../../src/app.ts";
import { createAccessTokenVerifier } from "../../src/auth/access-token.ts";
import { createSupabaseAuth } from "../../src/auth/supabase-auth.ts";
import { createDb } from "../../src/db/database.ts";
import { createPool } from "../../src/db/pool.ts";
import { stack } from "./stack.ts";

const authEnvFile = new URL("../../.stack/auth.env", import.meta.url);

// NAME='value' lines, a quote inside a value written '\'' (local/auth/settings.ts).
function readAuthEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of Deno.readTextFileSync(authEnvFile).split("\n")) {
    const match = /^([A-Z_][A-Z0-9_]*)='(.*)'$/.exec(line);
    if (match) env[match[1]!] = match[2]!.replaceAll(`'\\''`, "'");
  }
  return env;
}

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}

export type AuthProcess = { url: string; stop(): Promise<void> };

// Starts Auth with `overrides` on top of the stack's settings and waits until it answers
// /health. Call stop() in a finally: it ends the process and waits for it.
export async function startAuth(overrides: Record<string, string>): Promise<AuthProcess> {
  const port = freePort();
  const child = new Deno.Command(stack.authBin, {
    env: { ...readAuthEnv(), ...overrides, PORT: String(port) },
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const log = new Response(child.stderr).text();
  let exited = false;
  const status = child.status.then((result) => {
    exited = true;
    return result;
  });
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (!exited) child.kill("SIGTERM");
    await status;
    await log;
  };
  try {
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (exited) throw new Error(`Supabase Auth exited before it answered: ${await log}`);
      const healthy = await fetch(`${url}/health`).then(async (response) => {
        await response.body?.cancel();
        return response.ok;
      }, () => false);
      if (healthy) return { url, stop };
      if (Date.now() > deadline) throw new Error(`Supabase Auth did not answer on ${url} within 30 s`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } catch (error) {
    await stop();
    throw error;
  }
}

export type InProcessApi = { handle(request: Request): Promise<Response>; close(): Promise<void> };

// The api function's app, built in this process with the real adapter aimed at `authUrl`.
export function apiWithAuthAt(authUrl: string): InProcessApi {
  const sql = createPool(stack.dbUrl, { max: 2, generatedTypes: true });
  const now = () => Date.now();
  const handle = createApi({
    sql,
    db: createDb(sql),
    identity: createSupabaseAuth({ url: `${authUrl}/`, apiKey: stack.anonKey, fetch, now, timeoutMs: 5000 }),
    verifyAccessToken: createAccessTokenVerifier({ jwksUrl: `${authUrl}/.well-known/jwks.json`, now }),
    logger: {
      error: (message) => assert.fail(`unexpected error log: ${message}`),
      warn: (message) => assert.fail(`unexpected warning: ${message}`),
    },
  });
  return { handle, close: () => sql.end() };
}

// A POST of JSON to the in-process API, as the gateway would pass it on from `clientAddress`.
export function postJson(path: string, body: unknown, clientAddress?: string): Request {
  return new Request(`http://function/api/v1${path}`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(clientAddress ? { "x-forwarded-for": `${clientAddress}, 127.0.0.1` } : {}),
    },
    body: JSON.stringify(body),
  });
}
