import type { Transaction } from "kysely";
import type { DB } from "../db/database.ts";
import type { Database } from "../db/database.types.ts";
import type { Reads } from "../db/reads.ts";

// What an endpoint gets from the request scope: the signed-in caller and the transaction
// its work runs in. src/tenancy/request-scope.ts implements it over Supabase Auth's tokens
// and the tenancy tables; the HTTP building blocks depend only on this.

// The claims of a Supabase Auth access token the API relies on.
export type AccessClaims = {
  sub: string;
  session_id: string;
  role: string;
  exp: number;
  aud: string | string[];
  email?: string;
  [claim: string]: unknown;
};

export type TenantRole = Database["public"]["Enums"]["tenant_role"];

export type Credentials = { claims: AccessClaims; accessToken: string };

// `db` is the request's transaction, or for a read, its statements (see Reads).
export type Session<Db extends Reads = Transaction<DB>> = Credentials & { userId: string; db: Db };

export type RequestScope = {
  // Checks the token's signature and expiry; no database work. Asynchronous because the
  // signing keys may have to be fetched from Supabase Auth first.
  authenticate(request: Request): Promise<Credentials>;
  // One transaction: the RLS context, the session check, the membership, then `work`.
  run<T>(credentials: Credentials, tenantId: string | null, work: (session: Session, role: TenantRole | null) => Promise<T>): Promise<T>;
  // The same for a read, one round trip per statement: each of the read's statements runs
  // in a transaction of its own after the context, all sent at once, and `authorize`
  // judges the role before anything the read found is answered. So `work` gets Reads.
  read<T>(
    credentials: Credentials,
    tenantId: string | null,
    work: (session: Session<Reads>) => Promise<T>,
    authorize: (role: TenantRole | null) => void,
  ): Promise<T>;
};
