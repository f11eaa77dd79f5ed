import type { Logger } from "../http/router.ts";
import type { Sql } from "./pool.ts";

// How a queue worker (notifications, webhooks) takes its pgmq queue in a run.
export type ClaimSettings = {
  // Jobs one run takes at most.
  batchSize: number;
  // A run claims nothing more once this long has passed since it began: the schedule
  // calls every 10 seconds, and a backlog is drained by the runs in turn, not by one.
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
};

export type ClaimedJob = { msgId: string; readCount: number; message: unknown };

// Claims the queue's jobs a claim at a time, `claimsInFlight` claims side by side, until
// the queue has nothing more to give, the batch is taken or the budget is spent; each
// claim's outcomes are counted into `summary` (which also counts `read`). A claim that
// throws is logged: nothing of it was recorded, and its jobs come back when their
// visibility timeout ends.
export async function drainInClaims<Outcome extends string>(
  deps: { sql: Sql; settings: ClaimSettings; now: () => number; logger: Logger },
  queue: string,
  summary: Record<Outcome | "read", number>,
  processClaim: (jobs: ClaimedJob[]) => Promise<Outcome[]>,
): Promise<void> {
  const { settings } = deps;
  const started = deps.now();
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
    while (!exhausted && summary.read + asking < settings.batchSize && deps.now() - started < settings.runBudgetMs) {
      const asked = Math.min(settings.claimSize, settings.batchSize - summary.read - asking);
      asking += asked;
      const claimed = await readInTurn(() =>
        deps.sql<{ msg_id: string; read_ct: number; message: unknown }[]>`
          select msg_id::text, read_ct, message from pgmq.read(${queue}, ${settings.visibilityTimeoutSeconds}, ${asked})
        `.execute()
      ).finally(() => asking -= asked);
      summary.read += claimed.length;
      // Fewer than asked: the queue has nothing more to give now.
      if (claimed.length < asked) exhausted = true;
      if (claimed.length === 0) break;
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
