// The Auth double's parts that need no database: its reading of Auth's settings, its
// password rules, its error shapes, its rate limiter, and the answers it gives before it
// would ask the database (routes it lacks, preflights, refusals of the body). What it does
// with the database is held to the real Auth by test/auth/contract.test.ts.
import assert from "node:assert/strict";
import { ConfigError, parseRequiredCharacters, readConfig } from "../../local/auth/config.ts";
import { AuthError, errorResponse } from "../../local/auth/errors.ts";
import { createKeys } from "../../local/auth/keys.ts";
import { checkPasswordStrength, hashPassword, passwordMatches } from "../../local/auth/passwords.ts";
import { createLimiter } from "../../local/auth/rate-limit.ts";
import { createAuthDouble, parseGoDuration } from "../../local/auth/server.ts";
import { rfc3339, type Sql } from "../../local/auth/store.ts";

const BASE_ENV = { GOTRUE_JWT_SECRET: "a-secret-of-the-tests-0000000000", GOTRUE_SITE_URL: "http://127.0.0.1:3000", GOTRUE_DB_DATABASE_URL: "postgres://nowhere" };

Deno.test("settings: Auth's defaults, its minimum password length of 6, and its colon-separated character sets", () => {
  const config = readConfig(BASE_ENV);
  assert.equal(config.refreshTokenRotation, true);
  assert.equal(config.refreshTokenReuseIntervalSeconds, 0);
  assert.equal(config.jwt.expirySeconds, 3600);
  assert.deepEqual(config.jwt.adminRoles, ["service_role", "supabase_admin"]);
  assert.equal(config.rateLimit.header, null);
  assert.equal(config.rateLimit.token.burst, 30);
  assert.equal(config.rateLimit.token.perSecond, 150 / 300);
  assert.equal(readConfig({ ...BASE_ENV, GOTRUE_PASSWORD_MIN_LENGTH: "4" }).password.minLength, 6);
  assert.deepEqual(parseRequiredCharacters("abc:ABC:0123456789"), ["abc", "ABC", "0123456789"]);
  assert.deepEqual(parseRequiredCharacters("ab\\:c:!?"), ["ab:c", "!?"]);
});

Deno.test("settings: a setting the double cannot honour, or a missing secret, stops it", () => {
  assert.throws(() => readConfig({ ...BASE_ENV, GOTRUE_SECURITY_UPDATE_PASSWORD_REQUIRE_REAUTHENTICATION: "true" }), ConfigError);
  assert.throws(() => readConfig({ ...BASE_ENV, GOTRUE_EXTERNAL_PHONE_ENABLED: "true" }), ConfigError);
  assert.doesNotThrow(() => readConfig({ ...BASE_ENV, GOTRUE_EXTERNAL_PHONE_ENABLED: "false" }));
  assert.throws(() => readConfig({ ...BASE_ENV, GOTRUE_JWT_SECRET: "" }), /GOTRUE_JWT_SECRET is required/);
  assert.throws(() => readConfig({ ...BASE_ENV, GOTRUE_DISABLE_SIGNUP: "maybe" }), ConfigError);
});

Deno.test("passwords: bytes over 72 are a 400; too short and missing a kind of character are a 422 naming each reason", () => {
  const rules = { minLength: 8, requiredCharacters: ["abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", "0123456789"] };
  const refusal = (password: string) => {
    try {
      checkPasswordStrength(password, rules);
      return null;
    } catch (error) {
      assert.ok(error instanceof AuthError);
      return error;
    }
  };
  assert.equal(refusal("long-enough-1"), null);
  assert.deepEqual([refusal(`${"é".repeat(36)}a1`)?.status, refusal(`${"é".repeat(36)}a1`)?.code], [400, "validation_failed"]);
  assert.equal(refusal(`${"é".repeat(35)}a1`), null, "72 bytes is allowed");
  const both = refusal("abc")!;
  assert.deepEqual([both.status, both.code, both.extra], [422, "weak_password", { weak_password: { reasons: ["length", "characters"] } }]);
  assert.match(both.message, /^Password should be at least 8 characters\. Password should contain at least one character of each: /);
  assert.deepEqual(refusal("é1é1é1é1")?.extra, { weak_password: { reasons: ["characters"] } }, "é is no letter of the set");
});

Deno.test("passwords: bcrypt hashes as Auth's ($2a$, cost 10) that check against what made them, and pgcrypto's too", async () => {
  const hash = await hashPassword("pw-1234567");
  assert.match(hash, /^\$2a\$10\$/);
  assert.equal(await passwordMatches("pw-1234567", hash), true);
  assert.equal(await passwordMatches("pw-1234568", hash), false);
  // extensions.crypt('pw-1234567', extensions.gen_salt('bf')), as a seed or an operator's SQL makes one.
  const pgcrypto = "$2a$06$NpWHMEPfKJ0SQsYf9gsNQeDmxv7W49Lhjyn/CaDM4gQw4E/F2XLSi";
  assert.equal(await passwordMatches("pw-1234567", pgcrypto), true);
  assert.equal(await passwordMatches("pw-1234568", pgcrypto), false);
  assert.equal(await passwordMatches("anything", null), false);
  assert.equal(await passwordMatches("anything", "not-a-hash"), false);
});

Deno.test("errors: the legacy shape without an API version; the 2024-01-01 shape, with the header back, when asked", async () => {
  const error = new AuthError(422, "weak_password", "Too short.", { weak_password: { reasons: ["length"] } });
  const legacy = errorResponse(new Request("http://auth/signup"), error);
  assert.deepEqual(await legacy.json(), { code: 422, error_code: "weak_password", msg: "Too short.", weak_password: { reasons: ["length"] } });
  assert.equal(legacy.headers.get("x-supabase-api-version"), null);
  for (const version of ["2024-01-01", "2025-06-30"]) {
    const versioned = errorResponse(new Request("http://auth/signup", { headers: { "x-supabase-api-version": version } }), error);
    assert.deepEqual(await versioned.json(), { code: "weak_password", message: "Too short.", weak_password: { reasons: ["length"] } });
    assert.equal(versioned.headers.get("x-supabase-api-version"), "2024-01-01");
  }
  for (const version of ["2023-12-31", "yesterday"]) {
    const initial = errorResponse(new Request("http://auth/signup", { headers: { "x-supabase-api-version": version } }), error);
    assert.equal((await initial.json()).error_code, "weak_password", version);
  }
});

Deno.test("rate limit: a full bucket of its burst, then one request per refill; no key, no limit", () => {
  const limiter = createLimiter({ perSecond: 1, burst: 3 });
  assert.deepEqual([0, 0, 0, 0].map(() => limiter.allow("a", 1000)), [true, true, true, false]);
  assert.equal(limiter.allow("b", 1000), true, "another key has its own bucket");
  assert.equal(limiter.allow("a", 2000), true, "a second later, one more");
  assert.equal(limiter.allow("a", 2000), false);
  assert.ok([1, 2, 3, 4, 5].every(() => limiter.allow(null, 2000)));
});

Deno.test("durations and timestamps as Auth reads and writes them", () => {
  assert.equal(parseGoDuration("24h"), 86_400_000);
  assert.equal(parseGoDuration("1h30m"), 5_400_000);
  assert.equal(parseGoDuration("1.5s"), 1500);
  assert.throws(() => parseGoDuration("forever"), /invalid format for ban duration: time: invalid duration "forever"/);
  assert.throws(() => parseGoDuration("24"), /invalid duration/);
  assert.equal(rfc3339("2026-12-01 10:00:00.123400+00"), "2026-12-01T10:00:00.1234Z");
  assert.equal(rfc3339("2026-12-01 10:00:00+00"), "2026-12-01T10:00:00Z");
  assert.equal(rfc3339("2026-12-01 10:00:00.5"), "2026-12-01T10:00:00.5Z");
});

// The double without a database: any statement fails the test.
async function doubleWithoutDatabase() {
  const config = readConfig({ ...BASE_ENV, GOTRUE_JWT_ISSUER: "http://127.0.0.1/auth/v1" });
  const sql = new Proxy(() => {}, { get: () => assert.fail("the database was asked"), apply: () => assert.fail("the database was asked") });
  const logged: Record<string, unknown>[] = [];
  const handle = createAuthDouble({ config, sql: sql as unknown as Sql, keys: await createKeys(config.jwt), now: () => new Date(), log: (fields) => logged.push(fields) });
  return { handle: (request: Request) => handle(request, "127.0.0.1"), logged };
}

Deno.test("routes: health, settings and the key set; a path Auth lacks is its router's 404; a wrong method 405; a route the double lacks 501", async () => {
  const { handle, logged } = await doubleWithoutDatabase();
  const health = await handle(new Request("http://auth/health"));
  assert.equal(health.status, 200);
  assert.deepEqual(Object.keys(await health.json()), ["version", "name", "description"]);
  const settings = await (await handle(new Request("http://auth/settings"))).json();
  assert.deepEqual([settings.external.email, settings.disable_signup, settings.mailer_autoconfirm], [true, false, false]);
  const jwks = await handle(new Request("http://auth/.well-known/jwks.json"));
  assert.equal(jwks.headers.get("cache-control"), "public, max-age=600");
  assert.deepEqual(await jwks.json(), { keys: [] }, "the legacy secret alone publishes nothing");

  const missing = await handle(new Request("http://auth/nowhere"));
  assert.deepEqual([missing.status, missing.headers.get("content-type"), await missing.text()], [404, "text/plain; charset=utf-8", "404 page not found\n"]);
  const wrongMethod = await handle(new Request("http://auth/signup"));
  assert.equal(wrongMethod.status, 405);
  await wrongMethod.body?.cancel();
  const otp = await handle(new Request("http://auth/otp", { method: "POST", body: "{}" }));
  assert.deepEqual([otp.status, (await otp.json()).error_code], [501, "not_implemented"]);

  assert.ok(logged.every((line) => line.msg === "request completed" && !String(line.path).includes("?")));
});

Deno.test("routes: refusals made before the database is asked: grant types, bodies, passwords, addresses, bearers", async () => {
  const { handle } = await doubleWithoutDatabase();
  const post = (path: string, body: string, headers: Record<string, string> = {}) =>
    handle(new Request(`http://auth${path}`, { method: "POST", body, headers }));
  const expectError = async (response: Response, status: number, code: string) => {
    const body = await response.json();
    assert.deepEqual([response.status, body.code, body.error_code], [status, status, code], JSON.stringify(body));
    return body.msg as string;
  };
  assert.equal(await expectError(await post("/token", "{}"), 400, "invalid_credentials"), "unsupported_grant_type");
  assert.equal(await expectError(await post("/token?grant_type=magic", "{}"), 400, "invalid_credentials"), "unsupported_grant_type");
  await expectError(await post("/token?grant_type=refresh_token", `{"refresh_token":"short"}`), 400, "validation_failed");
  await expectError(await post("/token?grant_type=refresh_token", `{"refresh_token":"ABCDEFGHIJKL"}`), 400, "validation_failed");
  await expectError(await post("/token?grant_type=password", `{"email":"","password":"x"}`), 400, "validation_failed");
  await expectError(await post("/token?grant_type=password", `{"phone":"+15005550006","password":"x"}`), 422, "phone_provider_disabled");
  await expectError(await post("/signup", "{oops"), 400, "bad_json");
  await expectError(await post("/signup", `{"password":"long-enough-1"}`), 422, "anonymous_provider_disabled");
  await expectError(await post("/signup", `{"email":"a@example.com","password":"abc"}`), 422, "weak_password");
  await expectError(await post("/signup", `{"email":"a@-example.com","password":"long-enough-1"}`), 400, "validation_failed");
  await expectError(await post("/logout", ""), 401, "no_authorization");
  assert.match(await expectError(await post("/logout", "", { authorization: "Bearer not.a.jwt" }), 403, "bad_jwt"), /^invalid JWT: unable to parse or verify signature, /);
  await expectError(await handle(new Request("http://auth/admin/users", { headers: { authorization: "Basic x" } })), 401, "no_authorization");
});

Deno.test("CORS: any origin's preflight for Auth's headers and those GOTRUE_CORS_ALLOWED_HEADERS adds is granted; other headers are not", async () => {
  const config = readConfig({ ...BASE_ENV, GOTRUE_CORS_ALLOWED_HEADERS: "apikey" });
  const handle = createAuthDouble({ config, sql: null as unknown as Sql, keys: await createKeys(config.jwt), now: () => new Date(), log: () => {} });
  const preflight = (headers: string) =>
    handle(new Request("http://auth/token", {
      method: "OPTIONS",
      headers: { origin: "http://app.test", "access-control-request-method": "POST", "access-control-request-headers": headers },
    }), null);
  const granted = await preflight("apikey, authorization, content-type, x-client-info, x-supabase-api-version");
  assert.equal(granted.status, 204);
  assert.equal(granted.headers.get("access-control-allow-origin"), "*");
  assert.equal(granted.headers.get("access-control-allow-headers"), "apikey, authorization, content-type, x-client-info, x-supabase-api-version");
  const refused = await preflight("x-something-else");
  assert.equal(refused.headers.get("access-control-allow-origin"), null);
});
