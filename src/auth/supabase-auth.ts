import {
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

type AuthErrorBody = { error_code?: string; error?: string; msg?: string; error_description?: string };

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

// Supabase Auth's error codes, folded into the few outcomes the API distinguishes.
function classify(status: number, body: AuthErrorBody): IdentityFailure {
  const code = body.error_code ?? body.error ?? "";
  if (status === 429) return "rate-limited";
  if (code === "user_already_exists" || code === "email_exists") return "email-taken";
  if (code === "weak_password") return "weak-password";
  if (code === "invalid_credentials" || code === "email_not_confirmed") return "invalid-credentials";
  if (code.startsWith("refresh_token") || code === "session_not_found") return "invalid-refresh-token";
  if (code === "invalid_grant") return "invalid-credentials";
  return "rejected";
}

export function createSupabaseAuth(deps: {
  url: string;
  apiKey: string;
  fetch: typeof fetch;
  now: () => number;
  timeoutMs?: number;
}): IdentityProvider {
  const timeoutMs = deps.timeoutMs ?? 5000;

  async function call(path: string, init: { method: string; body?: unknown; bearer?: string }): Promise<unknown> {
    let response: Response;
    try {
      response = await deps.fetch(new URL(path, deps.url), {
        method: init.method,
        headers: {
          "apikey": deps.apiKey,
          "content-type": "application/json",
          ...(init.bearer ? { authorization: `Bearer ${init.bearer}` } : {}),
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
    const text = await response.text();
    const body: unknown = text ? JSON.parse(text) : null;
    if (!response.ok) {
      const errorBody = (body ?? {}) as AuthErrorBody;
      throw new IdentityError(
        classify(response.status, errorBody),
        errorBody.msg ?? errorBody.error_description ?? `Supabase Auth answered ${response.status}`,
      );
    }
    return body;
  }

  return {
    async signUp({ email, password, fullName }) {
      const body = await call("signup", {
        method: "POST",
        body: { email, password, data: fullName ? { full_name: fullName } : {} },
      }) as AuthSessionBody | AuthUserBody;
      if ("access_token" in body) return { user: toUser(body.user), session: toSession(body, deps.now) };
      return { user: toUser(body), session: null };
    },
    async signIn({ email, password }) {
      const body = await call("token?grant_type=password", { method: "POST", body: { email, password } });
      return toSession(body as AuthSessionBody, deps.now);
    },
    async refresh(refreshToken) {
      const body = await call("token?grant_type=refresh_token", {
        method: "POST",
        body: { refresh_token: refreshToken },
      });
      return toSession(body as AuthSessionBody, deps.now);
    },
    async signOut(accessToken) {
      await call("logout?scope=local", { method: "POST", bearer: accessToken });
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
