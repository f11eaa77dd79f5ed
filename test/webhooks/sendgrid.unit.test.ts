// What each of SendGrid's events means as a delivery report (src/webhooks/sendgrid.ts):
// the delivery state, the provider's reason and code, whether the address is to be
// marked, and which events are not about a message this service sent or cannot be read.
import assert from "node:assert/strict";
import type { DeliveryEvent } from "../../src/webhooks/events.ts";
import { readSendGridEvent } from "../../src/webhooks/sendgrid.ts";

const NOTIFICATION = "6f1f0c2e-8a51-4d0e-9b1a-1d2c3b4a5f60";
const TENANT = "0d3c2b1a-5f60-4e7d-8c9b-a1b2c3d4e5f6";

function event(fields: Record<string, unknown>): Record<string, unknown> {
  return {
    email: "ana@guest.example",
    timestamp: 1795600000,
    sg_event_id: "ZTBhNjRkNTYtMzQ1Mi00NmU",
    sg_message_id: "14c5d75ce93dfd64b469ab.filterdrecv-5645d9c87f-l9gzs-1-5E9A3D6E-2.0",
    notification_id: NOTIFICATION,
    tenant_id: TENANT,
    ...fields,
  };
}

function read(fields: Record<string, unknown>): DeliveryEvent {
  const reading = readSendGridEvent(event(fields));
  assert.equal(reading.kind, "event", JSON.stringify(reading));
  return (reading as { event: DeliveryEvent }).event;
}

const meaning = (e: DeliveryEvent) => [e.delivery_state, e.reason, e.code, e.undeliverable];

Deno.test("each event's state, reason, code and whether it marks the address", () => {
  assert.deepEqual(meaning(read({ event: "processed" })), [null, null, null, false]);
  assert.deepEqual(meaning(read({ event: "deferred", response: "421 4.7.0 Try again later", attempt: "3" })),
    ["deferred", "421 4.7.0 Try again later (attempt 3)", null, false]);
  assert.deepEqual(meaning(read({ event: "delivered", response: "250 2.0.0 OK" })), ["delivered", "250 2.0.0 OK", null, false]);
  assert.deepEqual(meaning(read({ event: "bounce", type: "bounce", reason: "550 5.1.1 No such user", status: "5.1.1" })),
    ["bounced", "550 5.1.1 No such user", "5.1.1", true]);
  // Older bounces carry no type: a bounce is a bounce.
  assert.deepEqual(meaning(read({ event: "bounce", reason: "550 5.1.1 No such user", status: "5.1.1" })),
    ["bounced", "550 5.1.1 No such user", "5.1.1", true]);
  assert.deepEqual(meaning(read({ event: "bounce", type: "blocked", reason: "554 5.7.1 Blocked", status: "5.7.1" })),
    ["bounced", "blocked: 554 5.7.1 Blocked", "5.7.1", false]);
  assert.deepEqual(meaning(read({ event: "dropped", reason: "Invalid" })), ["dropped", "Invalid", null, true]);
  assert.deepEqual(meaning(read({ event: "dropped", reason: "Bounced Address" })), ["dropped", "Bounced Address", null, true]);
  assert.deepEqual(meaning(read({ event: "dropped", reason: "Spam Reporting Address" })), ["dropped", "Spam Reporting Address", null, true]);
  assert.deepEqual(meaning(read({ event: "dropped", reason: "Unsubscribed Address" })), ["dropped", "Unsubscribed Address", null, false]);
  assert.deepEqual(meaning(read({ event: "spamreport" })), ["spam_report", null, null, true]);
  for (const name of ["open", "click", "unsubscribe", "group_unsubscribe", "group_resubscribe"]) {
    assert.deepEqual(meaning(read({ event: name })), [null, null, null, false], name);
  }
});

Deno.test("the message is the sg_message_id before its first dot; the ids, the name and the time are kept as SendGrid gave them", () => {
  assert.deepEqual(read({ event: "delivered", response: "250 OK" }), {
    tenant_id: TENANT,
    notification_id: NOTIFICATION,
    provider_message_id: "14c5d75ce93dfd64b469ab",
    provider_event_id: "ZTBhNjRkNTYtMzQ1Mi00NmU",
    event: "delivered",
    delivery_state: "delivered",
    occurred_at: "2026-11-25T09:46:40.000Z",
    reason: "250 OK",
    code: null,
    undeliverable: false,
  });
  assert.equal(read({ event: "open", sg_message_id: "abc" }).provider_message_id, "abc", "an id without a suffix is itself");
  assert.equal(read({ event: "open", notification_id: NOTIFICATION.toUpperCase() }).notification_id, NOTIFICATION);
});

Deno.test("a provider's reason past the column's 2,000 characters is cut, and the code past 100", () => {
  const long = read({ event: "bounce", reason: "x".repeat(5000), status: "5".repeat(500) });
  assert.equal(long.reason!.length, 2000);
  assert.ok(long.reason!.endsWith("…"));
  assert.equal(long.code!.length, 100);
});

Deno.test("events without the custom args are about no message this service sent; those it cannot read are ignored", () => {
  const kinds = (fields: Record<string, unknown>) => readSendGridEvent(event(fields)).kind;
  assert.equal(kinds({ event: "delivered", notification_id: undefined }), "unmatched");
  assert.equal(kinds({ event: "delivered", tenant_id: "tenant-1" }), "unmatched");
  assert.equal(kinds({ event: "delivered", sg_message_id: undefined }), "unmatched");
  assert.equal(kinds({ event: "delivered", sg_message_id: ".suffix" }), "unmatched");
  assert.equal(kinds({ event: "delivered", sg_event_id: undefined }), "ignored");
  assert.equal(kinds({ event: "delivered", sg_event_id: "x".repeat(256) }), "ignored");
  assert.equal(kinds({ event: "delivered", timestamp: "1795600000" }), "ignored");
  assert.equal(kinds({ event: "delivered", timestamp: 1795600000.5 }), "ignored");
  assert.equal(kinds({ event: "delivered", timestamp: -1 }), "ignored");
  assert.equal(kinds({ event: "Delivered!" }), "ignored");
  assert.equal(kinds({ event: undefined }), "ignored");
  assert.equal(kinds({ event: "deferred", attempt: { n: 1 } }), "ignored");
  assert.equal(readSendGridEvent("delivered").kind, "ignored");
});
