// POST /v1/auth/sign-up through the gateway against the stack's Supabase Auth, whose
// settings come from supabase/config.toml: email confirmations off (sign-up answers a
// session), passwords of at least 8 characters with letters and digits.
import assert from "node:assert/strict";
import { call, expectProblem, expectStatus, type Schemas, withFixture } from "../support/api.ts";
import { apiWithAuthAt, postJson, startAuth } from "../support/auth-process.ts";
import { assertMatchesContract } from "../support/openapi.ts";

const SIGN_UP = "/v1/auth/sign-up";

type SignUpResult = Schemas["SignUpResult"];

function newEmail(label: string): string {
  return `${label}-${crypto.randomUUID().slice(0, 8)}@test.example`;
}

function signUp(body: unknown) {
  return call("POST", "/auth/sign-up", { body });
}

Deno.test("sign-up: 201, the user, and a session the API accepts", () =>
  withFixture(async ({ cleanup }) => {
    const email = newEmail("sign-up");

    const result = await expectStatus<SignUpResult>(
      "POST", SIGN_UP, await signUp({ email, password: "first-pass-1", fullName: "Nora New" }), 201,
    );
    cleanup.users.add(result.user.id);

    assert.equal(result.user.email, email);
    assert.equal(result.user.fullName, "Nora New");
    assert.ok(result.session, "confirmations are off: signed in at once");
    const me = await expectStatus<Schemas["Me"]>(
      "GET", "/v1/me", await call("GET", "/me", { token: result.session.accessToken }), 200,
    );
    assert.deepEqual([me.user.id, me.user.fullName, me.memberships], [result.user.id, "Nora New", []]);
  }));

Deno.test("sign-up with an email that has an account: 409 email-taken", () =>
  withFixture(async ({ user }) => {
    const alice = await user("taken");

    const problem = await expectProblem("POST", SIGN_UP, await signUp({ email: alice.email, password: "other-pass-2" }), 409, "email-taken");
    assert.equal(problem.detail, "An account with this email already exists.");
    // The email's case does not make another account.
    await expectProblem("POST", SIGN_UP, await signUp({ email: alice.email.toUpperCase(), password: "other-pass-2" }), 409, "email-taken");
  }));

Deno.test("sign-up with a password of letters only: 422 weak-password with Auth's reasons, and no account", () =>
  withFixture(async ({ sql }) => {
    const email = newEmail("weak");

    const response = await signUp({ email, password: "aaaaaaaaaa" });
    const problem = await expectProblem("POST", SIGN_UP, response, 422, "weak-password");

    assert.deepEqual(problem.reasons, ["characters"]);
    const errors = problem.errors ?? [];
    assert.deepEqual(errors.map((error) => error.path), ["password"]);
    assert.ok(errors[0]!.message.length > 0);
    const [row] = await sql<{ count: number }[]>`select count(*)::int as count from auth.users where email = ${email}`;
    assert.equal(row?.count, 0);
  }));

Deno.test("sign-up with a password under 8 characters: 422 weak-password, Auth's reason `length`, and no account", () =>
  withFixture(async ({ sql }) => {
    const email = newEmail("short");
    const problem = await expectProblem("POST", SIGN_UP, await signUp({ email, password: "abc1" }), 422, "weak-password");
    assert.deepEqual(problem.reasons, ["length"]);
    assert.deepEqual((problem.errors ?? []).map((error) => error.path), ["password"]);
    const [row] = await sql<{ count: number }[]>`select count(*)::int as count from auth.users where email = ${email}`;
    assert.equal(row?.count, 0);
  }));

Deno.test("sign-up with an empty password or one over 72 characters: a 400 naming it, before Auth is asked", async () => {
  for (const password of ["", "a1".repeat(37)]) {
    const problem = await expectProblem("POST", SIGN_UP, await signUp({ email: newEmail("bounds"), password }), 400, "validation");
    assert.ok(problem.errors?.some((error) => error.path === "password"), password);
  }
});

// The document allows 72 characters; bcrypt reads 72 bytes, so a password of fewer
// characters but more bytes matches the document and breaks Auth's rule: a 422.
Deno.test("sign-up with 72 characters but more than 72 bytes in UTF-8: 422 naming the password, and no account", () =>
  withFixture(async ({ sql }) => {
    const email = newEmail("bytes");
    const password = `${"é".repeat(36)}a1`;
    assert.equal(password.length <= 72 && new TextEncoder().encode(password).length > 72, true);
    const problem = await expectProblem("POST", SIGN_UP, await signUp({ email, password }), 422, "unprocessable");
    assert.deepEqual((problem.errors ?? []).map((error) => error.path), ["password"]);
    const [row] = await sql<{ count: number }[]>`select count(*)::int as count from auth.users where email = ${email}`;
    assert.equal(row?.count, 0);
    const fits = await signUp({ email, password: `${"é".repeat(35)}a1` });
    assert.equal(fits.status, 201, "72 bytes is accepted");
  }));

Deno.test("sign-up where Auth takes no new accounts: 403 signup-disabled", async () => {
  const auth = await startAuth({ GOTRUE_DISABLE_SIGNUP: "true" });
  const api = apiWithAuthAt(auth.url);
  try {
    const response = await api.handle(postJson("/auth/sign-up", { email: newEmail("closed"), password: "closed-pass-1" }));
    const problem = await assertMatchesContract("POST", SIGN_UP, response) as Schemas["Problem"];
    assert.equal(response.status, 403);
    assert.equal(problem.type, "urn:pms:problem:signup-disabled");
  } finally {
    await api.close();
    await auth.stop();
  }
});

// Supabase Auth takes only domains of DNS labels; the document's pattern says so, so an
// address it allows is never refused by Auth as malformed.
Deno.test("sign-up with a domain label ending in a hyphen: 400 naming the email, before Auth is asked", async () => {
  const problem = await expectProblem("POST", SIGN_UP, await signUp({
    email: `x-${crypto.randomUUID().slice(0, 8)}@mail-.example.com`, password: "Password-1",
  }), 400, "validation");
  assert.deepEqual((problem.errors ?? []).map((error) => error.path), ["email"]);
});
