// The logs the local stack writes: every file in .stack/logs, one per process (Auth, each
// function, the gateway, the capture servers, the scheduler) and the Postgres cluster's.
// As root in a checkout the postgres user cannot enter, the cluster's log lives under
// /var/lib/pms-stack/<checkout hash>/ and .stack/logs/postgres.log is a link to it: it is
// read through the link.
import postgres from "postgres";
import { stack } from "./stack.ts";

export const LOGS = new URL("../../.stack/logs/", import.meta.url);

export type Logs = Record<string, string>;

export async function stackLogs(): Promise<Logs> {
  const logs: Logs = {};
  for await (const entry of Deno.readDir(LOGS)) {
    const file = new URL(entry.name, LOGS);
    const info = await Deno.stat(file).catch(() => null);
    if (info?.isFile) logs[entry.name] = await Deno.readTextFile(file);
  }
  return logs;
}

// What each log gained since `before` (a file that was started again since counts whole).
export function writtenSince(before: Logs, after: Logs): Logs {
  return Object.fromEntries(Object.entries(after).map(([name, text]) => {
    const earlier = before[name] ?? "";
    return [name, text.startsWith(earlier) ? text.slice(earlier.length) : text];
  }));
}

// Runs `work` while Postgres logs every statement of the project's own code with its
// parameters: the connections of the api function and the notifications worker (which
// connect as postgres, under these application names) are made again with log_statement
// = 'all', and again without it afterwards, however `work` ends. Only theirs: Supabase
// Auth keeps its refresh tokens as they are in auth.refresh_tokens, so its statements
// would show them (docs/security.md), and the stack does not log statements otherwise.
// The functions come through PgBouncer, whose server connections carry the name of the
// client that last used them with the client's address after it; PgBouncer is told to
// make its server connections again too.
const PROJECT_CONNECTIONS = ["pms-api%", "pms-notifications-worker%"];

async function reconnectProjectConnections(sql: postgres.Sql): Promise<void> {
  // The admin console speaks only the simple protocol and has no pg_type to read.
  const pooler = postgres(stack.poolerAdminUrl, { max: 1, fetch_types: false, prepare: false, onnotice: () => {} });
  try {
    // Each server connection of the functions' pool closes when its client lets it go.
    await pooler.unsafe("reconnect postgres");
  } finally {
    await pooler.end();
  }
  // An idle pooled connection that ends is made again at its pool's next query.
  await sql`
    select pg_terminate_backend(pid) from pg_stat_activity
    where application_name like any(${PROJECT_CONNECTIONS}) and state = 'idle' and pid <> pg_backend_pid()`;
}

export async function withProjectStatementsLogged<T>(sql: postgres.Sql, work: () => Promise<T>): Promise<T> {
  await sql.unsafe("alter role postgres set log_statement = 'all'");
  try {
    await reconnectProjectConnections(sql);
    return await work();
  } finally {
    await sql.unsafe("alter role postgres reset log_statement");
    await reconnectProjectConnections(sql);
  }
}
