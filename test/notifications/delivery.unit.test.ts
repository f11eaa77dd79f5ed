// What a provider's answer means to the worker, on the answer alone: 429 and 5xx are
// worth another try, any other refusal is final, and Retry-After is read in seconds or as
// an HTTP date. delivery.test.ts follows notifications from the API to the mailbox.
import assert from "node:assert/strict";
import { type ChannelAdapter, type Delivery, deliveryForStatus, type OutgoingMessage, retryAfterSeconds, withSendsInFlight } from "../../src/notifications/delivery.ts";

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

Deno.test("withSendsInFlight: never more sends under way than allowed, the rest in the order they came; a send that throws frees its slot", async () => {
  let running = 0;
  let most = 0;
  const started: string[] = [];
  const finish = new Map<string, (outcome: Delivery | Error) => void>();
  const adapter = withSendsInFlight({
    disabledReason: null,
    send: (message: OutgoingMessage) => {
      running++;
      most = Math.max(most, running);
      started.push(message.to);
      return new Promise<Delivery>((resolve, reject) => {
        finish.set(message.to, (outcome) => {
          running--;
          if (outcome instanceof Error) reject(outcome);
          else resolve(outcome);
        });
      });
    },
  }, 2, () => 0);
  const message = (to: string): OutgoingMessage => ({ notificationId: to, tenantId: "t", templateKey: "k", to, subject: "", html: "", text: "" });
  const accepted: Delivery = { outcome: "accepted", providerMessageId: null };
  const sends = Promise.allSettled(["a", "b", "c", "d", "e"].map((to) => adapter.send(message(to))));
  const settle = () => new Promise((resolve) => setTimeout(resolve, 0));
  await settle();
  assert.deepEqual(started, ["a", "b"], "two at once");
  finish.get("b")!(new Error("the network"));
  await settle();
  assert.deepEqual(started, ["a", "b", "c"], "the failed send's slot goes to the next in line");
  finish.get("a")!(accepted);
  finish.get("c")!(accepted);
  await settle();
  assert.deepEqual(started, ["a", "b", "c", "d", "e"]);
  finish.get("d")!(accepted);
  finish.get("e")!(accepted);
  const outcomes = await sends;
  assert.deepEqual(outcomes.map((outcome) => outcome.status), ["fulfilled", "rejected", "fulfilled", "fulfilled", "fulfilled"]);
  assert.equal(most, 2);
  assert.equal(running, 0);
  assert.throws(() => withSendsInFlight(adapter, 0, () => 0), /whole number from 1/);
});

Deno.test("withSendsInFlight: a send whose turn comes after its startBy is not made, postponed, and passes its turn on", async () => {
  let clock = 0;
  const sent: string[] = [];
  const release = new Map<string, () => void>();
  const adapter = withSendsInFlight({
    disabledReason: null,
    send: (message: OutgoingMessage) => {
      sent.push(message.to);
      return new Promise<Delivery>((resolve) => release.set(message.to, () => resolve({ outcome: "accepted", providerMessageId: null })));
    },
  } as ChannelAdapter, 1, () => clock);
  const message = (to: string): OutgoingMessage => ({ notificationId: to, tenantId: "t", templateKey: "k", to, subject: "", html: "", text: "" });
  const first = adapter.send(message("a"), { startBy: 100 });
  const late = adapter.send(message("b"), { startBy: 100 });
  const unbounded = adapter.send(message("c"));
  await new Promise((resolve) => setTimeout(resolve, 0));
  clock = 150;
  release.get("a")!();
  assert.equal((await first).outcome, "accepted");
  assert.deepEqual(await late, { outcome: "postponed", reason: "its turn with the provider came too late for this run" });
  await new Promise((resolve) => setTimeout(resolve, 0));
  release.get("c")!();
  assert.equal((await unbounded).outcome, "accepted");
  assert.deepEqual(sent, ["a", "c"], "the postponed send never reached the provider");
});
