// What a provider's answer means to the worker, on the answer alone: 429 and 5xx are
// worth another try, any other refusal is final, and Retry-After is read in seconds or as
// an HTTP date. delivery.test.ts follows notifications from the API to the mailbox.
import assert from "node:assert/strict";
import { deliveryForStatus, retryAfterSeconds } from "../../src/notifications/delivery.ts";

const now = Date.parse("2026-11-22T09:30:00Z");

Deno.test("Retry-After in seconds, as an HTTP date (never in the past), or nothing when it is neither", () => {
  assert.equal(retryAfterSeconds("7", now), 7);
  assert.equal(retryAfterSeconds(" 0 ", now), 0);
  assert.equal(retryAfterSeconds("Sun, 22 Nov 2026 09:30:30 GMT", now), 30);
  assert.equal(retryAfterSeconds("Sun, 22 Nov 2026 09:30:00 GMT", now + 500), 0);
  assert.equal(retryAfterSeconds("Sun, 22 Nov 2026 09:29:00 GMT", now), 0);
  assert.equal(retryAfterSeconds("soon", now), null);
  assert.equal(retryAfterSeconds("", now), null);
  assert.equal(retryAfterSeconds(null, now), null);
});

Deno.test("429 and 5xx are transient, keeping Retry-After; every other refusal is permanent", () => {
  assert.deepEqual(deliveryForStatus(429, "throttled", 5), { outcome: "transient", reason: "throttled", retryAfterSeconds: 5 });
  assert.deepEqual(deliveryForStatus(503, "down", null), { outcome: "transient", reason: "down", retryAfterSeconds: null });
  for (const status of [400, 401, 403, 404, 413, 422]) {
    assert.deepEqual(deliveryForStatus(status, "refused", 5), { outcome: "permanent", reason: "refused" }, String(status));
  }
});
