// The API against Supabase Auth's real signing keys: tokens from an Auth that signs with
// an asymmetric key it publishes (the default), rotation of that key, and a project still
// on the legacy HS256 secret. Each test runs an Auth of its own (test/support/auth-process.ts)
// on the stack's database and an API built in-process around it, as the api function is.
import assert from "node:assert/strict";
import { exportJWK, generateKeyPair } from "jose";
import { withFixture } from "../support/api.ts";
import { apiWithAuthAt, type AuthProcess, signInAt, startAuth } from "../support/auth-process.ts";
import { stack } from "../support/stack.ts";
import { tokenClaims } from "../support/session.ts";

// GET /v1/me with `token` on an API (built in-process, as the api function is) whose Auth is `auth`.
async function withApi(
  auth: AuthProcess,
  verifier: Parameters<typeof apiWithAuthAt>[1],
  work: (me: (token: string) => Promise<Response>) => Promise<void>,
) {
  const api = apiWithAuthAt(auth.url, { jwksCooldownMs: 0, ...verifier });
  try {
    await work((token) => api.handle(new Request("http://function/api/v1/me", { headers: { authorization: `Bearer ${token}` } })));
  } finally {
    await api.close();
  }
}

async function status(response: Response): Promise<number> {
  await response.body?.cancel();
  return response.status;
}

async function newSigningKey(): Promise<Record<string, unknown>> {
  const { privateKey } = await generateKeyPair("ES256", { extractable: true });
  const { kty, crv, x, y, d } = await exportJWK(privateKey);
  return { kty, crv, x, y, d, kid: crypto.randomUUID(), alg: "ES256", use: "sig", key_ops: ["sign", "verify"] };
}

const verifyOnly = (key: Record<string, unknown>) => ({ ...key, key_ops: ["verify"] });

Deno.test("signing-key rotation: a token by the new key is accepted, one by the old key until it is removed, then refused", () =>
  withFixture(async ({ user }) => {
    const account = await user("rotation");
    const oldKey = await newSigningKey();
    const newKey = await newSigningKey();
    const cacheMs = 300;

    // Before: Auth signs with the old key.
    let auth = await startAuth({ GOTRUE_JWT_KEYS: JSON.stringify([oldKey]) });
    let byOldKey: string;
    try {
      byOldKey = await signInAt(auth, account.email, account.password);
      assert.equal(JSON.parse(atob(byOldKey.split(".")[0]!)).kid, oldKey.kid);
    } finally {
      await auth.stop();
    }

    // Rotation: the new key signs, the old one is still published for the tokens it signed.
    auth = await startAuth({ GOTRUE_JWT_KEYS: JSON.stringify([newKey, verifyOnly(oldKey)]) });
    try {
      const byNewKey = await signInAt(auth, account.email, account.password);
      assert.equal(JSON.parse(atob(byNewKey.split(".")[0]!)).kid, newKey.kid);
      await withApi(auth, { jwksCacheMaxAgeMs: cacheMs }, async (me) => {
        assert.equal(await status(await me(byOldKey)), 200, "the old key's token, its key still published");
        assert.equal(await status(await me(byNewKey)), 200, "the new key's token");
      });
    } finally {
      await auth.stop();
    }

    // The old key is removed: once the API's copy of the key set has aged, its tokens are refused.
    auth = await startAuth({ GOTRUE_JWT_KEYS: JSON.stringify([newKey]) });
    try {
      const byNewKey = await signInAt(auth, account.email, account.password);
      await withApi(auth, { jwksCacheMaxAgeMs: cacheMs }, async (me) => {
        assert.equal(await status(await me(byNewKey)), 200);
        await new Promise((resolve) => setTimeout(resolve, cacheMs + 100));
        const refused = await me(byOldKey);
        assert.equal(refused.status, 401);
        assert.match((await refused.json()).detail, /not by a key Supabase Auth publishes/);
        assert.equal(await status(await me(byNewKey)), 200);
      });
    } finally {
      await auth.stop();
    }
  }));

Deno.test("a project on the legacy HS256 secret: its tokens are accepted when AUTH_JWT_SECRET is set, refused when not", () =>
  withFixture(async ({ user }) => {
    const account = await user("legacy");
    // Without a key set, Auth signs with GOTRUE_JWT_SECRET (HS256), as projects did before signing keys.
    const auth = await startAuth({ GOTRUE_JWT_KEYS: null });
    try {
      const token = await signInAt(auth, account.email, account.password);
      assert.equal(JSON.parse(atob(token.split(".")[0]!)).alg, "HS256");
      assert.equal(tokenClaims(token).sub, account.id);
      await withApi(auth, { jwtSecret: stack.jwtSecret }, async (me) => {
        const response = await me(token);
        assert.equal(response.status, 200);
        assert.equal((await response.json()).user.id, account.id);
      });
      await withApi(auth, {}, async (me) => {
        const refused = await me(token);
        assert.equal(refused.status, 401);
        assert.match((await refused.json()).detail, /algorithm/);
      });
    } finally {
      await auth.stop();
    }
  }));

Deno.test("the stack's Auth signs with ES256 under the kid it publishes, and the API accepts what it signs", () =>
  withFixture(async ({ user }) => {
    const account = await user("es256");
    const header = JSON.parse(atob(account.token.split(".")[0]!));
    assert.equal(header.alg, "ES256");
    const published = await (await fetch(`${stack.apiUrl}/auth/v1/.well-known/jwks.json`)).json() as {
      keys: { kid: string; alg: string; d?: string }[];
    };
    assert.deepEqual(published.keys.map((key) => [key.kid, key.alg, key.d]), [[header.kid, "ES256", undefined]]);
    const me = await fetch(`${stack.v1}/me`, { headers: { authorization: `Bearer ${account.token}` } });
    assert.equal(me.status, 200);
    assert.equal((await me.json()).user.id, account.id);
  }));
