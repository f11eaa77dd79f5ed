// One load point with wrk (Debian's package): a fixed number of connections for a fixed
// time against the gateway, with the requests a Lua script makes. wrk is C on one
// thread, so on a two-core machine it leaves the most CPU to what is measured. Its p50
// and p99 are corrected for coordinated omission (see pauses.ts), and every point says
// what stood still while it ran.
import type postgres from "postgres";
import { longerPauses, type Pauses, watchPauses } from "./pauses.ts";

export type LoadResult = {
  connections: number;
  seconds: number;
  requests: number;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  meanMs: number;
  // Refused or broken connections, timeouts, and answers with a status of 400 or more.
  errors: number;
  // When the point began (ISO 8601), to set it beside the cluster's log.
  startedAt: string;
  pauses: Pauses;
};

export type LoadPoint = {
  // The gateway's origin, e.g. http://127.0.0.1:54321.
  origin: string;
  connections: number;
  seconds: number;
  // A Lua chunk that defines `request = function() ... end` (wrk.format), using the
  // globals below; it may also keep state of its own (one Lua state: one thread).
  requestScript: string;
  headers: Record<string, string>;
  // The database whose statements to watch while the point runs, if any.
  observe?: postgres.Sql;
};

// The `done` hook prints one line of JSON; what wrk prints itself is left unread.
const REPORT = `
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'BENCH-RESULT {"requests":%d,"durationUs":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,"p50Us":%d,"p99Us":%d,"meanUs":%.1f}\\n',
    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(99), latency.mean))
end
`;

function luaString(value: string): string {
  return JSON.stringify(value); // a JSON string of ASCII is a valid Lua string literal
}

type WrkReport = {
  requests: number;
  durationUs: number;
  connect: number;
  read: number;
  write: number;
  status: number;
  timeout: number;
  p50Us: number;
  p99Us: number;
  meanUs: number;
};

// The scripts go to the stack's git-ignored state folder, the one place the bench writes besides its results.
const SCRATCH = new URL("../.stack/bench/", import.meta.url);

export async function runLoad(point: LoadPoint): Promise<LoadResult> {
  const headerLines = Object.entries(point.headers)
    .map(([name, value]) => `wrk.headers[${luaString(name)}] = ${luaString(value)}`).join("\n");
  await Deno.mkdir(SCRATCH, { recursive: true });
  const script = await Deno.makeTempFile({ dir: SCRATCH.pathname, prefix: "wrk-", suffix: ".lua" });
  try {
    await Deno.writeTextFile(script, `${headerLines}\n${point.requestScript}\n${REPORT}`);
    const startedAt = new Date().toISOString();
    const watch = watchPauses(point.observe);
    let output: Deno.CommandOutput;
    let pauses: Pauses;
    try {
      output = await new Deno.Command("wrk", {
        args: ["-t1", `-c${point.connections}`, `-d${point.seconds}s`, "--timeout", "10s", "-s", script, point.origin],
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).output();
    } finally {
      pauses = await watch.stop();
    }
    const stdout = new TextDecoder().decode(output.stdout);
    const line = stdout.split("\n").find((text) => text.startsWith("BENCH-RESULT "));
    if (output.code !== 0 || !line) {
      throw new Error(`wrk failed (${output.code}): ${new TextDecoder().decode(output.stderr)}\n${stdout}`);
    }
    const report = JSON.parse(line.slice("BENCH-RESULT ".length)) as WrkReport;
    const seconds = report.durationUs / 1e6;
    return {
      connections: point.connections,
      seconds,
      requests: report.requests,
      requestsPerSecond: report.requests / seconds,
      p50Ms: report.p50Us / 1000,
      p99Ms: report.p99Us / 1000,
      meanMs: report.meanUs / 1000,
      errors: report.connect + report.read + report.write + report.status + report.timeout,
      startedAt,
      pauses,
    };
  } finally {
    await Deno.remove(script).catch(() => {});
  }
}

// Two runs as one: their requests over their time; the worse of their percentiles.
export function combineRuns(runs: LoadResult[]): LoadResult {
  const requests = runs.reduce((sum, run) => sum + run.requests, 0);
  const seconds = runs.reduce((sum, run) => sum + run.seconds, 0);
  return {
    connections: Math.max(...runs.map((run) => run.connections)),
    seconds,
    requests,
    requestsPerSecond: requests / seconds,
    p50Ms: Math.max(...runs.map((run) => run.p50Ms)),
    p99Ms: Math.max(...runs.map((run) => run.p99Ms)),
    meanMs: requests === 0 ? 0 : runs.reduce((sum, run) => sum + run.meanMs * run.requests, 0) / requests,
    errors: runs.reduce((sum, run) => sum + run.errors, 0),
    startedAt: runs[0]!.startedAt,
    pauses: runs.map((run) => run.pauses).reduce(longerPauses),
  };
}
