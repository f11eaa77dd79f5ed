// Calls a queue worker function back to back (the schedule without its pause) until a run
// reads nothing, adding up the runs' summaries. The drain's time ends with the last run
// that found work: the empty run that tells it is over is not the worker's work.
import assert from "node:assert/strict";

export async function drainByCalls<Summary extends { read: number }>(
  callWorker: () => Promise<Summary>,
  total: Summary,
): Promise<{ total: Summary; workerRuns: number; drainSeconds: number }> {
  const started = performance.now();
  let workerRuns = 0;
  let lastWork = started;
  for (;;) {
    const run = await callWorker();
    workerRuns++;
    if (run.read === 0) break;
    lastWork = performance.now();
    for (const key of Object.keys(total) as (keyof Summary)[]) {
      (total[key] as number) += run[key] as number;
    }
    assert.ok(workerRuns < 10_000, "the worker drains the queue");
  }
  return { total, workerRuns, drainSeconds: (lastWork - started) / 1000 };
}
