import type { PoolMode } from "./pool.ts";

// Where a function's pool connects, and what sits in between (docs/database-connection.md).
//
// The URL: DATABASE_URL when set, else SUPABASE_DB_URL. A hosted project gives its
// functions SUPABASE_DB_URL, the direct connection (db.<ref>.supabase.co:5432), and
// reserves the SUPABASE_ prefix, so it cannot be pointed elsewhere; DATABASE_URL is the
// project's own secret for the transaction pooler (Supavisor, port 6543).
//
// The mode: DATABASE_POOL_MODE, `transaction` or `session`. Unset, a URL on port 6543
// (Supavisor's transaction mode, on every hosted project) is `transaction`, and any other
// is `session`: a direct connection or a session-mode pooler, where a client keeps one
// server connection for as long as it is connected. A transaction pooler on another
// port (the local stack's PgBouncer) must be named. What the mode changes is in pool.ts.
export type DatabaseConnection = { url: string; mode: PoolMode };

export const TRANSACTION_POOLER_PORT = "6543";

const modes: readonly PoolMode[] = ["transaction", "session"];

export function databaseConnection(env: (name: string) => string | undefined): DatabaseConnection {
  const url = env("DATABASE_URL") || env("SUPABASE_DB_URL");
  if (!url) throw new Error("SUPABASE_DB_URL (or DATABASE_URL) must name the database");
  const named = env("DATABASE_POOL_MODE");
  if (named) {
    if (!modes.includes(named as PoolMode)) {
      throw new Error(`DATABASE_POOL_MODE must be transaction or session, not ${JSON.stringify(named)}`);
    }
    return { url, mode: named as PoolMode };
  }
  return { url, mode: portOf(url) === TRANSACTION_POOLER_PORT ? "transaction" : "session" };
}

// postgres.js also takes URLs WHATWG's parser refuses (several hosts); those name no one port.
function portOf(url: string): string | null {
  try {
    return new URL(url).port;
  } catch {
    return null;
  }
}
