import type { Logger } from "../logging/logger.ts";
import type { Sql } from "../db/pool.ts";

// How a queue worker (notifications, webhooks) takes its pgmq queue in a run.
export type ClaimSettings = {
  // Jobs one run takes at most: the run's CPU budget. The Edge Runtime retires a worker
  // past 1 s of CPU and kills it at 2 s, over the worker's life, so a run that starts just
  // short of the soft limit has 1 s before it is killed; a run cannot read its own CPU time
  // there (the runtime implements neither process.cpuUsage nor the event loop's
  // utilization), so it counts jobs, and the benchmark measures what a run of this many
  // costs under the local runtime's limits (docs/benchmarks.md).
  batchSize: number;
  // A run claims nothing more once this long has passed since it began: the schedule
  // calls every 10 seconds, and a backlog is drained by the runs in turn, not by one. With
  // what a claim may take after it (the sends' start window and the providers' timeout),
  // well inside the runtime's wall clock, whose half retires a worker.
  runBudgetMs: number;
  // Jobs claimed together and worked on at once. A claim's provider calls run side by
  // side, so a claim takes about as long as its slowest job, and a run of several
  // claims never outlives the visibility timeout of the jobs it holds.
  claimSize: number;
  // Claims worked at the same time. While one claim waits on a provider or the database
  // the other has work for the function's thread; pgmq's SKIP LOCKED keeps them apart.
  claimsInFlight: number;
  // How long a claimed job stays invisible: longer than one claim can take.
  visibilityTimeoutSeconds: number;
  // A run that follows the queue (the schedule's runs) looks again this long after finding
  // it empty, until its budget is spent, so a job enqueued mid-run waits this long and not
  // for the next run.
  followPollMs: number;
};

// How a run takes the queue: until it is empty now (a caller's run), or until the run's
// budget is spent, taking jobs as they come (the schedule's runs, which follow each other).
export type RunMode = { follow: boolean };

export type ClaimedJob = { msgId: string; readCount: number; message: unknown };

// Claims the queue's jobs a claim at a time, `claimsInFlight` claims side by side, until
// the queue has nothing more to give, the batch is taken or the budget is spent; each
// claim's outcomes are counted into `summary` (which also counts `read`). A claim that
// throws is logged: nothing of it was recorded, and its jobs come back when their
// visibility timeout ends.
export async function drainInClaims<Outcome extends string>(
  deps: {
    sql: Sql;
    settings: ClaimSettings;
    now: () => number;
    logger: Logger;
    mode?: RunMode;
    sleep?: (ms: number) => Promise<void>;
    // Runs before each read of the queue, in turn with the reads: what puts jobs on the
    // queue from elsewhere (the notifications worker expands its domain events here).
    beforeRead?: () => Promise<void>;
  },
  queue: string,
  summary: Record<Outcome | "read", number>,
  processClaim: (jobs: ClaimedJob[]) => Promise<Outcome[]>,
): Promise<void> {
  const { settings } = deps;
  const follow = deps.mode?.follow ?? false;
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const started = deps.now();
  const withinBudget = () => deps.now() - started < settings.runBudgetMs;
  // Jobs asked for by claims not yet answered, so that the claims side by side never ask
  // for more than the batch between them.
  let asking = 0;
  let exhausted = false;
  // Claims read the queue one after another, though they work side by side: two reads at
  // once would split the visible jobs between them (pgmq.read skips rows the other has
  // locked), and two jobs for one notification in different claims in flight would both
  // find it pending. In turn, the jobs a claim can hold go to one claim.
  let reading: Promise<unknown> = Promise.resolve();
  const readInTurn = <T>(read: () => Promise<T>): Promise<T> => {
    const result = reading.then(read);
    reading = result.catch(() => {});
    return result;
  };

  const claimInTurn = async () => {
    while (summary.read + asking < settings.batchSize && withinBudget()) {
      if (exhausted) {
        // Nothing more now: a caller's run ends; a following run looks again shortly.
        if (!follow) break;
        await sleep(Math.min(settings.followPollMs, Math.max(0, settings.runBudgetMs - (deps.now() - started))));
        exhausted = false;
        continue;
      }
      const asked = Math.min(settings.claimSize, settings.batchSize - summary.read - asking);
      asking += asked;
      const claimed = await readInTurn(async () => {
        await deps.beforeRead?.();
        return await deps.sql<{ msg_id: string; read_ct: number; message: unknown }[]>`
          select msg_id::text, read_ct, message from pgmq.read(${queue}, ${settings.visibilityTimeoutSeconds}, ${asked})
        `.execute();
      }).finally(() => asking -= asked);
      summary.read += claimed.length;
      // Fewer than asked: the queue has nothing more to give now.
      if (claimed.length < asked) exhausted = true;
      if (claimed.length === 0) continue;
      const jobs = claimed.map((row) => ({ msgId: row.msg_id, readCount: row.read_ct, message: row.message }));
      try {
        for (const outcome of await processClaim(jobs)) summary[outcome]++;
      } catch (error) {
        deps.logger.error(`${queue} jobs errored; they will be tried again: ${String(error)}`, {
          msgIds: jobs.map((job) => job.msgId),
        });
      }
    }
  };

  await Promise.all(Array.from({ length: Math.max(1, settings.claimsInFlight) }, claimInTurn));
}
