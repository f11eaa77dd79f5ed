// The local double of Supabase Auth's HTTP API: the routes the API, supabase-js, the tests
// and the seed use, with Auth's paths, bodies, statuses and error codes, over Auth's own
// tables (local/auth/store.ts). What it answers, and the cases it covers, is held to the
// real Auth by test/auth/contract.test.ts, which runs against either. A route of Auth's that
// the double does not implement answers 501 with Auth's error body; one Auth does not have
// answers as Auth's router does (404, text).
import type { AuthConfig } from "./config.ts";
import { AuthError, badRequest, errorResponse, forbidden, notFound, unprocessable } from "./errors.ts";
import type { Keys } from "./keys.ts";
import { checkPasswordStrength, hashPassword, passwordMatches } from "./passwords.ts";
import { createLimiter, type Limiter } from "./rate-limit.ts";
import {
  activeRefreshToken,
  addAmr,
  amrOf,
  audit,
  type ClientInfo,
  deleteRefreshToken,
  deleteSessions,
  emailTaken,
  identitiesOf,
  INSTANCE_ID,
  insertEmailIdentity,
  insertRefreshToken,
  insertSession,
  insertUser,
  isBanned,
  mergeMetadata,
  refreshTokenForUpdate,
  revokeRefreshToken,
  revokeSessionRefreshTokens,
  rfc3339,
  sessionById,
  type Sql,
  touchSession,
  type Tx,
  updateUser,
  userByEmail,
  userById,
  userJson,
  type UserRow,
} from "./store.ts";

export const DOUBLE_VERSION = "v2.196.0-local-double";

export type AuthDoubleDeps = {
  config: AuthConfig;
  sql: Sql;
  keys: Keys;
  now: () => Date;
  log: (fields: Record<string, unknown>) => void;
};

type Json = Record<string, unknown>;
type Context = { request: Request; url: URL; client: ClientInfo; now: Date };
type Handler = (context: Context) => Promise<Response>;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const NIL_UUID = "00000000-0000-0000-0000-000000000000";
// The address check Auth makes (checkmail's pattern): a local part, then DNS labels.
const EMAIL =
  /^[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$/;
const LEGACY_REFRESH_TOKEN = /^[a-z0-9]{12}$/;
const BEARER = /^[Bb]earer (\S+)$/;

function json(body: unknown, status = 200, headers: HeadersInit = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });
}

async function readBody(request: Request, optionalBody = false): Promise<Json> {
  const text = await request.text();
  if (optionalBody && text.trim() === "") return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const reason = text.trim() === "" ? "unexpected end of JSON input" : (error instanceof Error ? error.message : String(error));
    throw badRequest("bad_json", `Could not parse request body as JSON: ${reason}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw badRequest("bad_json", "Could not parse request body as JSON: json: cannot unmarshal into Go value of type object");
  }
  return value as Json;
}

function stringField(body: Json, name: string): string {
  const value = body[name];
  if (value === undefined || value === null) return "";
  if (typeof value !== "string") {
    throw badRequest("bad_json", `Could not parse request body as JSON: json: cannot unmarshal ${typeof value} into Go struct field .${name} of type string`);
  }
  return value;
}

function objectField(body: Json, name: string): Json | null {
  const value = body[name];
  if (value === undefined || value === null) return null;
  if (typeof value !== "object" || Array.isArray(value)) {
    throw badRequest("bad_json", `Could not parse request body as JSON: json: cannot unmarshal into Go struct field .${name} of type map[string]interface {}`);
  }
  return value as Json;
}

function validateEmail(email: string): string {
  if (email === "") throw badRequest("validation_failed", "An email address is required");
  if (email.length > 255) throw badRequest("validation_failed", "An email address is too long");
  if (!EMAIL.test(email)) throw badRequest("validation_failed", "Unable to validate email address: invalid format");
  return email.toLowerCase();
}

// Go's time.ParseDuration, for ban_duration.
const DURATION_UNITS: Record<string, number> = { ns: 1e-6, us: 1e-3, "µs": 1e-3, "μs": 1e-3, ms: 1, s: 1e3, m: 6e4, h: 3.6e6 };
export function parseGoDuration(value: string): number {
  const fail = () => badRequest("validation_failed", `invalid format for ban duration: time: invalid duration "${value}"`);
  const match = /^([-+]?)((?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+$/.exec(value);
  if (value === "0") return 0;
  if (!match) throw fail();
  let total = 0;
  for (const [, amount, unit] of value.matchAll(/(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/g)) {
    total += Number(amount) * DURATION_UNITS[unit!]!;
  }
  return match[1] === "-" ? -total : total;
}

function clientInfo(request: Request, remoteAddress: string | null): ClientInfo {
  const forwarded = request.headers.get("x-forwarded-for")?.split(",")[0]?.trim();
  const candidate = forwarded || remoteAddress;
  const ip = candidate && /^[0-9a-fA-F:.]+$/.test(candidate) ? candidate : null;
  return { ip, userAgent: request.headers.get("user-agent") || null };
}

export function createAuthDouble(deps: AuthDoubleDeps): (request: Request, remoteAddress: string | null) => Promise<Response> {
  const { config, sql, keys } = deps;
  const limiters: Record<"token" | "signups" | "user", Limiter> = {
    token: createLimiter(config.rateLimit.token),
    signups: createLimiter(config.rateLimit.signups),
    user: createLimiter(config.rateLimit.user),
  };
  // Confirmation mails are counted against GOTRUE_RATE_LIMIT_EMAIL_SENT per hour, for the
  // whole project, as Auth counts every mail it sends.
  const mailLimiter = createLimiter({ perSecond: config.rateLimit.emailSentPerHour / 3600, burst: config.rateLimit.emailSentPerHour });

  const limit = (name: keyof typeof limiters, context: Context) => {
    const header = config.rateLimit.header;
    const key = header === null ? null : context.request.headers.get(header);
    if (!limiters[name].allow(key || null, context.now.getTime())) {
      throw new AuthError(429, "over_request_rate_limit", "Request rate limit reached");
    }
  };

  // ---- tokens and sessions

  async function accessToken(tx: Tx, user: UserRow, sessionId: string, now: Date): Promise<{ token: string; expiresAt: number }> {
    const issuedAt = Math.floor(now.getTime() / 1000);
    const expiresAt = issuedAt + config.jwt.expirySeconds;
    const claims: Json = {
      ...(config.jwt.issuer ? { iss: config.jwt.issuer } : {}),
      sub: user.id,
      aud: user.aud ?? config.jwt.audience,
      exp: expiresAt,
      iat: issuedAt,
      email: user.email ?? "",
      phone: user.phone ?? "",
      app_metadata: user.raw_app_meta_data ?? {},
      user_metadata: user.raw_user_meta_data ?? {},
      role: user.role ?? "",
      aal: "aal1",
      amr: await amrOf(tx, sessionId),
      session_id: sessionId,
      is_anonymous: user.is_anonymous,
    };
    return { token: await keys.sign(claims), expiresAt };
  }

  async function tokenResponse(tx: Tx, user: UserRow, sessionId: string, refreshToken: string, now: Date, extra: Json = {}): Promise<Json> {
    const { token, expiresAt } = await accessToken(tx, user, sessionId, now);
    return {
      access_token: token,
      token_type: "bearer",
      expires_in: config.jwt.expirySeconds,
      expires_at: expiresAt,
      refresh_token: refreshToken,
      user: userJson(user, await identitiesOf(tx, user.id)),
      ...extra,
    };
  }

  // A password sign-in: the account's last sign-in, a new session established by password,
  // and its first refresh token.
  async function signInSession(tx: Tx, userId: string, client: ClientInfo, now: Date, extra: Json = {}): Promise<Json> {
    await updateUser(tx, userId, { last_sign_in_at: now, updated_at: now });
    const user = (await userById(tx, userId))!;
    await audit(tx, { action: "login", actorId: user.id, actorUsername: user.email ?? "", logType: "account", traits: { provider: "email" }, now });
    const sessionId = await insertSession(tx, user.id, client, now);
    await addAmr(tx, sessionId, "password", now);
    const refreshToken = await insertRefreshToken(tx, user.id, sessionId, null, now);
    return await tokenResponse(tx, user, sessionId, refreshToken, now, extra);
  }

  // ---- the bearer of a request

  async function verifiedClaims(context: Context) {
    const match = BEARER.exec(context.request.headers.get("authorization") ?? "");
    if (!match) throw new AuthError(401, "no_authorization", "This endpoint requires a Bearer token");
    return await keys.verify(match[1]!, context.now);
  }

  // The signed-in user and session a bearer token names, as Auth's requireAuthentication
  // finds them; a ban does not end a session here.
  async function authenticated(context: Context): Promise<{ user: UserRow; sessionId: string | null }> {
    const claims = await verifiedClaims(context);
    const sub = typeof claims.sub === "string" ? claims.sub : "";
    if (sub === "") throw forbidden("bad_jwt", "invalid claim: missing sub claim");
    if (!UUID.test(sub)) throw badRequest("bad_jwt", "invalid claim: sub claim must be a UUID");
    const user = await userById(sql, sub);
    if (!user) throw forbidden("user_not_found", "User from sub claim in JWT does not exist");
    const sessionId = typeof claims.session_id === "string" ? claims.session_id : "";
    if (sessionId !== "" && sessionId !== NIL_UUID) {
      if (!UUID.test(sessionId)) throw forbidden("bad_jwt", "invalid claim: session_id claim must be a UUID");
      if (!await sessionById(sql, sessionId)) throw forbidden("session_not_found", "Session from session_id claim in JWT does not exist");
      return { user, sessionId };
    }
    return { user, sessionId: null };
  }

  async function requireAdmin(context: Context): Promise<void> {
    const claims = await verifiedClaims(context);
    if (typeof claims.role !== "string" || !config.jwt.adminRoles.includes(claims.role)) {
      throw forbidden("not_admin", "User not allowed");
    }
  }

  // ---- routes

  const health: Handler = () =>
    Promise.resolve(json({ version: DOUBLE_VERSION, name: "GoTrue", description: "Local double of Supabase Auth's HTTP API" }));

  const settings: Handler = () =>
    Promise.resolve(json({
      external: {
        anonymous_users: false, apple: false, azure: false, bitbucket: false, discord: false, facebook: false, figma: false,
        fly: false, github: false, gitlab: false, google: false, keycloak: false, kakao: false, linkedin: false,
        linkedin_oidc: false, notion: false, spotify: false, slack: false, slack_oidc: false, workos: false, twitch: false,
        twitter: false, email: config.emailEnabled, phone: false, zoom: false,
      },
      disable_signup: config.disableSignup,
      mailer_autoconfirm: config.autoconfirm,
      phone_autoconfirm: false,
      sms_provider: "",
      saml_enabled: false,
    }));

  const jwks: Handler = () => Promise.resolve(json({ keys: keys.published }, 200, { "cache-control": "public, max-age=600" }));

  const signup: Handler = async (context) => {
    const body = await readBody(context.request);
    const email = stringField(body, "email");
    const phone = stringField(body, "phone");
    const password = stringField(body, "password");
    // Neither address: Auth's anonymous sign-in, which the project keeps off.
    if (email === "" && phone === "") throw unprocessable("anonymous_provider_disabled", "Anonymous sign-ins are disabled");
    limit("signups", context);
    if (config.disableSignup) throw unprocessable("signup_disabled", "Signups not allowed for this instance");
    if (password === "") throw badRequest("validation_failed", "Signup requires a valid password");
    checkPasswordStrength(password, config.password);
    if (email !== "" && phone !== "") {
      throw badRequest("validation_failed", "Only an email address or phone number should be provided on signup.");
    }
    if (phone !== "") throw badRequest("phone_provider_disabled", "Phone signups are disabled");
    if (!config.emailEnabled) throw badRequest("email_provider_disabled", "Email signups are disabled");
    const address = validateEmail(email);
    const data = objectField(body, "data") ?? {};
    const { now, client } = context;

    return await sql.begin(async (tx) => {
      const existing = await userByEmail(tx, address, config.jwt.audience);
      if (existing && existing.email_confirmed_at !== null) {
        await audit(tx, { action: "user_repeated_signup", actorId: existing.id, actorUsername: address, logType: "user", traits: { provider: "email" }, now });
        if (config.autoconfirm) throw unprocessable("user_already_exists", "User already registered");
        // Without confirmations an existing address gets an answer like a new one's, so
        // sign-up tells no one which addresses have accounts.
        const at = now.toISOString();
        return json({
          id: crypto.randomUUID(), aud: config.jwt.audience, role: "", email: address, phone: "",
          confirmation_sent_at: at, app_metadata: { provider: "email", providers: ["email"] }, user_metadata: data,
          identities: [], created_at: at, updated_at: at, is_anonymous: false,
        });
      }
      let userId: string;
      if (existing) {
        userId = existing.id;
      } else {
        userId = crypto.randomUUID();
        const identityData = { ...data, email: address, email_verified: false, phone_verified: false, sub: userId };
        await insertUser(tx, {
          id: userId, aud: config.jwt.audience, role: config.jwt.defaultRole, email: address,
          passwordHash: await hashPassword(password), appMetadata: { provider: "email", providers: ["email"] },
          userMetadata: identityData, confirmedAt: null, confirmationSentAt: null, bannedUntil: null, now,
        });
        await insertEmailIdentity(tx, userId, identityData, now);
      }
      if (config.autoconfirm) {
        await audit(tx, { action: "user_signedup", actorId: userId, actorUsername: address, logType: "team", traits: { provider: "email" }, now });
        const user = (await userById(tx, userId))!;
        await updateUser(tx, userId, {
          email_confirmed_at: now,
          raw_user_meta_data: mergeMetadata(user.raw_user_meta_data, { email_verified: true }),
        });
        return json(await signInSession(tx, userId, client, now));
      }
      // The confirmation mail Auth would send: counted against the mail limit, recorded as
      // sent. The double sends no mail, so the address can be confirmed by an admin only.
      if (!mailLimiter.allow("project", now.getTime())) throw new AuthError(429, "over_email_send_rate_limit", "Email rate limit exceeded");
      await audit(tx, { action: "user_confirmation_requested", actorId: userId, actorUsername: address, logType: "user", traits: { provider: "email" }, now });
      await updateUser(tx, userId, { confirmation_sent_at: now, confirmation_token: crypto.randomUUID().replaceAll("-", "") });
      return json(userJson((await userById(tx, userId))!, await identitiesOf(tx, userId)));
    });
  };

  const passwordGrant = async (context: Context): Promise<Response> => {
    const body = await readBody(context.request);
    const email = stringField(body, "email");
    const phone = stringField(body, "phone");
    const password = stringField(body, "password");
    if (email !== "" && phone !== "") {
      throw badRequest("validation_failed", "Only an email address or phone number should be provided on login.");
    }
    if (email !== "" && !config.emailEnabled) throw unprocessable("email_provider_disabled", "Email logins are disabled");
    if (phone !== "") throw unprocessable("phone_provider_disabled", "Phone logins are disabled");
    if (email === "") throw badRequest("validation_failed", "missing email or phone");
    const invalid = () => badRequest("invalid_credentials", "Invalid login credentials");
    const { now, client } = context;
    const user = await userByEmail(sql, email, config.jwt.audience);
    if (!user || !user.encrypted_password) throw invalid();
    if (isBanned(user, now)) throw badRequest("user_banned", "User is banned");
    if (!await passwordMatches(password, user.encrypted_password)) throw invalid();
    if (user.email_confirmed_at === null) throw badRequest("email_not_confirmed", "Email not confirmed");
    // A password the rules have since tightened against still signs in, and is named.
    let weak: Json = {};
    try {
      checkPasswordStrength(password, config.password);
    } catch (error) {
      if (!(error instanceof AuthError)) throw error;
      const reasons = (error.extra.weak_password as { reasons?: string[] } | undefined)?.reasons;
      if (reasons) weak = { weak_password: { message: error.message, reasons } };
    }
    return json(await sql.begin((tx) => signInSession(tx, user.id, client, now, weak)));
  };

  // Refresh with Auth's legacy tokens and its rotation: each use revokes the token and
  // hands out its child. A revoked token is honoured when it is the parent of the
  // session's token in use (the client lost the answer: that token is handed back), or
  // within the reuse interval of its revocation (concurrent refreshes: another child);
  // otherwise its reuse revokes every token of the session.
  const refreshGrant = async (context: Context): Promise<Response> => {
    const body = await readBody(context.request);
    const presented = stringField(body, "refresh_token");
    if (presented.length < 12 || (presented.length === 12 && !LEGACY_REFRESH_TOKEN.test(presented)) || presented.length > 12) {
      throw badRequest("validation_failed", "Refresh token is not valid");
    }
    const { now, client } = context;
    // A refusal whose changes must be kept (a stray token deleted, a family revoked) ends
    // the transaction with a commit, then answers.
    const outcome: { refused?: AuthError } = {};
    const answer = await sql.begin(async (tx) => {
      const token = await refreshTokenForUpdate(tx, presented);
      if (!token) throw badRequest("refresh_token_not_found", "Invalid Refresh Token: Refresh Token Not Found");
      const user = token.user_id && /^[0-9a-f-]{36}$/i.test(token.user_id) ? await userById(tx, token.user_id) : null;
      if (!user) throw badRequest("refresh_token_not_found", "Invalid Refresh Token: Refresh Token Not Found");
      if (isBanned(user, now)) throw badRequest("user_banned", "Invalid Refresh Token: User Banned");
      const session = token.session_id ? await sessionById(tx, token.session_id, true) : null;
      if (!session) {
        await deleteRefreshToken(tx, token.id);
        outcome.refused = badRequest("session_not_found", "Invalid Refresh Token: No Valid Session Found");
        return null;
      }
      if (session.not_after !== null && new Date(rfc3339(session.not_after)).getTime() <= now.getTime()) {
        throw badRequest("session_expired", "Invalid Refresh Token: Session Expired");
      }
      let next: string;
      if (token.revoked) {
        const active = await activeRefreshToken(tx, session.id);
        const revokedAt = token.updated_at === null ? 0 : new Date(rfc3339(token.updated_at)).getTime();
        if (active && active.parent === token.token) {
          next = active.token;
        } else if (now.getTime() <= revokedAt + config.refreshTokenReuseIntervalSeconds * 1000) {
          next = await insertRefreshToken(tx, user.id, session.id, token.token, now);
        } else {
          if (config.refreshTokenRotation) await revokeSessionRefreshTokens(tx, session.id, now);
          outcome.refused = badRequest("refresh_token_already_used", "Invalid Refresh Token: Already Used");
          return null;
        }
      } else {
        await audit(tx, { action: "token_refreshed", actorId: user.id, actorUsername: user.email ?? "", logType: "token", now });
        await revokeRefreshToken(tx, token.id, now);
        await audit(tx, { action: "token_revoked", actorId: user.id, actorUsername: user.email ?? "", logType: "token", now });
        next = await insertRefreshToken(tx, user.id, session.id, token.token, now);
        await updateUser(tx, user.id, { updated_at: now });
      }
      await touchSession(tx, session.id, client, now);
      return await tokenResponse(tx, (await userById(tx, user.id))!, session.id, next, now);
    });
    if (outcome.refused || answer === null) throw outcome.refused;
    return json(answer);
  };

  const token: Handler = async (context) => {
    const grant = context.url.searchParams.get("grant_type") ?? "";
    const grants: Record<string, (context: Context) => Promise<Response>> = { password: passwordGrant, refresh_token: refreshGrant };
    const known = ["password", "refresh_token", "id_token", "pkce", "web3"];
    if (!known.includes(grant)) throw badRequest("invalid_credentials", "unsupported_grant_type");
    limit("token", context);
    const handle = grants[grant];
    if (!handle) throw notImplemented(context);
    return await handle(context);
  };

  const logout: Handler = async (context) => {
    const { user, sessionId } = await authenticated(context);
    const scope = context.url.searchParams.get("scope") ?? "";
    if (!["", "global", "local", "others"].includes(scope)) {
      throw badRequest("validation_failed", `Unsupported logout scope ${JSON.stringify(scope)}`);
    }
    await sql.begin(async (tx) => {
      await audit(tx, { action: "logout", actorId: user.id, actorUsername: user.email ?? "", logType: "account", now: context.now });
      if (sessionId === null || scope === "" || scope === "global") await deleteSessions(tx, user.id);
      else if (scope === "local") await deleteSessions(tx, user.id, { only: sessionId });
      else await deleteSessions(tx, user.id, { except: sessionId });
    });
    return new Response(null, { status: 204 });
  };

  const getUser: Handler = async (context) => {
    const { user } = await authenticated(context);
    return json(userJson(user, await identitiesOf(sql, user.id)));
  };

  const putUser: Handler = async (context) => {
    const { user, sessionId } = await authenticated(context);
    limit("user", context);
    const body = await readBody(context.request);
    const email = body.email === undefined ? null : stringField(body, "email");
    if (email !== null && email !== "") validateEmail(email);
    if (stringField(body, "phone") !== "") throw notImplemented(context);
    const hasPassword = body.password !== undefined && body.password !== null;
    const password = stringField(body, "password");
    if (hasPassword) checkPasswordStrength(password, config.password);
    const data = objectField(body, "data");
    if (objectField(body, "app_metadata") !== null) throw forbidden("not_admin", "Updating app_metadata requires admin privileges");
    const newEmail = email !== null && email !== "" && email.toLowerCase() !== (user.email ?? "") ? email.toLowerCase() : null;
    const { now } = context;
    return await sql.begin(async (tx) => {
      if (newEmail !== null && await emailTaken(tx, newEmail, user.aud ?? config.jwt.audience, user.id)) {
        throw unprocessable("email_exists", "A user with this email address has already been registered");
      }
      if (hasPassword) {
        if (await passwordMatches(password, user.encrypted_password)) {
          throw unprocessable("same_password", "New password should be different from the old password.");
        }
        await updateUser(tx, user.id, { encrypted_password: await hashPassword(password), updated_at: now });
        // The other sessions end; the one that changed the password goes on.
        if (sessionId === null) await deleteSessions(tx, user.id);
        else await deleteSessions(tx, user.id, { except: sessionId });
        await audit(tx, { action: "user_updated_password", actorId: user.id, actorUsername: user.email ?? "", logType: "user", now });
      }
      if (data !== null) {
        await updateUser(tx, user.id, { raw_user_meta_data: mergeMetadata(user.raw_user_meta_data, data), updated_at: now });
      }
      if (newEmail !== null) {
        // The change waits for the confirmation Auth would mail to the new address.
        await updateUser(tx, user.id, {
          email_change: newEmail, email_change_sent_at: now, updated_at: now,
          email_change_token_new: crypto.randomUUID().replaceAll("-", ""), email_change_confirm_status: 0,
        });
      }
      await audit(tx, { action: "user_modified", actorId: user.id, actorUsername: user.email ?? "", logType: "user", now });
      return json(userJson((await userById(tx, user.id))!, await identitiesOf(tx, user.id)));
    });
  };

  // ---- the admin API (service_role)

  function banUntil(value: unknown, now: Date): Date | null | undefined {
    if (value === undefined || value === null || value === "") return undefined;
    if (typeof value !== "string") throw badRequest("bad_json", "Could not parse request body as JSON: ban_duration must be a string");
    if (value === "none") return null;
    return new Date(now.getTime() + parseGoDuration(value));
  }

  const adminCreateUser: Handler = async (context) => {
    await requireAdmin(context);
    const body = await readBody(context.request);
    const email = stringField(body, "email");
    const phone = stringField(body, "phone");
    if (email === "" && phone === "") throw badRequest("validation_failed", "Cannot create a user without either an email or phone");
    if (phone !== "") throw notImplemented(context);
    const address = validateEmail(email);
    const password = stringField(body, "password");
    if (password !== "" && stringField(body, "password_hash") !== "") {
      throw badRequest("validation_failed", "Only a password or a password hash should be provided");
    }
    if (password !== "") checkPasswordStrength(password, config.password);
    const passwordHash = stringField(body, "password_hash");
    if (passwordHash !== "" && !/^\$2[aby]\$\d\d\$/.test(passwordHash)) {
      throw badRequest("validation_failed", "Invalid password hash format");
    }
    const requestedId = stringField(body, "id");
    if (requestedId !== "" && !UUID.test(requestedId)) throw badRequest("validation_failed", "ID must conform to the uuid v4 format");
    if (requestedId === NIL_UUID) throw badRequest("validation_failed", "ID cannot be a nil uuid");
    const { now } = context;
    const bannedUntil = banUntil(body.ban_duration, now) ?? null;
    const confirm = body.email_confirm === true;
    const aud = stringField(body, "aud") || config.jwt.audience;
    const userMetadata = objectField(body, "user_metadata") ?? {};
    const appMetadata = { provider: "email", providers: ["email"], ...(objectField(body, "app_metadata") ?? {}) };
    const hash = passwordHash || await hashPassword(password || crypto.randomUUID() + crypto.randomUUID());
    return await sql.begin(async (tx) => {
      if (await emailTaken(tx, address, aud, null)) {
        throw unprocessable("email_exists", "A user with this email address has already been registered");
      }
      const id = requestedId ? requestedId.toLowerCase() : crypto.randomUUID();
      await insertUser(tx, {
        id, aud, role: stringField(body, "role") || config.jwt.defaultRole, email: address, passwordHash: hash,
        appMetadata, userMetadata: confirm ? { ...userMetadata, email_verified: true } : userMetadata,
        confirmedAt: confirm ? now : null, confirmationSentAt: null, bannedUntil, now,
      }).catch((error) => {
        if (error?.code === "23505") throw unprocessable("email_exists", "A user with this email address has already been registered");
        throw error;
      });
      await insertEmailIdentity(tx, id, { email: address, email_verified: false, phone_verified: false, sub: id }, now);
      await audit(tx, { action: "user_signedup", actorId: NIL_UUID, actorUsername: "service_role", logType: "team", traits: { provider: "email", user_id: id, user_email: address }, now });
      return json(userJson((await userById(tx, id))!, await identitiesOf(tx, id)));
    });
  };

  const adminListUsers: Handler = async (context) => {
    await requireAdmin(context);
    const params = context.url.searchParams;
    const pageParam = params.get("page") ?? "";
    const perPageParam = params.get("per_page") ?? "";
    const parse = (value: string, fallback: number) => {
      if (value === "") return fallback;
      if (!/^\d+$/.test(value)) throw badRequest("validation_failed", `Bad Pagination Parameters: strconv.ParseUint: parsing "${value}": invalid syntax`);
      return Number(value);
    };
    const page = Math.max(1, parse(pageParam, 1));
    const perPage = parse(perPageParam, 50);
    if (perPage === 0) throw badRequest("validation_failed", "Bad Pagination Parameters: per_page must be at least 1");
    const filter = params.get("filter") ?? "";
    const like = `%${filter}%`;
    const sort = params.get("sort") ?? "";
    const [field, direction] = sort.split(/\s+/);
    const orderColumn = ["created_at", "email", "last_sign_in_at", "updated_at"].includes(field ?? "") ? field! : "created_at";
    const descending = (direction ?? "desc").toLowerCase() !== "asc";
    const aud = config.jwt.audience;
    const [counted] = await sql<{ total: number }[]>`
      select count(*)::int as total from auth.users
      where instance_id = ${INSTANCE_ID} and aud = ${aud}
        and (${filter} = '' or email like ${like} or raw_user_meta_data ->> 'full_name' ilike ${like})`;
    const users = await sql<UserRow[]>`
      select * from auth.users
      where instance_id = ${INSTANCE_ID} and aud = ${aud}
        and (${filter} = '' or email like ${like} or raw_user_meta_data ->> 'full_name' ilike ${like})
      order by ${sql(orderColumn)} ${descending ? sql`desc` : sql`asc`}, id
      limit ${perPage} offset ${(page - 1) * perPage}`;
    const total = counted!.total;
    const last = Math.ceil(total / perPage);
    const link = (n: number) => {
      const query = new URLSearchParams(params);
      query.set("page", String(n));
      query.sort();
      return `<${context.url.pathname}?${query}>`;
    };
    const links = [...(page < last ? [`${link(page + 1)}; rel="next"`] : []), `${link(last)}; rel="last"`];
    return json({ users: users.map((user) => userJson(user, null)), aud }, 200, {
      "x-total-count": String(total),
      link: links.join(", "),
    });
  };

  async function adminUser(context: Context, id: string): Promise<UserRow> {
    await requireAdmin(context);
    if (!UUID.test(id)) throw notFound("validation_failed", "user_id must be an UUID");
    const user = await userById(sql, id);
    if (!user) throw notFound("user_not_found", "User not found");
    return user;
  }

  const adminGetUser = (id: string): Handler => async (context) => {
    const user = await adminUser(context, id);
    return json(userJson(user, await identitiesOf(sql, user.id)));
  };

  const adminUpdateUser = (id: string): Handler => async (context) => {
    const user = await adminUser(context, id);
    const body = await readBody(context.request);
    const { now } = context;
    if (stringField(body, "phone") !== "") throw notImplemented(context);
    const email = stringField(body, "email");
    const address = email === "" ? null : validateEmail(email);
    const hasPassword = typeof body.password === "string" && body.password !== "";
    const password = stringField(body, "password");
    if (hasPassword) checkPasswordStrength(password, config.password);
    const bannedUntil = banUntil(body.ban_duration, now);
    const userMetadata = objectField(body, "user_metadata");
    const appMetadata = objectField(body, "app_metadata");
    return await sql.begin(async (tx) => {
      const changes: Json = { updated_at: now };
      if (hasPassword) changes.encrypted_password = await hashPassword(password);
      const role = stringField(body, "role");
      if (role !== "") changes.role = role;
      let metadata = user.raw_user_meta_data;
      if (userMetadata !== null) metadata = mergeMetadata(metadata, userMetadata);
      if (body.email_confirm === true && user.email_confirmed_at === null) {
        changes.email_confirmed_at = now;
        metadata = mergeMetadata(metadata, { email_verified: true });
      }
      if (metadata !== user.raw_user_meta_data) changes.raw_user_meta_data = metadata;
      if (appMetadata !== null) changes.raw_app_meta_data = mergeMetadata(user.raw_app_meta_data, appMetadata);
      if (bannedUntil !== undefined) changes.banned_until = bannedUntil;
      if (address !== null && address !== user.email) {
        if (await emailTaken(tx, address, user.aud ?? config.jwt.audience, user.id)) {
          throw unprocessable("email_exists", "A user with this email address has already been registered");
        }
        changes.email = address;
        changes.email_change = "";
        await tx`
          update auth.identities
          set identity_data = identity_data || ${tx.json({ email: address })}, updated_at = ${now}
          where user_id = ${user.id} and provider = 'email'`;
      }
      await updateUser(tx, user.id, changes);
      // An administrator's new password ends every session of the user.
      if (hasPassword) await deleteSessions(tx, user.id);
      await audit(tx, { action: "user_modified", actorId: NIL_UUID, actorUsername: "service_role", logType: "user", traits: { user_id: user.id, user_email: user.email ?? "" }, now });
      return json(userJson((await userById(tx, user.id))!, await identitiesOf(tx, user.id)));
    });
  };

  const adminDeleteUser = (id: string): Handler => async (context) => {
    const user = await adminUser(context, id);
    const body = await readBody(context.request, true);
    const soft = body.should_soft_delete === true;
    const { now } = context;
    await sql.begin(async (tx) => {
      await audit(tx, { action: "user_deleted", actorId: NIL_UUID, actorUsername: "service_role", logType: "team", traits: { user_id: user.id, user_email: user.email ?? "" }, now });
      if (!soft) {
        await tx`delete from auth.users where id = ${user.id}`;
        return;
      }
      if (user.deleted_at !== null) return;
      // A soft delete keeps the row, its addresses made unusable and its sessions ended.
      const obfuscated = (value: string) => `${Array.from(new Uint8Array(8), () => "x").join("")}-${value}`.slice(0, 255);
      await deleteSessions(tx, user.id);
      await tx`
        update auth.identities set provider_id = ${obfuscated(user.id)} || '-' || id::text,
          identity_data = '{}'::jsonb, updated_at = ${now}
        where user_id = ${user.id}`;
      await updateUser(tx, user.id, {
        email: user.email ? obfuscated(user.email) : null, phone: null, encrypted_password: "",
        raw_user_meta_data: {}, raw_app_meta_data: {}, deleted_at: now, updated_at: now,
      });
    });
    return json({});
  };

  function notImplemented(context: Context): AuthError {
    return new AuthError(501, "not_implemented", `The local Auth double does not implement ${context.request.method} ${context.url.pathname}`);
  }

  // Routes of Auth's that the double does not serve: a clear 501, never a silent 404.
  const UNIMPLEMENTED = [
    "/recover", "/resend", "/magiclink", "/otp", "/verify", "/reauthenticate", "/invite", "/factors", "/sso", "/saml",
    "/authorize", "/callback", "/user/identities", "/admin/generate_link", "/admin/audit", "/admin/sso", "/admin/oauth",
    "/.well-known/openid-configuration", "/oauth", "/token/pkce",
  ];

  // The method handlers of a path, or null when Auth has no such path.
  function route(path: string): Partial<Record<string, Handler>> | null {
    switch (path) {
      case "/health": return { GET: health };
      case "/settings": return { GET: settings };
      case "/.well-known/jwks.json": return { GET: jwks };
      case "/signup": return { POST: signup };
      case "/token": return { POST: token };
      case "/logout": return { POST: logout };
      case "/user": return { GET: getUser, PUT: putUser };
      case "/admin/users": return { GET: adminListUsers, POST: adminCreateUser };
    }
    const adminUserPath = /^\/admin\/users\/([^/]+)$/.exec(path);
    if (adminUserPath) {
      const id = decodeURIComponent(adminUserPath[1]!);
      return { GET: adminGetUser(id), PUT: adminUpdateUser(id), DELETE: adminDeleteUser(id) };
    }
    if (UNIMPLEMENTED.some((prefix) => path === prefix || path.startsWith(`${prefix}/`))) {
      const unimplemented: Handler = (context) => Promise.reject(notImplemented(context));
      return { GET: unimplemented, POST: unimplemented, PUT: unimplemented, DELETE: unimplemented };
    }
    return null;
  }

  // Auth's CORS: any origin; the methods it serves; its own request headers plus
  // GOTRUE_CORS_ALLOWED_HEADERS; the list headers and the API version exposed.
  const allowedHeaders = new Set(
    ["accept", "authorization", "content-type", "x-client-ip", "x-client-info", "x-jwt-aud", "x-use-cookie", "x-supabase-api-version"]
      .concat(config.corsAllowedHeaders.map((header) => header.toLowerCase())),
  );
  const ALLOWED_METHODS = new Set(["GET", "POST", "PUT", "DELETE"]);

  function preflight(request: Request): Response {
    const headers = new Headers({ vary: "Origin, Access-Control-Request-Method, Access-Control-Request-Headers" });
    const origin = request.headers.get("origin");
    const method = (request.headers.get("access-control-request-method") ?? "").toUpperCase();
    const requested = (request.headers.get("access-control-request-headers") ?? "").split(",").map((header) => header.trim().toLowerCase()).filter(Boolean);
    if (origin && ALLOWED_METHODS.has(method) && requested.every((header) => allowedHeaders.has(header))) {
      headers.set("access-control-allow-origin", "*");
      headers.set("access-control-allow-methods", method);
      if (requested.length > 0) headers.set("access-control-allow-headers", requested.join(", "));
      headers.set("access-control-allow-credentials", "true");
    }
    return new Response(null, { status: 204, headers });
  }

  function withCors(request: Request, response: Response): Response {
    if (!request.headers.get("origin")) return response;
    const headers = new Headers(response.headers);
    headers.set("access-control-allow-origin", "*");
    headers.set("access-control-allow-credentials", "true");
    headers.set("access-control-expose-headers", "X-Total-Count, Link, X-Supabase-Api-Version");
    headers.append("vary", "Origin");
    return new Response(response.body, { status: response.status, headers });
  }

  return async (request, remoteAddress) => {
    const started = performance.now();
    const url = new URL(request.url);
    const path = url.pathname.length > 1 ? url.pathname.replace(/\/$/, "") : url.pathname;
    let response: Response;
    if (request.method === "OPTIONS" && request.headers.get("origin")) {
      response = preflight(request);
    } else {
      const handlers = route(path);
      const handler = handlers?.[request.method];
      if (!handlers) {
        response = new Response("404 page not found\n", { status: 404, headers: { "content-type": "text/plain; charset=utf-8" } });
      } else if (!handler) {
        response = new Response(null, { status: 405, headers: { allow: Object.keys(handlers).join(", ") } });
      } else {
        const context: Context = { request, url, client: clientInfo(request, remoteAddress), now: deps.now() };
        try {
          response = await handler(context);
        } catch (error) {
          if (error instanceof AuthError) {
            response = errorResponse(request, error);
          } else {
            deps.log({ level: "error", msg: "unexpected failure", error: error instanceof Error ? error.message : String(error), path });
            response = errorResponse(request, new AuthError(500, "unexpected_failure", "Unexpected failure, please check server logs for more information"));
          }
        }
      }
      response = withCors(request, response);
    }
    // The path only: a query may carry what no log should keep.
    deps.log({
      component: "api", level: "info", msg: "request completed", method: request.method, path: url.pathname,
      status: response.status, remote_addr: remoteAddress ?? "", duration: Math.round((performance.now() - started) * 1e6),
      request_id: crypto.randomUUID(),
    });
    return response;
  };
}
