import {
  type ClientContext,
  IdentityError,
  type IdentityFailure,
  type IdentityProvider,
  type IdentitySession,
  IdentityUnavailable,
  type IdentityUser,
} from "./identity-provider.ts";

type AuthUserBody = {
  id: string;
  email?: string;
  created_at: string;
  user_metadata?: { full_name?: unknown };
};

type AuthSessionBody = {
  access_token: string;
  refresh_token: string;
  expires_in: number;
  expires_at?: number;
  user: AuthUserBody;
};

// Auth's error body: `error_code` names the error (its apierrors/errorcode.go); the
// OAuth-style errors of /token carry `error` instead.
type AuthErrorBody = {
  error_code?: string;
  error?: string;
  msg?: string;
  error_description?: string;
  weak_password?: { reasons?: unknown };
};

function toUser(body: AuthUserBody): IdentityUser {
  const fullName = body.user_metadata?.full_name;
  return {
    id: body.id,
    email: body.email ?? "",
    fullName: typeof fullName === "string" ? fullName : null,
    createdAt: body.created_at,
  };
}

function toSession(body: AuthSessionBody, now: () => number): IdentitySession {
  return {
    accessToken: body.access_token,
    refreshToken: body.refresh_token,
    tokenType: "bearer",
    expiresIn: body.expires_in,
    expiresAt: body.expires_at ?? Math.floor(now() / 1000) + body.expires_in,
    user: toUser(body.user),
  };
}

type Operation = "sign-up" | "sign-in" | "refresh" | "sign-out";

// Supabase Auth's error codes, per call, folded into the outcomes the API tells apart.
// Only the code is read, never the message. A code not listed is "rejected"; any 429
// is "rate-limited" (over_request_rate_limit, over_email_send_rate_limit).
const failures: Record<Operation, Record<string, IdentityFailure>> = {
  "sign-up": {
    user_already_exists: "email-taken",
    email_exists: "email-taken",
    weak_password: "weak-password",
    signup_disabled: "signup-disabled",
    email_provider_disabled: "signup-disabled",
  },
  "sign-in": {
    invalid_credentials: "invalid-credentials",
    // Auth says user_banned before it checks the password: telling it apart would tell
    // anyone who tries an address that it has an account.
    user_banned: "invalid-credentials",
    // Only said once the password was right.
    email_not_confirmed: "email-not-confirmed",
  },
  "refresh": {
    refresh_token_not_found: "invalid-refresh-token",
    refresh_token_already_used: "invalid-refresh-token",
    session_not_found: "invalid-refresh-token",
    session_expired: "invalid-refresh-token",
    user_banned: "invalid-refresh-token",
    // Auth's own check of the token's format ("Refresh token is not valid").
    validation_failed: "invalid-refresh-token",
    // OAuth-style: no token at all.
    invalid_request: "invalid-refresh-token",
    invalid_grant: "invalid-refresh-token",
  },
  "sign-out": {
    bad_jwt: "invalid-session",
    no_authorization: "invalid-session",
    user_banned: "invalid-session",
  },
};

// Sign-out of a session Auth no longer has (ended by a concurrent sign-out, or its user
// deleted) has nothing left to do.
const ALREADY_SIGNED_OUT = new Set(["session_not_found", "user_not_found"]);

function classify(operation: Operation, status: number, code: string): IdentityFailure {
  if (status === 429) return "rate-limited";
  return failures[operation][code] ?? (operation === "sign-out" ? "invalid-session" : "rejected");
}

function parseJson(text: string): unknown {
  try {
    return text ? JSON.parse(text) : null;
  } catch {
    return undefined;
  }
}

export function createSupabaseAuth(deps: {
  url: string;
  apiKey: string;
  fetch: typeof fetch;
  now: () => number;
  timeoutMs?: number;
}): IdentityProvider {
  const timeoutMs = deps.timeoutMs ?? 5000;

  async function call(
    operation: Operation,
    path: string,
    init: { body?: unknown; bearer?: string; client?: ClientContext },
  ): Promise<unknown> {
    let response: Response;
    try {
      response = await deps.fetch(new URL(path, deps.url), {
        method: "POST",
        headers: {
          "apikey": deps.apiKey,
          "content-type": "application/json",
          ...(init.bearer ? { authorization: `Bearer ${init.bearer}` } : {}),
          // Auth keys its per-client rate limits (GOTRUE_RATE_LIMIT_HEADER) and records
          // a session's address by this header; the API's own address would put every
          // client in one bucket.
          ...(init.client?.address ? { "x-forwarded-for": init.client.address } : {}),
        },
        body: init.body === undefined ? undefined : JSON.stringify(init.body),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      throw new IdentityUnavailable(error instanceof Error ? error.message : String(error));
    }
    if (response.status >= 500) {
      await response.body?.cancel();
      throw new IdentityUnavailable(`Supabase Auth answered ${response.status}`);
    }
    const body = parseJson(await response.text());
    if (body === undefined) throw new IdentityUnavailable(`Supabase Auth answered ${response.status} with a body that is not JSON`);
    if (response.ok) return body;

    const error = (body ?? {}) as AuthErrorBody;
    const code = error.error_code ?? error.error ?? "";
    if (operation === "sign-out" && ALREADY_SIGNED_OUT.has(code)) return null;
    const failure = classify(operation, response.status, code);
    const reasons = error.weak_password?.reasons;
    const retryAfter = response.headers.get("retry-after");
    throw new IdentityError(failure, error.msg ?? error.error_description ?? `Supabase Auth answered ${response.status}`, {
      ...(failure === "weak-password" && Array.isArray(reasons) ? { reasons: reasons.map(String) } : {}),
      ...(failure === "rate-limited" && retryAfter ? { retryAfter } : {}),
    });
  }

  return {
    async signUp({ email, password, fullName }, client) {
      const body = await call("sign-up", "signup", {
        body: { email, password, data: fullName ? { full_name: fullName } : {} },
        client,
      }) as AuthSessionBody | AuthUserBody;
      if ("access_token" in body) return { user: toUser(body.user), session: toSession(body, deps.now) };
      return { user: toUser(body), session: null };
    },
    async signIn({ email, password }, client) {
      const body = await call("sign-in", "token?grant_type=password", { body: { email, password }, client });
      return toSession(body as AuthSessionBody, deps.now);
    },
    async refresh(refreshToken, client) {
      const body = await call("refresh", "token?grant_type=refresh_token", { body: { refresh_token: refreshToken }, client });
      return toSession(body as AuthSessionBody, deps.now);
    },
    async signOut(accessToken, client) {
      await call("sign-out", "logout?scope=local", { bearer: accessToken, client });
    },
    async isReachable() {
      try {
        const response = await deps.fetch(new URL("health", deps.url), { signal: AbortSignal.timeout(timeoutMs) });
        await response.body?.cancel();
        return response.ok;
      } catch {
        return false;
      }
    },
  };
}
