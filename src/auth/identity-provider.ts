// The identity provider behind an adapter, so that another can take its place (see
// docs/contract.md, Authentication). The API speaks only these types;
// src/auth/supabase-auth.ts maps them to Supabase Auth.

export type IdentityUser = {
  id: string;
  email: string;
  fullName: string | null;
  createdAt: string;
};

export type IdentitySession = {
  accessToken: string;
  refreshToken: string;
  tokenType: "bearer";
  expiresIn: number;
  expiresAt: number;
  user: IdentityUser;
};

// The end client a call is made for. The API calls the provider server to server, so
// without this every client would look like the API itself to the provider's
// per-client rate limits.
export type ClientContext = { address?: string };

export type IdentityFailure =
  // Sign-up: the email already has an account.
  | "email-taken"
  // Sign-up: the provider's password policy refuses the password (`reasons` says why).
  | "weak-password"
  // Sign-up: the provider takes no new accounts.
  | "signup-disabled"
  // Sign-in: unknown email, wrong password, or an account that may not sign in; never
  // which of them.
  | "invalid-credentials"
  // Sign-in: the password is right but the email address is not confirmed yet.
  | "email-not-confirmed"
  // Refresh: the refresh token is unknown, malformed, revoked or reused, or its session ended.
  | "invalid-refresh-token"
  // Sign-out: the provider refused the access token the API had accepted.
  | "invalid-session"
  | "rate-limited"
  // Anything else the provider refused as a bad request.
  | "rejected";

export type IdentityErrorDetails = {
  // weak-password: the provider's reasons ("length", "characters", "pwned").
  reasons?: string[];
  // rate-limited: the provider's Retry-After, when it sent one.
  retryAfter?: string;
};

export class IdentityError extends Error {
  constructor(readonly failure: IdentityFailure, message: string, readonly details: IdentityErrorDetails = {}) {
    super(message);
  }
}

export class IdentityUnavailable extends Error {}

export interface IdentityProvider {
  signUp(input: { email: string; password: string; fullName?: string }, client?: ClientContext): Promise<
    { user: IdentityUser; session: IdentitySession | null }
  >;
  signIn(input: { email: string; password: string }, client?: ClientContext): Promise<IdentitySession>;
  refresh(refreshToken: string, client?: ClientContext): Promise<IdentitySession>;
  // Ends the access token's session; a session that has already ended is not an error.
  signOut(accessToken: string, client?: ClientContext): Promise<void>;
  isReachable(): Promise<boolean>;
}
