// Supabase Auth's contract, as far as this project relies on it: every endpoint, token
// claim, error code and refresh rule the API, the tests, the seed and the front desk use,
// driven through supabase-js (its auth client, as a browser or a server uses it) and
// through raw HTTP. The same suite holds the local double (local/auth) and a real Auth to
// one contract: it runs against the stack's Auth in `npm test`, and unchanged against any
// Supabase Auth given by
//   AUTH_URL               Auth's base URL (a project's is <project URL>/auth/v1)
//   AUTH_ANON_KEY          the project's anon key
//   AUTH_SERVICE_ROLE_KEY  its service_role key
//   AUTH_DB_URL            its database, for the sessions Auth keeps (optional: the checks
//                          of auth.sessions run only where it is given or the stack's is used)
// That Auth must run with supabase/config.toml's [auth] settings (`supabase start` does):
// the suite reads its expectations from there. Users it makes are deleted through the
// admin API when each test ends.
import assert from "node:assert/strict";
import {
  AuthApiError,
  AuthClient,
  type AuthError,
  AuthWeakPasswordError,
  type Session,
  type User,
} from "@supabase/supabase-js";
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from "jose";
import postgres from "postgres";
import { parse } from "smol-toml";
import { sleep } from "../../local/capture.ts";
import { stack } from "../support/stack.ts";

// ---- the Auth under test, and what supabase/config.toml says it runs with

const givenUrl = Deno.env.get("AUTH_URL");
const target = {
  url: (givenUrl ?? `${stack.apiUrl}/auth/v1`).replace(/\/$/, ""),
  anonKey: Deno.env.get("AUTH_ANON_KEY") ?? (givenUrl ? "" : stack.anonKey),
  serviceRoleKey: Deno.env.get("AUTH_SERVICE_ROLE_KEY") ?? (givenUrl ? "" : stack.serviceRoleKey),
  dbUrl: Deno.env.get("AUTH_DB_URL") ?? (givenUrl ? null : stack.dbUrl),
};
if (!target.anonKey || !target.serviceRoleKey) throw new Error("with AUTH_URL, set AUTH_ANON_KEY and AUTH_SERVICE_ROLE_KEY too");

type Table = Record<string, unknown>;
const config = parse(await Deno.readTextFile(new URL("../../supabase/config.toml", import.meta.url))) as Table;
const authConfig = config.auth as Table;
const expected = {
  jwtExpiry: authConfig.jwt_expiry as number,
  minLength: authConfig.minimum_password_length as number,
  reuseIntervalMs: (authConfig.refresh_token_reuse_interval as number) * 1000,
  autoconfirm: !((authConfig.email as Table).enable_confirmations as boolean),
};
// The rule the project sets (password_requirements = "letters_digits"): a letter and a digit.
const LETTERS_ONLY = "abcdefghijkl";
const STRONG = () => `pw-${crypto.randomUUID()}`;

// ---- raw HTTP

type Answer = { status: number; headers: Headers; body: Table; text: string };

async function http(
  method: string,
  path: string,
  options: { body?: unknown; rawBody?: string; bearer?: string | null; apiKey?: string; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const apiKey = options.apiKey ?? target.anonKey;
  const bearer = options.bearer === undefined ? apiKey : options.bearer;
  const response = await fetch(`${target.url}${path}`, {
    method,
    headers: {
      apikey: apiKey,
      ...(bearer === null ? {} : { authorization: `Bearer ${bearer}` }),
      ...(options.body !== undefined || options.rawBody !== undefined ? { "content-type": "application/json" } : {}),
      ...options.headers,
    },
    body: options.rawBody ?? (options.body === undefined ? undefined : JSON.stringify(options.body)),
  });
  const text = await response.text();
  let body: Table = {};
  try {
    body = text ? JSON.parse(text) : {};
  } catch {
    // not JSON: the text says what it is
  }
  return { status: response.status, headers: response.headers, body, text };
}

// Auth's error body without an API version: {code: <status>, error_code, msg}.
function expectError(answer: Answer, status: number, code: string, label = `${status} ${code}`): string {
  assert.equal(answer.status, status, `${label}: ${answer.text}`);
  assert.equal(answer.body.code, status, `${label}: code is the status`);
  assert.equal(answer.body.error_code, code, label);
  assert.equal(typeof answer.body.msg, "string", `${label}: msg`);
  return answer.body.msg as string;
}

// ---- supabase-js

type Client = InstanceType<typeof AuthClient>;

let clients = 0;
function authClient(key: string): Client {
  return new AuthClient({
    url: target.url,
    headers: { apikey: key, Authorization: `Bearer ${key}` },
    persistSession: false,
    autoRefreshToken: false,
    detectSessionInUrl: false,
    storageKey: `contract-${++clients}`,
  });
}
const admin = () => authClient(target.serviceRoleKey).admin;

// What a supabase-js call that succeeded gives; one that failed fails the test, saying why.
function ok<R extends { data: unknown; error: AuthError | null }>(result: R, label: string): Extract<R, { error: null }>["data"] {
  if (result.error) assert.fail(`${label}: ${result.error.name} ${result.error.status} ${result.error.code}: ${result.error.message}`);
  return result.data as Extract<R, { error: null }>["data"];
}

function apiError(error: AuthError | null, status: number, code: string, label: string): AuthError {
  assert.ok(error, `${label}: expected an error`);
  assert.ok(error instanceof AuthApiError, `${label}: ${error.name}`);
  assert.equal(error.status, status, label);
  assert.equal(error.code, code, label);
  return error;
}

function claimsOf(token: string): Table {
  return JSON.parse(new TextDecoder().decode(Uint8Array.from(atob(token.split(".")[1]!.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0))));
}

// ---- users the tests make, deleted through the admin API afterwards

type Account = { id: string; email: string; password: string };

function newEmail(label: string): string {
  return `contract-${label}-${crypto.randomUUID().slice(0, 8)}@test.example`;
}

async function withAccounts(work: (make: (label: string, options?: { confirm?: boolean; fullName?: string }) => Promise<Account>, made: Set<string>) => Promise<void>) {
  const made = new Set<string>();
  try {
    await work(async (label, options = {}) => {
      const email = newEmail(label);
      const password = STRONG();
      const { user } = ok(await admin().createUser({
        email, password, email_confirm: options.confirm ?? true,
        user_metadata: options.fullName ? { full_name: options.fullName } : {},
      }), `create ${label}`);
      made.add(user.id);
      return { id: user.id, email, password };
    }, made);
  } finally {
    for (const id of made) await admin().deleteUser(id);
  }
}

async function signIn(account: Account): Promise<{ client: Client; session: Session }> {
  const client = authClient(target.anonKey);
  const { session } = ok(await client.signInWithPassword({ email: account.email, password: account.password }), "sign-in");
  return { client, session };
}

async function withDb<T>(work: (sql: postgres.Sql) => Promise<T>): Promise<T | null> {
  if (target.dbUrl === null) return null;
  const sql = postgres(target.dbUrl, { max: 1, onnotice: () => {} });
  try {
    return await work(sql);
  } finally {
    await sql.end();
  }
}

async function sessionExists(sessionId: string): Promise<boolean | null> {
  return await withDb(async (sql) => {
    const [row] = await sql<{ present: boolean }[]>`select exists (select from auth.sessions where id = ${sessionId}) as present`;
    return row!.present;
  });
}

const getUser = (token: string) => http("GET", "/user", { bearer: token });
const refresh = (token: string) => http("POST", "/token?grant_type=refresh_token", { body: { refresh_token: token } });

// ---- the public endpoints

Deno.test("Auth contract: GET /health, GET /settings as config.toml sets them, and the published key set", async () => {
  const health = await http("GET", "/health");
  assert.equal(health.status, 200);
  for (const field of ["version", "name", "description"]) assert.equal(typeof health.body[field], "string", field);

  const settings = await http("GET", "/settings");
  assert.equal(settings.status, 200);
  assert.equal((settings.body.external as Table).email, true);
  assert.equal(settings.body.disable_signup, !(authConfig.enable_signup as boolean));
  assert.equal(settings.body.mailer_autoconfirm, expected.autoconfirm);

  const jwks = await http("GET", "/.well-known/jwks.json");
  assert.equal(jwks.status, 200);
  assert.match(jwks.headers.get("cache-control") ?? "", /max-age=\d+/);
  const keys = jwks.body.keys as Table[];
  assert.ok(Array.isArray(keys));
  for (const key of keys) {
    assert.ok(["EC", "RSA", "OKP"].includes(key.kty as string), `only public keys: ${key.kty}`);
    assert.equal(key.d, undefined, "no private member");
    assert.equal(typeof key.kid, "string");
    assert.equal(typeof key.alg, "string");
  }
});

// ---- sign-up

Deno.test("Auth contract: sign-up through supabase-js gives a session and the user with the data sent", () =>
  withAccounts(async (_make, made) => {
    const client = authClient(target.anonKey);
    const email = newEmail("sign-up");
    const password = STRONG();
    const data = ok(await client.signUp({ email, password, options: { data: { full_name: "Nora New" } } }), "sign-up");
    assert.ok(data.user);
    made.add(data.user.id);
    assert.equal(data.user.email, email);
    assert.equal(data.user.user_metadata.full_name, "Nora New");
    assert.equal(data.user.app_metadata.provider, "email");
    assert.deepEqual(data.user.identities?.map((identity: { provider: string; id: string }) => [identity.provider, identity.id]), [["email", data.user.id]]);
    if (expected.autoconfirm) {
      assert.ok(data.session, "confirmations off: a session at once");
      assert.ok(data.user.email_confirmed_at);
      assert.equal(claimsOf(data.session.access_token).sub, data.user.id);
    } else {
      assert.equal(data.session, null);
    }
  }));

Deno.test("Auth contract: sign-up refusals: a taken address (either case), weak passwords with their reasons, 72 bytes at most, a malformed address", () =>
  withAccounts(async (make) => {
    const taken = await make("taken");
    if (expected.autoconfirm) {
      for (const email of [taken.email, taken.email.toUpperCase()]) {
        expectError(await http("POST", "/signup", { body: { email, password: STRONG() } }), 422, "user_already_exists", email);
      }
      const { error } = await authClient(target.anonKey).signUp({ email: taken.email, password: STRONG() });
      apiError(error, 422, "user_already_exists", "supabase-js");
    }

    const lettersOnly = await http("POST", "/signup", { body: { email: newEmail("weak"), password: LETTERS_ONLY } });
    expectError(lettersOnly, 422, "weak_password");
    assert.deepEqual((lettersOnly.body.weak_password as Table).reasons, ["characters"]);
    const short = await http("POST", "/signup", { body: { email: newEmail("short"), password: "ab1" } });
    expectError(short, 422, "weak_password");
    assert.deepEqual((short.body.weak_password as Table).reasons, ["length"]);
    assert.match(short.body.msg as string, new RegExp(`at least ${expected.minLength} characters`));

    const { error } = await authClient(target.anonKey).signUp({ email: newEmail("weak-js"), password: LETTERS_ONLY });
    assert.ok(error instanceof AuthWeakPasswordError, error?.name);
    assert.equal(error.status, 422);
    assert.deepEqual(error.reasons, ["characters"]);

    expectError(await http("POST", "/signup", { body: { email: newEmail("bytes"), password: `${"é".repeat(36)}a1` } }), 400, "validation_failed", "over 72 bytes");
    expectError(await http("POST", "/signup", { body: { email: "x@mail-.example.com", password: STRONG() } }), 400, "validation_failed", "a label ending in a hyphen");
    expectError(await http("POST", "/signup", { body: { email: "not an address", password: STRONG() } }), 400, "validation_failed", "no @");
    expectError(await http("POST", "/signup", { rawBody: "{not json" }), 400, "bad_json");
  }));

Deno.test("Auth contract: with X-Supabase-Api-Version 2024-01-01 an error is {code, message} and the header comes back; without it, the legacy shape and no header", () =>
  withAccounts(async (make) => {
    const taken = await make("versioned");
    const body = { email: taken.email, password: "wrong-password-1" };
    const versioned = await http("POST", "/token?grant_type=password", { body, headers: { "x-supabase-api-version": "2024-01-01" } });
    assert.equal(versioned.status, 400);
    assert.deepEqual(versioned.body, { code: "invalid_credentials", message: "Invalid login credentials" });
    assert.equal(versioned.headers.get("x-supabase-api-version"), "2024-01-01");
    const legacy = await http("POST", "/token?grant_type=password", { body });
    assert.deepEqual(legacy.body, { code: 400, error_code: "invalid_credentials", msg: "Invalid login credentials" });
    assert.equal(legacy.headers.get("x-supabase-api-version"), null);
  }));

// ---- password sign-in and the access token

Deno.test("Auth contract: a password sign-in's session, its access token's claims, and the session Auth keeps", () =>
  withAccounts(async (make) => {
    const account = await make("claims", { fullName: "Cara Claims" });
    const answer = await http("POST", "/token?grant_type=password", {
      body: { email: account.email, password: account.password },
      headers: { "user-agent": "contract-suite/1" },
    });
    assert.equal(answer.status, 200, answer.text);
    const session = answer.body;
    assert.equal(session.token_type, "bearer");
    assert.equal(session.expires_in, expected.jwtExpiry);
    assert.match(session.refresh_token as string, /^[a-z0-9]{12}$/);
    const user = session.user as Table;
    assert.equal(user.id, account.id);
    assert.equal(user.email, account.email);
    assert.equal(typeof user.last_sign_in_at, "string");

    const token = session.access_token as string;
    const header = decodeProtectedHeader(token);
    assert.equal(header.typ, "JWT");
    const claims = claimsOf(token);
    assert.equal(session.expires_at, claims.exp);
    assert.equal((claims.exp as number) - (claims.iat as number), expected.jwtExpiry);
    assert.equal(claims.sub, account.id);
    assert.equal(claims.aud, "authenticated");
    assert.equal(claims.role, "authenticated");
    assert.equal(claims.email, account.email);
    assert.equal(claims.phone, "");
    assert.equal(claims.aal, "aal1");
    assert.equal(claims.is_anonymous, false);
    assert.match(claims.session_id as string, /^[0-9a-f-]{36}$/);
    assert.match(String(claims.iss), /^https?:\/\/.+\/auth\/v1$/);
    assert.deepEqual((claims.app_metadata as Table).provider, "email");
    assert.equal((claims.user_metadata as Table).full_name, "Cara Claims");
    const amr = claims.amr as Table[];
    assert.deepEqual(amr.map((entry) => entry.method), ["password"]);
    assert.ok(Math.abs((amr[0]!.timestamp as number) - (claims.iat as number)) <= 5);

    // An asymmetric token names a key the set publishes, and that key verifies it.
    if (header.alg !== "HS256") {
      const jwks = await http("GET", "/.well-known/jwks.json");
      const keys = jwks.body as { keys: never[] };
      assert.ok((keys.keys as Table[]).some((key) => key.kid === header.kid), "the token's kid is published");
      const { payload } = await jwtVerify(token, createLocalJWKSet(keys), { algorithms: [header.alg!] });
      assert.equal(payload.sub, account.id);
    } else {
      assert.equal(header.kid, undefined);
    }

    const kept = await withDb(async (sql) => {
      const [row] = await sql<{ user_id: string; aal: string; user_agent: string | null }[]>`
        select user_id::text, aal::text, user_agent from auth.sessions where id = ${claims.session_id as string}`;
      return row;
    });
    if (kept !== null) assert.deepEqual(kept, { user_id: account.id, aal: "aal1", user_agent: "contract-suite/1" });

    // supabase-js reads the same session.
    const { session: jsSession } = await signIn(account);
    assert.equal(jsSession.user.id, account.id);
    assert.equal(jsSession.expires_in, expected.jwtExpiry);
  }));

Deno.test("Auth contract: sign-in refusals: a wrong password and an unknown address alike; a ban before the password; an unconfirmed address after it", () =>
  withAccounts(async (make) => {
    const account = await make("refusals");
    const signInRaw = (email: string, password: string) => http("POST", "/token?grant_type=password", { body: { email, password } });
    const wrong = await signInRaw(account.email, `${account.password}x`);
    const unknown = await signInRaw(newEmail("nobody"), account.password);
    expectError(wrong, 400, "invalid_credentials");
    assert.equal(unknown.text, wrong.text, "the same body for an unknown address");
    const { error } = await authClient(target.anonKey).signInWithPassword({ email: account.email, password: "wrong-1" });
    apiError(error, 400, "invalid_credentials", "supabase-js");
    expectError(await signInRaw("", account.password), 400, "validation_failed", "no address");

    ok(await admin().updateUserById(account.id, { ban_duration: "24h" }), "ban");
    expectError(await signInRaw(account.email, account.password), 400, "user_banned", "banned, right password");
    expectError(await signInRaw(account.email, "wrong-password-1"), 400, "user_banned", "banned, wrong password");
    const unbanned = ok(await admin().updateUserById(account.id, { ban_duration: "none" }), "unban");
    assert.equal(unbanned.user.banned_until ?? null, null);
    assert.equal((await signInRaw(account.email, account.password)).status, 200, "signed in once the ban is lifted");

    const unconfirmed = await make("unconfirmed", { confirm: false });
    expectError(await signInRaw(unconfirmed.email, unconfirmed.password), 400, "email_not_confirmed", "right password");
    expectError(await signInRaw(unconfirmed.email, "wrong-password-1"), 400, "invalid_credentials", "wrong password");
  }));

// ---- refresh tokens and their rotation

Deno.test("Auth contract: refresh rotates the token; the parent of the newest gets the newest back; an older one within the reuse interval is honoured", () =>
  withAccounts(async (make) => {
    const account = await make("rotation");
    const { client, session } = await signIn(account);
    const refreshed = ok(await client.refreshSession(), "refresh").session!;
    assert.notEqual(refreshed.refresh_token, session.refresh_token);
    assert.equal(claimsOf(refreshed.access_token).session_id, claimsOf(session.access_token).session_id);
    assert.deepEqual((claimsOf(refreshed.access_token).amr as Table[]).map((entry) => entry.method), ["password"]);

    const again = await refresh(session.refresh_token);
    assert.equal(again.status, 200, again.text);
    assert.equal(again.body.refresh_token, refreshed.refresh_token, "the newest token, handed back");

    const third = await refresh(refreshed.refresh_token);
    assert.equal(third.status, 200);
    const reused = await refresh(session.refresh_token);
    assert.equal(reused.status, 200, `an older token within the reuse interval: ${reused.text}`);
  }));

Deno.test("Auth contract: an older token reused past the reuse interval is refused and revokes its session's tokens, not another session's", () =>
  withAccounts(async (make) => {
    const account = await make("reuse");
    const { session } = await signIn(account);
    const rt1 = session.refresh_token;
    const rt2 = (await refresh(rt1)).body.refresh_token as string;
    const rt3 = (await refresh(rt2)).body.refresh_token as string;
    const other = (await signIn(account)).session;

    await sleep(expected.reuseIntervalMs + 1500);
    expectError(await refresh(rt1), 400, "refresh_token_already_used", "the reused token");
    expectError(await refresh(rt2), 400, "refresh_token_already_used", "an older token of the session");
    // The newest, revoked a moment ago with the others, is within its own reuse interval.
    assert.equal((await refresh(rt3)).status, 200, "the newest token, revoked a moment ago");
    assert.equal((await refresh(other.refresh_token)).status, 200, "another session of the user");
  }));

Deno.test("Auth contract: refresh tokens Auth never issued or cannot read", async () => {
  expectError(await refresh("abcdefghijkl"), 400, "refresh_token_not_found", "unknown");
  expectError(await refresh("not a refresh token"), 400, "validation_failed", "malformed");
  expectError(await refresh(""), 400, "validation_failed", "empty");
  const { error } = await authClient(target.anonKey).refreshSession({ refresh_token: "abcdefghijkl" });
  apiError(error, 400, "refresh_token_not_found", "supabase-js");
});

// ---- sign-out

Deno.test("Auth contract: sign-out's scopes: local ends its session, others every other one, global all; an ended session's token is refused", () =>
  withAccounts(async (make) => {
    const account = await make("scopes");
    const [a, b, c] = [await signIn(account), await signIn(account), await signIn(account)];
    const sessionOf = (session: Session) => claimsOf(session.access_token).session_id as string;

    const local = await http("POST", "/logout?scope=local", { bearer: a.session.access_token });
    assert.equal(local.status, 204);
    assert.equal(local.text, "");
    expectError(await getUser(a.session.access_token), 403, "session_not_found", "after local");
    expectError(await refresh(a.session.refresh_token), 400, "refresh_token_not_found", "its refresh token");
    assert.equal((await getUser(b.session.access_token)).status, 200, "another session goes on");
    assert.equal(await sessionExists(sessionOf(a.session)) ?? false, false);
    expectError(await http("POST", "/logout?scope=local", { bearer: a.session.access_token }), 403, "session_not_found", "sign-out again");

    ok({ data: null, error: (await b.client.signOut({ scope: "others" })).error }, "others");
    assert.equal((await getUser(b.session.access_token)).status, 200, "the session that said others goes on");
    expectError(await getUser(c.session.access_token), 403, "session_not_found", "after others");

    const d = await signIn(account);
    ok({ data: null, error: (await d.client.signOut()).error }, "global, supabase-js's default");
    for (const ended of [b, d]) expectError(await getUser(ended.session.access_token), 403, "session_not_found", "after global");
    if (target.dbUrl !== null) {
      const remaining = await withDb((sql) => sql`select 1 from auth.sessions where user_id = ${account.id}`);
      assert.equal(remaining!.length, 0);
    }

    expectError(await http("POST", "/logout", { bearer: null }), 401, "no_authorization", "no bearer");
    const e = await signIn(account);
    expectError(await http("POST", "/logout?scope=everything", { bearer: e.session.access_token }), 400, "validation_failed", "an unknown scope");
    assert.equal((await getUser(e.session.access_token)).status, 200, "an unknown scope ends nothing");
  }));

// ---- the signed-in user

Deno.test("Auth contract: GET /user with a session's token, and the bearer refusals of the authenticated routes", () =>
  withAccounts(async (make) => {
    const account = await make("me");
    const { client, session } = await signIn(account);
    const { user } = ok(await client.getUser(), "getUser");
    assert.equal(user.id, account.id);
    assert.equal(user.email, account.email);
    const raw = await getUser(session.access_token);
    assert.equal(raw.status, 200);
    assert.deepEqual((raw.body.identities as Table[]).map((identity) => identity.provider), ["email"]);

    expectError(await http("GET", "/user", { bearer: null }), 401, "no_authorization", "no bearer");
    expectError(await getUser(target.anonKey), 403, "bad_jwt", "the anon key names no user");
    const [head, payload] = session.access_token.split(".");
    expectError(await getUser(`${head}.${payload}.${"A".repeat(86)}`), 403, "bad_jwt", "a forged signature");
    expectError(await getUser("not-a-jwt"), 403, "bad_jwt", "not a JWT");
  }));

Deno.test("Auth contract: PUT /user merges metadata (null removes a key); a new password ends the other sessions, not this one", () =>
  withAccounts(async (make) => {
    const account = await make("update", { fullName: "Uma Update" });
    const { client, session } = await signIn(account);
    const other = await signIn(account);

    const merged = ok(await client.updateUser({ data: { locale: "pt-PT", full_name: null } }), "metadata").user;
    assert.equal(merged.user_metadata.locale, "pt-PT");
    assert.equal("full_name" in merged.user_metadata, false);
    assert.equal(ok(await client.updateUser({ data: { theme: "dark" } }), "more metadata").user.user_metadata.locale, "pt-PT");

    const same = await client.updateUser({ password: account.password });
    apiError(same.error, 422, "same_password", "the same password");
    const weak = await client.updateUser({ password: LETTERS_ONLY });
    assert.ok(weak.error instanceof AuthWeakPasswordError, weak.error?.name);

    const password = STRONG();
    ok(await client.updateUser({ password }), "new password");
    assert.equal((await getUser(session.access_token)).status, 200, "this session goes on");
    expectError(await getUser(other.session.access_token), 403, "session_not_found", "the other session ended");
    expectError(await refresh(other.session.refresh_token), 400, "refresh_token_not_found", "and its refresh token");
    const withNew = await http("POST", "/token?grant_type=password", { body: { email: account.email, password } });
    assert.equal(withNew.status, 200, "the new password signs in");
    expectError(await http("POST", "/token?grant_type=password", { body: { email: account.email, password: account.password } }), 400, "invalid_credentials", "the old one does not");
  }));

// ---- the admin API

Deno.test("Auth contract: the admin API takes only the service_role key", () =>
  withAccounts(async (make) => {
    const account = await make("not-admin");
    const { session } = await signIn(account);
    expectError(await http("GET", "/admin/users", { bearer: null }), 401, "no_authorization", "no bearer");
    expectError(await http("GET", "/admin/users", { bearer: target.anonKey }), 403, "not_admin", "the anon key");
    expectError(await http("GET", "/admin/users", { bearer: session.access_token }), 403, "not_admin", "a user's token");
    expectError(await http("POST", "/admin/users", { bearer: target.anonKey, body: { email: newEmail("x"), password: STRONG() } }), 403, "not_admin", "create");
  }));

Deno.test("Auth contract: admin create (with an id, confirmed, with metadata), its refusals, get by id, list with its pages and filter", () =>
  withAccounts(async (_make, made) => {
    const id = crypto.randomUUID();
    const email = newEmail("admin-create");
    const created = ok(await admin().createUser({
      id, email, password: STRONG(), email_confirm: true, user_metadata: { full_name: "Ada Admin" },
    }), "create").user;
    made.add(created.id);
    assert.equal(created.id, id);
    assert.equal(created.email, email);
    assert.ok(created.email_confirmed_at);
    assert.equal(created.user_metadata.full_name, "Ada Admin");
    assert.equal(created.role, "authenticated");
    assert.equal(created.aud, "authenticated");

    const duplicate = await admin().createUser({ email: email.toUpperCase(), password: STRONG(), email_confirm: true });
    apiError(duplicate.error, 422, "email_exists", "a taken address");
    expectError(await http("POST", "/admin/users", { apiKey: target.serviceRoleKey, body: { password: STRONG() } }), 400, "validation_failed", "no address");

    assert.equal(ok(await admin().getUserById(id), "get").user.email, email);
    expectError(await http("GET", `/admin/users/${crypto.randomUUID()}`, { apiKey: target.serviceRoleKey }), 404, "user_not_found", "unknown id");
    assert.equal((await http("GET", "/admin/users/not-a-uuid", { apiKey: target.serviceRoleKey })).status, 404, "not a uuid");

    // Three users sharing a marker, listed a page of two at a time.
    const marker = `contract-list-${crypto.randomUUID().slice(0, 8)}`;
    for (const n of [1, 2, 3]) {
      const { user } = ok(await admin().createUser({ email: `${marker}-${n}@test.example`, password: STRONG(), email_confirm: true }), "listed");
      made.add(user.id);
    }
    const filtered = await http("GET", `/admin/users?filter=${marker}&per_page=2&page=1`, { apiKey: target.serviceRoleKey });
    assert.equal(filtered.status, 200);
    assert.equal((filtered.body.users as Table[]).length, 2);
    assert.equal(filtered.headers.get("x-total-count"), "3");
    const link = filtered.headers.get("link") ?? "";
    assert.match(link, /page=2[^>]*>; rel="next"/);
    assert.match(link, /page=2[^>]*>; rel="last"/);
    const second = await http("GET", `/admin/users?filter=${marker}&per_page=2&page=2`, { apiKey: target.serviceRoleKey });
    const listedEmails = [...(filtered.body.users as Table[]), ...(second.body.users as Table[])].map((user) => user.email).sort();
    assert.deepEqual(listedEmails, [1, 2, 3].map((n) => `${marker}-${n}@test.example`));

    const page = ok(await admin().listUsers({ page: 1, perPage: 1 }), "supabase-js list");
    assert.equal(page.users.length, 1);
    assert.ok(page.total >= 4);
    assert.equal(page.nextPage, 2);
  }));

Deno.test("Auth contract: admin update merges metadata, bans and lifts a ban; a new password ends every session; delete removes the user and its sessions", () =>
  withAccounts(async (make, made) => {
    const account = await make("admin-update", { fullName: "Ivo Initial" });
    const { session } = await signIn(account);

    const updated = ok(await admin().updateUserById(account.id, { user_metadata: { locale: "en-GB" } }), "metadata").user;
    assert.deepEqual([updated.user_metadata.full_name, updated.user_metadata.locale], ["Ivo Initial", "en-GB"]);
    const banned = ok(await admin().updateUserById(account.id, { ban_duration: "1h" }), "ban").user as User & { banned_until?: string };
    assert.ok(banned.banned_until && Date.parse(banned.banned_until) > Date.now() + 3_000_000, String(banned.banned_until));
    expectError(await refresh(session.refresh_token), 400, "user_banned", "a banned user's refresh");
    assert.equal((await getUser(session.access_token)).status, 200, "a ban does not end the session itself");
    ok(await admin().updateUserById(account.id, { ban_duration: "none" }), "unban");
    expectError(await http("PUT", `/admin/users/${account.id}`, { apiKey: target.serviceRoleKey, body: { ban_duration: "forever" } }), 400, "validation_failed", "a ban that is no duration");

    const password = STRONG();
    ok(await admin().updateUserById(account.id, { password }), "new password");
    expectError(await getUser(session.access_token), 403, "session_not_found", "an administrator's new password ends every session");
    const { session: after } = await signIn({ ...account, password });

    const deleted = await http("DELETE", `/admin/users/${account.id}`, { apiKey: target.serviceRoleKey });
    assert.equal(deleted.status, 200);
    assert.deepEqual(deleted.body, {});
    made.delete(account.id);
    expectError(await http("GET", `/admin/users/${account.id}`, { apiKey: target.serviceRoleKey }), 404, "user_not_found", "deleted");
    expectError(await getUser(after.access_token), 403, "user_not_found", "a deleted user's token");
    expectError(await refresh(after.refresh_token), 400, "refresh_token_not_found", "a deleted user's refresh token");
    assert.equal(await sessionExists(claimsOf(after.access_token).session_id as string) ?? false, false);
  }));

// ---- browsers

Deno.test("Auth contract: a browser's preflight for supabase-js's headers is granted", async () => {
  const response = await fetch(`${target.url}/token?grant_type=password`, {
    method: "OPTIONS",
    headers: {
      origin: "http://127.0.0.1:5173",
      "access-control-request-method": "POST",
      "access-control-request-headers": "apikey, authorization, content-type, x-client-info, x-supabase-api-version",
    },
  });
  await response.body?.cancel();
  assert.ok(response.status >= 200 && response.status < 300, String(response.status));
  assert.ok(response.headers.get("access-control-allow-origin"));
  const allowed = (response.headers.get("access-control-allow-headers") ?? "").toLowerCase();
  for (const header of ["apikey", "authorization", "content-type", "x-client-info", "x-supabase-api-version"]) {
    assert.ok(allowed.includes(header) || allowed === "*", `${header} in ${allowed}`);
  }
});
