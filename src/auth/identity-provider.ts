// The identity provider behind an adapter (contract: it can be swapped). The API
// speaks only these types; src/auth/supabase-auth.ts maps them to Supabase Auth.

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

export type IdentityFailure =
  | "email-taken"
  | "weak-password"
  | "invalid-credentials"
  | "invalid-refresh-token"
  | "rate-limited"
  | "rejected";

export class IdentityError extends Error {
  constructor(readonly failure: IdentityFailure, message: string) {
    super(message);
  }
}

export class IdentityUnavailable extends Error {}

export interface IdentityProvider {
  signUp(input: { email: string; password: string; fullName?: string }): Promise<
    { user: IdentityUser; session: IdentitySession | null }
  >;
  signIn(input: { email: string; password: string }): Promise<IdentitySession>;
  refresh(refreshToken: string): Promise<IdentitySession>;
  signOut(accessToken: string): Promise<void>;
  isReachable(): Promise<boolean>;
}
