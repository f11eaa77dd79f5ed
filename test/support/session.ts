// Signed-in users for the API's tests, made the way a real user is: Supabase Auth's
// admin API creates the account (as an operator would with the service_role key), and
// a password sign-in at Auth gives the session whose access token the tests send.
import postgres from "postgres";
import type { AccessClaims } from "../../src/http/request-scope.ts";
import { stack } from "./stack.ts";

export type TestUser = {
  id: string;
  email: string;
  password: string;
  sessionId: string;
  token: string;
  refreshToken: string;
};

export function adminSql(): postgres.Sql {
  return postgres(stack.dbUrl, { max: 2, onnotice: () => {} });
}

// Auth through the gateway, as a client reaches it.
const authUrl = () => `${stack.apiUrl}/auth/v1`;

async function authPost(path: string, apiKey: string, body: unknown, bearer = apiKey): Promise<Response> {
  return await fetch(`${authUrl()}${path}`, {
    method: "POST",
    headers: { apikey: apiKey, authorization: `Bearer ${bearer}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

async function authCall(path: string, apiKey: string, body: unknown, bearer = apiKey): Promise<Record<string, unknown>> {
  const response = await authPost(path, apiKey, body, bearer);
  const text = await response.text();
  if (!response.ok) throw new Error(`Supabase Auth answered ${response.status} to POST ${path}: ${text}`);
  return text ? JSON.parse(text) : {};
}

export type NewAuthUser = { id?: string; email: string; password: string; fullName?: string };

// A confirmed user, as Auth's admin API takes one with the service_role key.
function adminUserBody(user: NewAuthUser) {
  return {
    ...(user.id ? { id: user.id } : {}),
    email: user.email,
    password: user.password,
    email_confirm: true,
    user_metadata: user.fullName ? { full_name: user.fullName } : {},
  };
}

export async function adminCreateUser(user: NewAuthUser): Promise<{ id: string }> {
  const created = await authCall("/admin/users", stack.serviceRoleKey, adminUserBody(user));
  return { id: String(created.id) };
}

// The same for a user kept between runs: one that exists already is left as it is.
export async function ensureAuthUser(user: NewAuthUser): Promise<void> {
  const response = await authPost("/admin/users", stack.serviceRoleKey, adminUserBody(user));
  const body = await response.json() as { error_code?: string };
  if (!response.ok && body.error_code !== "email_exists") {
    throw new Error(`Supabase Auth answered ${response.status} for ${user.email}: ${JSON.stringify(body)}`);
  }
}

// The claims of a token Auth issued, read (not verified: the API under test does that).
export function tokenClaims(token: string): AccessClaims {
  const payload = token.split(".")[1];
  if (payload === undefined) throw new Error("not a JWT");
  return JSON.parse(new TextDecoder().decode(Uint8Array.from(atob(payload.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0))));
}

export async function signIn(email: string, password: string): Promise<{ token: string; refreshToken: string; sessionId: string }> {
  const session = await authCall("/token?grant_type=password", stack.anonKey, { email, password });
  const token = String(session.access_token);
  return { token, refreshToken: String(session.refresh_token), sessionId: String(tokenClaims(token).session_id) };
}

export async function createUser(label: string): Promise<TestUser> {
  const email = `${label}-${crypto.randomUUID().slice(0, 8)}@test.example`.toLowerCase();
  // Letters and digits, as supabase/config.toml's password requirements ask.
  const password = `pw-${crypto.randomUUID()}`;
  const { id } = await adminCreateUser({ email, password, fullName: label });
  return { id, email, password, ...(await signIn(email, password)) };
}

// Signs the user's session out at Auth, which ends it at once for the API too.
export async function endSession(user: TestUser): Promise<void> {
  await authCall("/logout?scope=local", stack.anonKey, {}, user.token);
}
