// Tokens the API must refuse before it touches the database, through the gateway. The
// stack's api function verifies with the keys Supabase Auth publishes (ES256), as on a
// new hosted project; the refusals below need tokens Auth would never issue, so these
// tests sign them: with a key of their own, or with the stack's own signing key for an
// expired one.
import assert from "node:assert/strict";
import { generateKeyPair, importJWK, type JWK, SignJWT } from "jose";
import { signIn } from "../support/session.ts";
import { readProblem, stack } from "../support/stack.ts";
import { withFixture } from "../support/api.ts";

const now = () => Math.floor(Date.now() / 1000);

function claims(overrides: Record<string, unknown> = {}) {
  return {
    sub: crypto.randomUUID(),
    session_id: crypto.randomUUID(),
    role: "authenticated",
    aud: "authenticated",
    iat: now(),
    exp: now() + 3600,
    ...overrides,
  };
}

// Auth's own signing key, from the stack's key set (the one with key_ops sign).
async function stackSigningKey(): Promise<{ key: CryptoKey; kid: string }> {
  const keys = JSON.parse(stack.authJwtKeys) as (JWK & { kid: string })[];
  const jwk = keys.find((key) => key.key_ops?.includes("sign"));
  assert.ok(jwk, "the stack's key set has a signing key");
  // Web Crypto takes a private key for signing only; the JWK's key_ops name verify too.
  const { key_ops: _ops, ...privateJwk } = jwk;
  return { key: await importJWK(privateJwk, "ES256") as CryptoKey, kid: jwk.kid };
}

async function signEs256(payload: Record<string, unknown>, key: CryptoKey, kid: string): Promise<string> {
  return await new SignJWT(payload).setProtectedHeader({ alg: "ES256", typ: "JWT", kid }).sign(key);
}

async function meWith(authorization: string | null): Promise<Response> {
  return await fetch(`${stack.v1}/me`, { headers: authorization ? { authorization } : {} });
}

async function assertRefused(response: Response, detailPattern: RegExp) {
  assert.equal(response.status, 401);
  assert.match(response.headers.get("www-authenticate") ?? "", /^Bearer/);
  const problem = await readProblem(response);
  assert.equal(problem.type, "urn:pms:problem:unauthorized");
  assert.match(problem.detail, detailPattern);
}

Deno.test("no Authorization header: 401 with WWW-Authenticate", async () => {
  await assertRefused(await meWith(null), /Authorization/);
});

Deno.test("an Authorization header that is not Bearer: 401", async () => {
  await assertRefused(await meWith("Basic dXNlcjpwYXNz"), /Bearer/);
});

Deno.test("a malformed token: 401", async () => {
  await assertRefused(await meWith("Bearer not.a-token"), /malformed/);
});

Deno.test("a token signed by another key under the kid of Auth's signing key: 401", async () => {
  const { kid } = await stackSigningKey();
  const { privateKey } = await generateKeyPair("ES256");
  await assertRefused(await meWith(`Bearer ${await signEs256(claims(), privateKey, kid)}`), /signature/);
});

Deno.test("a token naming a key Auth does not publish: 401", async () => {
  const { privateKey } = await generateKeyPair("ES256");
  await assertRefused(await meWith(`Bearer ${await signEs256(claims(), privateKey, crypto.randomUUID())}`), /key/);
});

Deno.test("a token Auth issued, its claims changed after signing: 401", () =>
  withFixture(async ({ user }) => {
    const signedIn = await user("tampered");
    const [header, payload, signature] = signedIn.token.split(".");
    const claimsOfToken = JSON.parse(atob(payload!.replace(/-/g, "+").replace(/_/g, "/")));
    const forged = btoa(JSON.stringify({ ...claimsOfToken, role: "service_role" }))
      .replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
    await assertRefused(await meWith(`Bearer ${header}.${forged}.${signature}`), /signature/);
    // The token as Auth issued it is accepted.
    assert.equal((await meWith(`Bearer ${signedIn.token}`)).status, 200);
  }));

Deno.test("an expired token, signed with Auth's own key: 401", async () => {
  const { key, kid } = await stackSigningKey();
  const token = await signEs256(claims({ iat: now() - 7200, exp: now() - 3600 }), key, kid);
  await assertRefused(await meWith(`Bearer ${token}`), /expired/);
});

// The stack's functions have no legacy secret: an HS256 token, the API keys included,
// is not even checked against one.
Deno.test("an API key (HS256, no session) is not accepted as a session token: 401", async () => {
  await assertRefused(await meWith(`Bearer ${stack.anonKey}`), /algorithm/);
  await assertRefused(await meWith(`Bearer ${stack.serviceRoleKey}`), /algorithm/);
});

Deno.test("a session token after its user signed in again elsewhere still works, each session on its own", () =>
  withFixture(async ({ user }) => {
    const first = await user("two-sessions");
    const second = await signIn(first.email, first.password);
    assert.notEqual(second.sessionId, first.sessionId);
    assert.equal((await meWith(`Bearer ${first.token}`)).status, 200);
    assert.equal((await meWith(`Bearer ${second.token}`)).status, 200);
  }));
