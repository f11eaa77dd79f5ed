// Tokens the API must refuse before it touches the database, through the gateway.
import assert from "node:assert/strict";
import { base64url, signHs256 } from "../../local/jwt.ts";
import { readProblem, stack } from "../support/stack.ts";

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

Deno.test("a token signed with another secret: 401", async () => {
  const token = await signHs256(claims(), "some-other-secret-of-sufficient-length");
  await assertRefused(await meWith(`Bearer ${token}`), /signature/);
});

Deno.test("a tampered token (claims changed after signing): 401", async () => {
  const token = await signHs256(claims(), stack.jwtSecret);
  const [header, , signature] = token.split(".");
  const forged = base64url(new TextEncoder().encode(JSON.stringify(claims({ role: "service_role" }))));
  await assertRefused(await meWith(`Bearer ${header}.${forged}.${signature}`), /signature/);
});

Deno.test("an expired token: 401", async () => {
  const token = await signHs256(claims({ iat: now() - 7200, exp: now() - 3600 }), stack.jwtSecret);
  await assertRefused(await meWith(`Bearer ${token}`), /expired/);
});

Deno.test("an API key is not a session token: 401", async () => {
  await assertRefused(await meWith(`Bearer ${stack.anonKey}`), /session token/);
});
