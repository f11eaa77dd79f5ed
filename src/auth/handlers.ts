import { sql } from "kysely";
import { clientAddress } from "../http/client-address.ts";
import { type Endpoint, parseInput, publicEndpoint } from "../http/endpoint.ts";
import { json, noContent } from "../http/json.ts";
import { HttpError, unauthorized } from "../http/problem.ts";
import { locationOf } from "../http/respond.ts";
import { sessionEndpoint } from "../http/session-endpoints.ts";
import { myTenants } from "../tenancy/queries.ts";
import type { RequestScope } from "../http/request-scope.ts";
import { IdentityError, type IdentityProvider, IdentityUnavailable } from "./identity-provider.ts";
import { me, refreshBody, session, signInBody, signUpBody, signUpResult } from "./schema.ts";

const tag = "Authentication";

// Supabase Auth sends no Retry-After with its 429, and the API cannot know the limits
// it runs with (a token bucket per client address that refills over minutes), so the
// API says a minute unless Auth ever says otherwise.
export const RATE_LIMIT_RETRY_AFTER_SECONDS = 60;
// Auth is down or failing: a short wait, as /v1/health's 503 says.
const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

// What the identity provider says, as the API's own problems.
async function identityCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof IdentityUnavailable) {
      throw new HttpError("service-unavailable", "Authentication is not available right now.", {
        headers: { "retry-after": String(UNAVAILABLE_RETRY_AFTER_SECONDS) },
      });
    }
    if (!(error instanceof IdentityError)) throw error;
    switch (error.failure) {
      case "email-taken":
        throw new HttpError("email-taken", "An account with this email already exists.");
      case "weak-password": {
        const reasons = error.details.reasons ?? [];
        throw new HttpError("weak-password", error.message, {
          errors: [{ path: "password", message: error.message }],
          members: { reasons },
        });
      }
      case "signup-disabled":
        throw new HttpError("signup-disabled", "New accounts cannot be registered.");
      case "invalid-credentials":
        // One body whatever was wrong: the email, the password, or the account.
        throw new HttpError("invalid-credentials", "Invalid email or password.", {
          headers: { "www-authenticate": 'Bearer realm="pms"' },
        });
      case "email-not-confirmed":
        throw new HttpError("email-not-confirmed", "Confirm the email address first: follow the link sent to it.");
      case "invalid-refresh-token":
        throw new HttpError("invalid-refresh-token", "The refresh token is invalid, was already used, or its session ended. Sign in again.", {
          headers: { "www-authenticate": 'Bearer realm="pms"' },
        });
      case "invalid-session":
        throw unauthorized("The session is not valid. Sign in again.");
      case "rate-limited":
        throw new HttpError("too-many-requests", "Too many attempts from this client. Try again later.", {
          headers: { "retry-after": error.details.retryAfter ?? String(RATE_LIMIT_RETRY_AFTER_SECONDS) },
        });
      case "rejected":
        throw new HttpError("validation", error.message);
    }
  }
}

const RATE_LIMITED = "`urn:pms:problem:too-many-requests`: Supabase Auth's limit for this client address " +
  `(the first X-Forwarded-For value) was reached. \`Retry-After\` is Auth's when it sends one, else ${RATE_LIMIT_RETRY_AFTER_SECONDS} seconds.`;
const AUTH_UNAVAILABLE = "`urn:pms:problem:service-unavailable`: Supabase Auth cannot be reached or failed; `Retry-After` says when to try again.";

export function authEndpoints(deps: { identity: IdentityProvider; scope: RequestScope }): Endpoint[] {
  const { identity, scope } = deps;
  return [
    publicEndpoint({
      method: "POST", path: "/v1/auth/sign-up", operationId: "signUp", tag,
      summary: "Register a user with Supabase Auth.", body: signUpBody, problems: ["signup-disabled", "email-taken", "weak-password", "unprocessable", "too-many-requests", "service-unavailable"],
      errorDescriptions: {
        400: "`urn:pms:problem:validation`: a field is invalid, here or at Supabase Auth (`errors` names it where known).",
        403: "`urn:pms:problem:signup-disabled`: the project takes no new accounts.",
        409: "`urn:pms:problem:email-taken`: an account with this email exists; sign in instead.",
        422: "`urn:pms:problem:weak-password`: Supabase Auth's password policy refuses the password; " +
          "`reasons` says why (`length`, `characters`, `pwned`) and `errors` names `password`.",
        429: RATE_LIMITED,
        503: AUTH_UNAVAILABLE,
      },
      success: [{
        status: 201, description: "Registered; `session` is null until the email is confirmed. Location names /v1/me, " +
          "the account as its session reads it.", schema: signUpResult, headers: ["Location"],
      }],
    }, async ({ body, request }) =>
      json(201, await identityCall(() => identity.signUp(body, { address: clientAddress(request) })), {
        location: locationOf(request, "me"),
      })),

    publicEndpoint({
      method: "POST", path: "/v1/auth/sign-in", operationId: "signIn", tag,
      summary: "Sign in with email and password; the session's accessToken is the bearer token.",
      body: signInBody, problems: ["invalid-credentials", "email-not-confirmed", "too-many-requests", "service-unavailable"],
      errorDescriptions: {
        401: "`urn:pms:problem:invalid-credentials`: the email or the password is wrong, or the account may not sign in. " +
          "The body is the same whichever it was.",
        403: "`urn:pms:problem:email-not-confirmed`: the password is right, but the email address is not confirmed yet.",
        429: RATE_LIMITED,
        503: AUTH_UNAVAILABLE,
      },
      success: [{ status: 200, description: "Signed in.", schema: session }],
    }, async ({ body, request }) => json(200, await identityCall(() => identity.signIn(body, { address: clientAddress(request) })))),

    publicEndpoint({
      method: "POST", path: "/v1/auth/refresh", operationId: "refreshSession", tag,
      summary: "Trade a refresh token for a new session (with a new refresh token: each is meant to be used once).",
      body: refreshBody, problems: ["invalid-refresh-token", "too-many-requests", "service-unavailable"],
      errorDescriptions: {
        401: "`urn:pms:problem:invalid-refresh-token`: the refresh token is unknown or malformed, its session ended " +
          "(signed out, expired), or it was used before outside Supabase Auth's reuse interval, which revokes " +
          "every refresh token of its session. Sign in again.",
        429: RATE_LIMITED,
        503: AUTH_UNAVAILABLE,
      },
      success: [{ status: 200, description: "A new session.", schema: session }],
    }, async ({ body, request }) =>
      json(200, await identityCall(() => identity.refresh(body.refreshToken, { address: clientAddress(request) })))),

    {
      method: "POST", path: "/v1/auth/sign-out", operationId: "signOut", tag, problems: ["service-unavailable"], access: "session",
      summary: "End the current session: its access token is refused from the next request on, and its refresh token too.",
      errorDescriptions: {
        401: "`urn:pms:problem:unauthorized`: the bearer token is missing, invalid or expired, or its session already ended.",
        503: "`urn:pms:problem:service-unavailable`: Supabase Auth or the database cannot be reached; the session may still be active.",
      },
      success: [{ status: 204, description: "Signed out." }],
      // Auth is called once the session check's transaction has ended, so no pooled
      // connection waits on Auth.
      handle: async (request, params) => {
        const credentials = await scope.authenticate(request);
        await parseInput({}, request, params);
        await scope.run(credentials, null, async () => {});
        await identityCall(() => identity.signOut(credentials.accessToken, { address: clientAddress(request) }));
        return noContent();
      },
    },

    sessionEndpoint(scope, {
      method: "GET", path: "/v1/me", operationId: "me", tag, problems: ["service-unavailable"],
      summary: "The signed-in user and the tenants they belong to.",
      errorDescriptions: {
        401: "`urn:pms:problem:unauthorized`: the bearer token is missing, invalid or expired, or its session ended " +
          "(signed out): refresh the session, or sign in again.",
      },
      success: [{ status: 200, description: "The user.", schema: me }],
    }, async ({ db }) => {
      const { rows: [user] } = await sql<{ id: string; email: string; fullName: string | null; createdAt: string }>`
        select id, email, full_name as "fullName", created_at as "createdAt" from private.current_user_profile()`
        .execute(db);
      if (!user) throw unauthorized("The session's user no longer exists.");
      return json(200, { user, memberships: await myTenants(db) });
    }),
  ];
}
