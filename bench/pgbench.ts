// One load point with pgbench (shipped with Debian's postgresql-15): a script of SQL
// run by N clients for a fixed time, with prepared statements, as the API binds its
// parameters. Its throughput is the database's ceiling for that request.
export type SqlLoadResult = {
  clients: number;
  seconds: number;
  transactions: number;
  transactionsPerSecond: number;
  meanMs: number;
  // Transactions that failed (pgbench counts and goes on only for serialization
  // failures and deadlocks; anything else aborts its client, which is an error too).
  errors: number;
};

export const PGBENCH = "/usr/lib/postgresql/15/bin/pgbench";

export type SqlLoadPoint = {
  db: { host: string; port: number; user: string; password: string; database: string };
  scriptFile: string;
  clients: number;
  seconds: number;
  // pgbench -D name=value: the script's :name parameters.
  variables: Record<string, string>;
  // pgbench -M: `prepared` (the default) as an api instance connected directly sends its
  // statements; `extended`, unnamed statements planned for their values on every call,
  // as the stack's api function sends them through the transaction pooler.
  protocol?: "prepared" | "extended";
};

function numberAfter(text: string, label: RegExp): number | null {
  const match = label.exec(text);
  return match ? Number(match[1]) : null;
}

export async function runSqlLoad(point: SqlLoadPoint): Promise<SqlLoadResult> {
  const args = [
    "-h", point.db.host, "-p", String(point.db.port), "-U", point.db.user, "-n", "-M", point.protocol ?? "prepared",
    "-c", String(point.clients), "-j", "1", "-T", String(point.seconds),
    ...Object.entries(point.variables).flatMap(([name, value]) => ["-D", `${name}=${value}`]),
    "-f", point.scriptFile, point.db.database,
  ];
  const output = await new Deno.Command(PGBENCH, {
    args,
    env: { PGPASSWORD: point.db.password },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(output.stdout) + new TextDecoder().decode(output.stderr);
  const transactions = numberAfter(text, /number of transactions actually processed: (\d+)/);
  const tps = numberAfter(text, /tps = ([\d.]+) \(without initial connection time\)/);
  const meanMs = numberAfter(text, /latency average = ([\d.]+) ms/);
  const failed = numberAfter(text, /number of failed transactions: (\d+)/) ?? 0;
  const aborted = /client \d+ aborted|Run was aborted/.test(text);
  if (transactions === null || tps === null || meanMs === null) {
    throw new Error(`pgbench failed (${output.code}):\n${text}`);
  }
  return {
    clients: point.clients,
    seconds: point.seconds,
    transactions,
    transactionsPerSecond: tps,
    meanMs,
    errors: failed + (aborted || output.code !== 0 ? 1 : 0),
  };
}
