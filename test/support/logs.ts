// The logs the local stack writes: every file in .stack/logs, one per process (Auth, each
// function, the gateway, the capture servers, the scheduler) and the Postgres cluster's.
// As root in a checkout the postgres user cannot enter, the cluster's log lives under
// /var/lib/pms-stack/<checkout hash>/ and .stack/logs/postgres.log is a link to it: it is
// read through the link.
import type postgres from "postgres";
import { withPoolerConsole } from "./pooler.ts";

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
const PROJECT_CONNECTIONS = ["pms-api", "pms-notifications-worker"];

// A role's settings apply at login, so the project's connections are made again after the
// setting changes. The functions reach Postgres through PgBouncer, whose server connections
// carry the name of the client that last used them with the client's address after it. Its
// RECONNECT marks each server connection to be closed once its client has released it
// (never one in use, so no request meets a connection ended under it), and its
// housekeeping closes the marked idle ones a moment later; until none is left the next
// requests could still meet one that logged in before. The new ones log in with the role's
// settings as they now are. A connection made directly (a function run without the pooler,
// named without an address) is ended while idle; its pool makes it again at its next query.
async function reconnectProjectConnections(sql: postgres.Sql): Promise<void> {
  await withPoolerConsole(async (pooler) => {
    await pooler.unsafe("reconnect postgres");
    const deadline = Date.now() + 15_000;
    for (;;) {
      const servers = await pooler.unsafe<{ database: string; close_needed: number | string }[]>("show servers");
      if (!servers.some((server) => server.database === "postgres" && Number(server.close_needed) === 1)) break;
      if (Date.now() > deadline) throw new Error("PgBouncer kept server connections it was asked to close");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  });
  await sql`
    select pg_terminate_backend(pid) from pg_stat_activity
    where application_name = any(${PROJECT_CONNECTIONS}) and state = 'idle' and pid <> pg_backend_pid()`;
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
