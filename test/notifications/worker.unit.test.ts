// The worker's retry schedule on its own: exponential from the base, capped, with jitter,
// and never sooner than the provider's Retry-After. worker.test.ts and retries.test.ts run
// the worker against the stack's queue and provider doubles.
import assert from "node:assert/strict";
import { defaultWorkerSettings, retryDelaySeconds, type WorkerSettings } from "../../src/notifications/worker.ts";

const settings: WorkerSettings = { ...defaultWorkerSettings, baseDelaySeconds: 30, maxDelaySeconds: 3600 };
// The jitter's two ends: random() at 0 halves the delay, at (almost) 1 keeps it whole.
const lowest = () => 0;
const highest = () => 1 - Number.EPSILON;

Deno.test("the delay doubles with each attempt from the base, between half and all of it", () => {
  for (const [attempt, full] of [[1, 30], [2, 60], [3, 120], [4, 240], [5, 480]] as const) {
    assert.equal(retryDelaySeconds(attempt, null, settings, highest), full, `attempt ${attempt}`);
    assert.equal(retryDelaySeconds(attempt, null, settings, lowest), full / 2, `attempt ${attempt}`);
    for (let i = 0; i < 20; i++) {
      const delay = retryDelaySeconds(attempt, null, settings, Math.random);
      assert.ok(delay >= full / 2 && delay <= full, `attempt ${attempt}: ${delay}`);
    }
  }
});

Deno.test("the delay never passes the cap", () => {
  assert.equal(retryDelaySeconds(20, null, settings, highest), 3600);
  assert.equal(retryDelaySeconds(8, null, { ...settings, maxDelaySeconds: 100 }, highest), 100);
});

Deno.test("a provider's Retry-After wins when it is longer, even past the cap; a shorter one changes nothing", () => {
  assert.equal(retryDelaySeconds(1, 90, settings, highest), 90);
  assert.equal(retryDelaySeconds(1, 7200, settings, highest), 7200);
  assert.equal(retryDelaySeconds(3, 5, settings, highest), 120);
});
