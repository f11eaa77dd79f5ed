// What stood still while a load point ran, so that a tail can be laid at the door of
// what caused it. wrk corrects its percentiles for coordinated omission (before its
// `done` hook sees them, it adds for each slow answer the answers a client sending at
// the run's average rate would have waited for), so a pause of S seconds that holds
// every connection shows up as a p99 of about S, however rare it was. Two watches tell
// where such a pause was:
// - the machine: a timer in the bench's own process, which waits on wrk and does
//   nothing else meanwhile, firing late (the VM or the host not running it);
// - the database: a client statement seen running for long, sampled from
//   pg_stat_activity, with what it was waiting for when it was seen.
// A pause that neither saw was in the gateway, the function or wrk.
import type postgres from "postgres";

export type Pauses = {
  // The longest the bench's 10 ms timer fired late, in milliseconds.
  machineMs: number;
  // The longest a client statement was seen running, in milliseconds; null when the
  // point's statements were not watched (the HTTP ceiling, a warm-up).
  databaseMs: number | null;
  // Its wait event when it was seen (type:event), or null when it was running.
  databaseWait: string | null;
  // The first characters of that statement.
  databaseStatement: string | null;
};

const TICK_MS = 10;
const SAMPLE_EVERY_MS = 100;

type Sample = { ms: number; wait: string | null; statement: string };

export function watchPauses(sql?: postgres.Sql): { stop(): Promise<Pauses> } {
  let machineMs = 0;
  let last = performance.now();
  const ticks = setInterval(() => {
    const now = performance.now();
    machineMs = Math.max(machineMs, now - last - TICK_MS);
    last = now;
  }, TICK_MS);

  let stopping = false;
  let longest: Sample | undefined;
  const sampling = sql === undefined ? Promise.resolve() : (async () => {
    while (!stopping) {
      const [sample] = await sql<Sample[]>`
        select (extract(epoch from clock_timestamp() - query_start) * 1000)::float8 as ms,
               wait_event_type || ':' || wait_event as wait,
               left(regexp_replace(query, '\\s+', ' ', 'g'), 80) as statement
        from pg_stat_activity
        where backend_type = 'client backend' and state = 'active' and pid <> pg_backend_pid()
        order by query_start
        limit 1`;
      if (sample && sample.ms > (longest?.ms ?? 0)) longest = sample;
      await new Promise((resolve) => setTimeout(resolve, SAMPLE_EVERY_MS));
    }
  })();

  return {
    async stop() {
      clearInterval(ticks);
      stopping = true;
      await sampling;
      return {
        machineMs,
        databaseMs: sql === undefined ? null : longest?.ms ?? 0,
        databaseWait: longest?.wait ?? null,
        databaseStatement: longest?.statement ?? null,
      };
    },
  };
}

// The longer of two watches' pauses, each side with what was seen with it.
export function longerPauses(a: Pauses, b: Pauses): Pauses {
  const database = (b.databaseMs ?? -1) > (a.databaseMs ?? -1) ? b : a;
  return {
    machineMs: Math.max(a.machineMs, b.machineMs),
    databaseMs: database.databaseMs,
    databaseWait: database.databaseWait,
    databaseStatement: database.databaseStatement,
  };
}
