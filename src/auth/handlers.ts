import { json, noContent, readJson } from "../http/json.ts";
import { HttpError, unauthorized } from "../http/problem.ts";
import type { Route } from "../http/router.ts";
import { IdentityError, type IdentityProvider, IdentityUnavailable } from "./identity-provider.ts";
import { refreshBody, signInBody, signUpBody } from "./schema.ts";
import type { SessionGuard } from "./session-guard.ts";

const INVALID_CREDENTIALS = "Invalid email or password.";

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

export function authRoutes(deps: { identity: IdentityProvider; withSession: SessionGuard }): Route[] {
  const { identity, withSession } = deps;
  return [
    {
      method: "POST",
      path: "/v1/auth/sign-up",
      handler: async (request) => {
        const input = await readJson(request, signUpBody);
        const { user, session } = await identityCall(() => identity.signUp(input));
        return json(201, { user, session });
      },
    },
    {
      method: "POST",
      path: "/v1/auth/sign-in",
      handler: async (request) => {
        const input = await readJson(request, signInBody);
        return json(200, await identityCall(() => identity.signIn(input)));
      },
    },
    {
      method: "POST",
      path: "/v1/auth/refresh",
      handler: async (request) => {
        const { refreshToken } = await readJson(request, refreshBody);
        return json(200, await identityCall(() => identity.refresh(refreshToken)));
      },
    },
    {
      method: "POST",
      path: "/v1/auth/sign-out",
      handler: async (request) => {
        const accessToken = await withSession(request, (context) => Promise.resolve(context.accessToken));
        await identityCall(() => identity.signOut(accessToken));
        return noContent();
      },
    },
    {
      method: "GET",
      path: "/v1/me",
      handler: (request) =>
        withSession(request, async ({ tx }) => {
          const [user] = await tx<{ id: string; email: string; fullName: string | null; createdAt: Date }[]>`
            select id, email, full_name as "fullName", created_at as "createdAt"
            from private.current_user_profile()`;
          if (!user) throw unauthorized("The session's user no longer exists.");
          return json(200, { user: { ...user, createdAt: user.createdAt.toISOString() }, memberships: [] });
        }),
    },
  ];
}
