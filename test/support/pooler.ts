// The local PgBouncer's admin console (database `pgbouncer`): SHOW, RECONNECT and the
// like. It speaks only the simple protocol and has no pg_type to read.
import postgres from "postgres";
import { stack } from "./stack.ts";

export type PoolerRow = Record<string, string | number | null>;

export async function withPoolerConsole<T>(work: (console: postgres.Sql) => Promise<T>): Promise<T> {
  const console = postgres(stack.poolerAdminUrl, { max: 1, fetch_types: false, prepare: false, onnotice: () => {} });
  try {
    return await work(console);
  } finally {
    await console.end();
  }
}

// One command's rows.
export function poolerConsole(command: string): Promise<PoolerRow[]> {
  return withPoolerConsole(async (console) => [...await console.unsafe<PoolerRow[]>(command)]);
}
