// The bench's pause watch (bench/pauses.ts) sees what it says it sees: a statement
// held by a lock on the stack's database, with the lock it waits for, and the bench's
// own process not running its timer.
import assert from "node:assert/strict";
import postgres from "postgres";
import { longerPauses, watchPauses } from "../../bench/pauses.ts";
import { stack } from "../support/stack.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

Deno.test("a statement waiting on a lock is the longest the watch sees, with its wait", async () => {
  const holder = postgres(stack.dbUrl, { max: 1, onnotice: () => {} });
  const waiter = postgres(stack.dbUrl, { max: 1, onnotice: () => {} });
  const watched = postgres(stack.dbUrl, { max: 1, onnotice: () => {} });
  const key = Math.floor(Math.random() * 1e9);
  try {
    // The holder takes the lock and sits idle, so the waiter is the one active statement it holds up.
    await holder`select pg_advisory_lock(${key})`;
    const watch = watchPauses(watched);
    const waiting = waiter`select pg_advisory_lock(${key})`.then(() => waiter`select pg_advisory_unlock(${key})`);
    await sleep(700);
    await holder`select pg_advisory_unlock(${key})`;
    await waiting;
    await sleep(150);
    const pauses = await watch.stop();
    const seenMs = pauses.databaseMs ?? 0;
    assert.ok(seenMs >= 400 && seenMs < 2_000, `the waiter was seen for ${pauses.databaseMs} ms`);
    assert.equal(pauses.databaseWait, "Lock:advisory");
    assert.match(pauses.databaseStatement ?? "", /^select pg_advisory_lock\(\$1\)/);
  } finally {
    await Promise.all([holder.end(), waiter.end(), watched.end()]);
  }
});

Deno.test("the process not running its timer is a machine pause; without a database nothing is sampled", async () => {
  const watch = watchPauses();
  await sleep(50);
  const until = performance.now() + 300;
  while (performance.now() < until) { /* the event loop held, as a paused machine would hold it */ }
  await sleep(50);
  const pauses = await watch.stop();
  assert.ok(pauses.machineMs >= 250, `the timer fired ${pauses.machineMs} ms late`);
  assert.deepEqual({ ...pauses, machineMs: 0 }, { machineMs: 0, databaseMs: null, databaseWait: null, databaseStatement: null });
});

Deno.test("two watches' pauses together keep the longer of each, the statement with its own wait", () => {
  const a = { machineMs: 40, databaseMs: 900, databaseWait: "IO:WALSync", databaseStatement: "commit" };
  const b = { machineMs: 1_200, databaseMs: 30, databaseWait: null, databaseStatement: "select 1" };
  assert.deepEqual(longerPauses(a, b), { machineMs: 1_200, databaseMs: 900, databaseWait: "IO:WALSync", databaseStatement: "commit" });
  assert.deepEqual(longerPauses(b, a), longerPauses(a, b));
  const unwatched = { machineMs: 5, databaseMs: null, databaseWait: null, databaseStatement: null };
  assert.deepEqual(longerPauses(unwatched, b), { ...b, machineMs: 1_200 });
  assert.deepEqual(longerPauses(unwatched, unwatched), unwatched);
});
