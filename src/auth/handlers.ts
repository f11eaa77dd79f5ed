import { sql } from "kysely";
import { type Endpoint, parseInput, publicEndpoint } from "../http/endpoint.ts";
import { json, noContent } from "../http/json.ts";
import { HttpError, unauthorized } from "../http/problem.ts";
import { sessionEndpoint } from "../tenancy/endpoints.ts";
import { myTenants } from "../tenancy/queries.ts";
import type { RequestScope } from "../tenancy/request-scope.ts";
import { IdentityError, type IdentityProvider, IdentityUnavailable } from "./identity-provider.ts";
import { me, refreshBody, session, signInBody, signUpBody, signUpResult } from "./schema.ts";

const INVALID_CREDENTIALS = "Invalid email or password.";
const tag = "Authentication";

// What the identity provider says, as the API's own problems.
async function identityCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof IdentityUnavailable) {
      throw new HttpError("service-unavailable", "Authentication is not available right now.", {
        headers: { "retry-after": "5" },
      });
    }
    if (!(error instanceof IdentityError)) throw error;
    switch (error.failure) {
      case "email-taken":
        throw new HttpError("conflict", "An account with this email already exists.");
      case "weak-password":
        throw new HttpError("validation", error.message, { errors: [{ path: "password", message: error.message }] });
      case "invalid-credentials":
        throw unauthorized(INVALID_CREDENTIALS);
      case "invalid-refresh-token":
        throw unauthorized("The refresh token is invalid or was already used.");
      case "rate-limited":
        throw new HttpError("too-many-requests", "Too many attempts. Try again later.");
      case "rejected":
        throw new HttpError("validation", error.message);
    }
  }
}

export function authEndpoints(deps: { identity: IdentityProvider; scope: RequestScope }): Endpoint[] {
  const { identity, scope } = deps;
  return [
    publicEndpoint({
      method: "POST", path: "/v1/auth/sign-up", operationId: "signUp", tag,
      summary: "Register a user with Supabase Auth.", body: signUpBody, errors: [409, 429, 503],
      success: [{ status: 201, description: "Registered; `session` is null until the email is confirmed.", schema: signUpResult }],
    }, async ({ body }) => json(201, await identityCall(() => identity.signUp(body)))),

    publicEndpoint({
      method: "POST", path: "/v1/auth/sign-in", operationId: "signIn", tag,
      summary: "Sign in with email and password; the session's accessToken is the bearer token.",
      body: signInBody, errors: [401, 429, 503],
      success: [{ status: 200, description: "Signed in.", schema: session }],
    }, async ({ body }) => json(200, await identityCall(() => identity.signIn(body)))),

    publicEndpoint({
      method: "POST", path: "/v1/auth/refresh", operationId: "refreshSession", tag,
      summary: "Trade a refresh token for a new session.", body: refreshBody, errors: [401, 429, 503],
      success: [{ status: 200, description: "A new session.", schema: session }],
    }, async ({ body }) => json(200, await identityCall(() => identity.refresh(body.refreshToken)))),

    {
      method: "POST", path: "/v1/auth/sign-out", operationId: "signOut", tag, errors: [503], access: "session",
      summary: "Revoke the current session; its access token stops working at once.",
      success: [{ status: 204, description: "Signed out." }],
      // Auth is called once the session check's transaction has ended, so no pooled
      // connection waits on Auth.
      handle: async (request, params) => {
        const credentials = await scope.authenticate(request);
        await parseInput({}, request, params);
        await scope.run(credentials, null, async () => {});
        await identityCall(() => identity.signOut(credentials.accessToken));
        return noContent();
      },
    },

    sessionEndpoint(scope, {
      method: "GET", path: "/v1/me", operationId: "me", tag, errors: [503],
      summary: "The signed-in user and the tenants they belong to.",
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
