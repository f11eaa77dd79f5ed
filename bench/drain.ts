// The benchmark's queue drains (the notification pipeline, outbound webhooks): a worker
// function called as the schedule calls it, back to back.
import assert from "node:assert/strict";

// One run of a worker function through the gateway, called as the schedule calls it.
export function callWorkerFunction<Summary>(origin: string, name: string, serviceRoleKey: string): Promise<Summary> {
  return callWorkerAt<Summary>(`${origin}/functions/v1/${name}`, serviceRoleKey);
}

// One run of a worker at `url`: through the gateway, or a worker the bench started itself.
export async function callWorkerAt<Summary>(url: string, serviceRoleKey: string): Promise<Summary> {
  const response = await fetch(url, { method: "POST", headers: { authorization: `Bearer ${serviceRoleKey}` } });
  const text = await response.text();
  assert.equal(response.status, 200, `the worker at ${url} answered ${response.status}: ${text}`);
  return JSON.parse(text) as Summary;
}

// Calls the worker until a run reads nothing (the schedule without its pause), adding up
// the runs' summaries. The drain's time ends with the last run that found work: the empty
// run that tells it is over is not the worker's work.
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

// What the local Edge Runtime saw of a worker function's runs (local/edge-runtime/main.ts's
// /_edge-runtime/stats), and its CPU limits: the runs' CPU time, the worst run's, and the
// workers it retired and killed.
export type RuntimeUse = {
  runs: number;
  cpuMs: number;
  worstRunCpuMs: number;
  retired: number;
  killed: number;
  cpuSoftMs: number;
  cpuHardMs: number;
};

export async function forgetRuntimeUse(port: number): Promise<void> {
  const response = await fetch(`http://127.0.0.1:${port}/_edge-runtime/stats`, { method: "DELETE" });
  await response.body?.cancel();
  assert.equal(response.status, 204, "the local Edge Runtime forgets what it counted");
}

export async function runtimeUse(port: number): Promise<RuntimeUse> {
  const stats = await (await fetch(`http://127.0.0.1:${port}/_edge-runtime/stats`)).json() as {
    requests: number; retired: number; ended: Record<string, number>; requestCpuMs: number; worstRequestCpuMs: number;
  };
  const limits = await (await fetch(`http://127.0.0.1:${port}/_edge-runtime/limits`)).json() as { cpuSoftMs: number; cpuHardMs: number };
  const { EarlyDrop: _retiredAndDone, ...kills } = stats.ended;
  return {
    runs: stats.requests,
    cpuMs: stats.requestCpuMs,
    worstRunCpuMs: stats.worstRequestCpuMs,
    retired: stats.retired,
    killed: Object.values(kills).reduce((sum, count) => sum + count, 0),
    cpuSoftMs: limits.cpuSoftMs,
    cpuHardMs: limits.cpuHardMs,
  };
}
