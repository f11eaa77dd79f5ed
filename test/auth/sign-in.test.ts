// POST /v1/auth/sign-in through the gateway against the stack's Supabase Auth: the
// session it answers works on the API, and a refusal never tells which part was wrong.
import assert from "node:assert/strict";
import { call, client, expectProblem, expectStatus, type Schemas, withFixture } from "../support/api.ts";
import { tokenClaims } from "../support/session.ts";
import { stack } from "../support/stack.ts";

const SIGN_IN = "/v1/auth/sign-in";

type Session = Schemas["Session"];

function signIn(email: string, password: string, headers: Record<string, string> = {}) {
  return call("POST", "/auth/sign-in", { body: { email, password }, headers });
}

async function adminAuth(method: string, path: string, body: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(`${stack.apiUrl}/auth/v1/admin${path}`, {
    method,
    headers: { apikey: stack.serviceRoleKey, authorization: `Bearer ${stack.serviceRoleKey}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  assert.ok(response.ok, `Auth's admin API answered ${response.status} to ${method} ${path}: ${text}`);
  return JSON.parse(text);
}

// Status, headers a client could tell apart by, and the body's bytes.
async function refusal(response: Response) {
  return {
    status: response.status,
    contentType: response.headers.get("content-type"),
    wwwAuthenticate: response.headers.get("www-authenticate"),
    body: await response.clone().text(),
  };
}

Deno.test("sign-in: 200 and a session whose access token the API accepts", () =>
  withFixture(async ({ user }) => {
    const alice = await user("sign-in");

    const session = await expectStatus<Session>("POST", SIGN_IN, await signIn(alice.email, alice.password), 200);

    assert.equal(session.user.id, alice.id);
    assert.equal(session.user.email, alice.email);
    assert.equal(session.tokenType, "bearer");
    assert.ok(session.refreshToken.length > 0);
    assert.ok(session.expiresAt > Date.now() / 1000);
    const me = await expectStatus<Schemas["Me"]>("GET", "/v1/me", await call("GET", "/me", { token: session.accessToken }), 200);
    assert.equal(me.user.id, alice.id);
  }));

Deno.test("sign-in: a wrong password, an unknown email and a banned account give the same 401, byte for byte", () =>
  withFixture(async ({ user }) => {
    const alice = await user("wrong-password");
    const banned = await user("banned");
    await adminAuth("PUT", `/users/${banned.id}`, { ban_duration: "24h" });

    const wrongPassword = await signIn(alice.email, `${alice.password}-not`);
    const unknownEmail = await signIn(`nobody-${crypto.randomUUID()}@test.example`, alice.password);
    // Auth says a banned account is banned before it checks the password.
    const bannedAccount = await signIn(banned.email, `${banned.password}-not`);

    const problem = await expectProblem("POST", SIGN_IN, wrongPassword, 401, "invalid-credentials");
    assert.equal(problem.detail, "Invalid email or password.");
    await expectProblem("POST", SIGN_IN, unknownEmail, 401, "invalid-credentials");
    await expectProblem("POST", SIGN_IN, bannedAccount, 401, "invalid-credentials");
    const expected = await refusal(wrongPassword);
    assert.match(expected.wwwAuthenticate ?? "", /^Bearer/);
    assert.deepEqual(await refusal(unknownEmail), expected);
    assert.deepEqual(await refusal(bannedAccount), expected);
  }));

Deno.test("sign-in with an unconfirmed email: 403 email-not-confirmed with the right password, 401 with a wrong one", () =>
  withFixture(async ({ cleanup }) => {
    const email = `unconfirmed-${crypto.randomUUID().slice(0, 8)}@test.example`;
    const password = `pw-${crypto.randomUUID()}`;
    const created = await adminAuth("POST", "/users", { email, password, email_confirm: false });
    cleanup.users.add(String(created.id));

    await expectProblem("POST", SIGN_IN, await signIn(email, password), 403, "email-not-confirmed");
    // Only the right password learns that the account exists.
    await expectProblem("POST", SIGN_IN, await signIn(email, `${password}-not`), 401, "invalid-credentials");
  }));

Deno.test("sign-in through the gateway: Auth records the end client's address, not the API's nor one the client claims", () =>
  withFixture(async ({ user, sql }) => {
    const alice = await user("forwarded");
    // A client on another loopback address than the API's, claiming yet another one:
    // the gateway, the edge of the project, replaces that claim with the connection's address.
    const curl = await new Deno.Command("curl", {
      args: [
        "-s", "--interface", "127.0.0.2", "-H", "content-type: application/json", "-H", "x-forwarded-for: 203.0.113.7",
        "-d", JSON.stringify({ email: alice.email, password: alice.password }), `${stack.v1}/auth/sign-in`,
      ],
      stdout: "piped",
    }).output();
    const session = JSON.parse(new TextDecoder().decode(curl.stdout)) as Session;

    const sessionId = String(tokenClaims(session.accessToken).session_id);
    const [row] = await sql<{ ip: string }[]>`select host(ip) as ip from auth.sessions where id = ${sessionId}`;
    assert.equal(row?.ip, "127.0.0.2");
  }));

Deno.test("sign-in: a body without the password is a 400 before Auth is asked", async () => {
  const response = await client(null).post("/auth/sign-in", { email: "someone@test.example" });
  const problem = await expectProblem("POST", SIGN_IN, response, 400, "validation");
  assert.ok(problem.errors?.some((error) => error.path === "password"));
});
