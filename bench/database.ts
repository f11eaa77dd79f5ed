// The benchmark's own access to the local database: psql for the SQL files under
// bench/sql (they take psql variables), and an admin connection as postgres.
import postgres from "postgres";

export const PSQL = "/usr/lib/postgresql/15/bin/psql";

export type DbAddress = { host: string; port: number; user: string; password: string; database: string };

export function dbAddress(url: string): DbAddress {
  const parsed = new URL(url);
  return {
    host: parsed.hostname,
    port: Number(parsed.port),
    user: decodeURIComponent(parsed.username),
    password: decodeURIComponent(parsed.password),
    database: parsed.pathname.slice(1),
  };
}

export function adminSql(url: string): postgres.Sql {
  return postgres(url, { max: 2, onnotice: () => {}, connection: { application_name: "pms-bench" } });
}

// Runs a file under bench/sql with `-v name=value` variables; throws with psql's output on failure.
export async function runSqlFile(db: DbAddress, file: URL, variables: Record<string, string | number>): Promise<void> {
  const args = [
    "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", db.host, "-p", String(db.port), "-U", db.user, "-d", db.database,
    ...Object.entries(variables).flatMap(([name, value]) => ["-v", `${name}=${value}`]),
    "-f", file.pathname,
  ];
  const output = await new Deno.Command(PSQL, {
    args,
    env: { PGPASSWORD: db.password, PGOPTIONS: "-c client_min_messages=warning" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (output.code !== 0) {
    const decoder = new TextDecoder();
    throw new Error(`psql -f ${file.pathname} failed:\n${decoder.decode(output.stderr)}${decoder.decode(output.stdout)}`);
  }
}
