// When Supabase Auth cannot be reached the API answers 503, never 500. The app is
// built here with the real adapter aimed at a port where nothing listens.
import assert from "node:assert/strict";
import { createApi } from "../../src/app.ts";
import { createAccessTokenVerifier } from "../../src/auth/access-token.ts";
import { createSupabaseAuth } from "../../src/auth/supabase-auth.ts";
import { createDb } from "../../src/db/database.ts";
import { createPool } from "../../src/db/pool.ts";
import { stack } from "../support/stack.ts";

async function closedPortUrl(): Promise<string> {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return `http://127.0.0.1:${port}/`;
}

Deno.test("sign-in, sign-up and refresh answer 503 while Supabase Auth is unreachable", async () => {
  const sql = createPool(stack.dbUrl, { max: 1, generatedTypes: true });
  const now = () => Date.now();
  const api = createApi({
    sql,
    db: createDb(sql),
    identity: createSupabaseAuth({ url: await closedPortUrl(), apiKey: stack.anonKey, fetch, now, timeoutMs: 2000 }),
    verifyAccessToken: createAccessTokenVerifier({
      jwksUrl: `${stack.authUrl}/.well-known/jwks.json`,
      jwtSecret: stack.jwtSecret,
      now,
    }),
    logger: {
      error: (message) => assert.fail(`unexpected error log: ${message}`),
      warn: (message) => assert.fail(`unexpected warning: ${message}`),
    },
  });
  try {
    const calls: [string, unknown][] = [
      ["sign-in", { email: "guest@example.com", password: "a-long-password" }],
      ["sign-up", { email: "guest@example.com", password: "a-long-password" }],
      ["refresh", { refreshToken: "abc" }],
    ];
    for (const [route, body] of calls) {
      const response = await api(
        new Request(`http://function/api/v1/auth/${route}`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(body),
        }),
      );
      assert.equal(response.status, 503, route);
      assert.equal((await response.json()).type, "urn:pms:problem:service-unavailable");
    }
  } finally {
    await sql.end();
  }
});
