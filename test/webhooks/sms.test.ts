// What became of each text message after the SMS provider accepted it, end to end on the
// running stack: the worker sends through the SMS double with a status callback URL
// naming the notification, and the double posts Twilio's signed status callbacks there
// through the gateway; the notification shows its delivery state and events. Posts the
// tests make themselves show what is refused and that it changes nothing. No domain event
// enqueues an SMS, so each test enqueues one as the admin connection, as
// private.enqueue_notification does for email.
import assert from "node:assert/strict";
import type postgres from "postgres";
import { type Client, expectProblem, withFixture } from "../support/api.ts";
import { createGuest, createProperty, createReservation, createUnit } from "../support/domain.ts";
import {
  drainQueue,
  type Fate,
  type NotificationWithEvents,
  readNotification,
  runWorker,
  sms,
  summary,
} from "../support/notifications.ts";
import {
  expectInvalidSignature,
  expectReceipt,
  postSmsCallback,
  SMS_WEBHOOK,
  smsCallbackForm,
  smsCallbackUrl,
  smsSignature,
} from "../support/webhooks.ts";
import { stack } from "../support/stack.ts";

// A checkin_reminder by SMS for a confirmed stay's guest, sent by the worker through the
// double, which met `fate` (sent, then delivered, by default): the notification once its
// callbacks are in, and the message's SID.
async function sentSms(sql: postgres.Sql, api: Client, tenantId: string, fate?: Fate) {
  const property = await createProperty(api);
  const unit = await createUnit(api, property.id);
  const guest = await createGuest(api, { phone: "+351912345678" });
  const reservation = await createReservation(api, { propertyId: property.id, guestId: guest.id }, { unitId: unit.id, status: "confirmed" });
  const id = await sql.begin(async (trx) => {
    const [row] = await trx<{ id: string }[]>`
      insert into public.notifications (tenant_id, recipient_id, recipient_type, template_key, channel, reservation_id)
      values (${tenantId}, ${guest.id}, 'guest', 'checkin_reminder', 'sms', ${reservation.id})
      returning id`;
    await trx`select private.send_notification_job(${row!.id}::uuid, ${tenantId}::uuid)`;
    return row!.id;
  });
  if (fate) await sms.fates(fate);
  assert.deepEqual(await runWorker(), summary({ read: 1, sent: 1 }));
  const [message] = await sms.messages();
  assert.equal(message?.params.StatusCallback, smsCallbackUrl(tenantId, id), "the message names its status callback");
  return { sent: await readNotification(api, id), sid: message!.sid!, url: smsCallbackUrl(tenantId, id) };
}

function delivery(notification: NotificationWithEvents) {
  return {
    state: notification.deliveryState,
    code: notification.deliveryCode,
    events: notification.events.map((event) => [event.provider, event.event, event.deliveryState, event.code]),
  };
}

Deno.test("a delivered text message: the provider's sent and delivered callbacks recorded, the notification delivered", () =>
  withFixture(async ({ sql, tenant }) => {
    await drainQueue(sql);
    const t = await tenant("sms-delivered");
    const { sent, sid, url } = await sentSms(sql, t.ownerClient, t.tenantId);
    const posts = await sms.reports();
    assert.deepEqual(posts.map((post) => [post.url, (post.payload as Record<string, string>).MessageStatus, post.attempts.map((a) => a.status)]),
      [[url, "sent", [200]], [url, "delivered", [200]]]);
    assert.equal((posts[1]!.payload as Record<string, string>).MessageSid, sid);
    assert.equal(sent.status, "sent");
    assert.deepEqual(delivery(sent), {
      state: "delivered", code: null, events: [["sms", "delivered", "delivered", null], ["sms", "sent", null, null]],
    });
  }));

Deno.test("undelivered and failed text messages: the state with the provider's error code", () =>
  withFixture(async ({ sql, tenant }) => {
    await drainQueue(sql);
    const t = await tenant("sms-undelivered");
    const undelivered = await sentSms(sql, t.ownerClient, t.tenantId, { events: [{ status: "sent" }, { status: "undelivered", errorCode: "30003" }] });
    assert.deepEqual(delivery(undelivered.sent), {
      state: "undelivered", code: "30003", events: [["sms", "undelivered", "undelivered", "30003"], ["sms", "sent", null, null]],
    });
    await drainQueue(sql);
    const failed = await sentSms(sql, t.ownerClient, t.tenantId, { events: [{ status: "failed", errorCode: "30008" }] });
    assert.deepEqual(delivery(failed.sent), { state: "failed", code: "30008", events: [["sms", "failed", "failed", "30008"]] });
    assert.equal(failed.sent.status, "sent", "the status stays sent: the provider took it");
  }));

Deno.test("a callback sent twice is recorded once; callbacks out of order end delivered", () =>
  withFixture(async ({ sql, tenant }) => {
    await drainQueue(sql);
    const t = await tenant("sms-twice");
    const twice = await sentSms(sql, t.ownerClient, t.tenantId, { events: [{ status: "sent" }, { status: "delivered" }], duplicate: true });
    assert.equal((await sms.reports()).length, 4, "each callback posted twice");
    assert.deepEqual(delivery(twice.sent).events.map(([, event]) => event), ["delivered", "sent"]);
    await expectReceipt(await postSmsCallback(twice.url, smsCallbackForm(twice.sid, "delivered")), { received: 1, duplicates: 1 }, SMS_WEBHOOK);

    await drainQueue(sql);
    const reversed = await sentSms(sql, t.ownerClient, t.tenantId, { events: [{ status: "sent" }, { status: "delivered" }], post: "reversed" });
    assert.deepEqual((await sms.reports()).map((post) => (post.payload as Record<string, string>).MessageStatus), ["delivered", "sent"]);
    assert.equal(reversed.sent.deliveryState, "delivered", "a late 'sent' does not undo the delivery");
  }));

Deno.test("a callback without a signature, signed with another token or for another URL is refused with 401 and changes nothing; one of another account is 400", () =>
  withFixture(async ({ sql, tenant }) => {
    await drainQueue(sql);
    const t = await tenant("sms-signatures");
    const api = t.ownerClient;
    const { sent, sid, url } = await sentSms(sql, api, t.tenantId, { events: [{ status: "sent" }] });
    assert.equal(sent.deliveryState, null, "sent is no delivery state");
    const failed = smsCallbackForm(sid, "failed", { ErrorCode: "30007" });
    const otherUrl = smsCallbackUrl(t.tenantId, crypto.randomUUID());
    const refusals: [string, Promise<Response>][] = [
      ["no signature", postSmsCallback(url, failed, { signature: null })],
      ["another token's signature", postSmsCallback(url, failed, { signature: smsSignature(url, failed, "another-token") })],
      ["a signature of another notification's URL", postSmsCallback(url, failed, { signedUrl: otherUrl })],
      ["a signature of the function's own address", postSmsCallback(url, failed, {
        signedUrl: url.replace(`${stack.apiUrl}/functions/v1`, "http://127.0.0.1:1"),
      })],
      ["a signature of other parameters", postSmsCallback(url, failed, { signature: smsSignature(url, { ...failed, ErrorCode: "30003" }) })],
      ["a JSON body", postSmsCallback(url, failed, { contentType: "application/json" })],
    ];
    for (const [label, response] of refusals) {
      const problem = await expectInvalidSignature(await response, SMS_WEBHOOK);
      assert.ok(problem.detail, label);
    }
    assert.deepEqual(await readNotification(api, sent.id), sent, "nothing changed");

    const stranger = { ...failed, AccountSid: "AC99999999999999999999999999999999" };
    await expectProblem("POST", SMS_WEBHOOK, await postSmsCallback(url, stranger), 400, "validation");
    assert.deepEqual(await readNotification(api, sent.id), sent, "nothing changed");

    // The same callback, signed as the provider signs it: recorded.
    await expectReceipt(await postSmsCallback(url, failed), { received: 1, recorded: 1 }, SMS_WEBHOOK);
    assert.deepEqual(delivery(await readNotification(api, sent.id)).events[0], ["sms", "failed", "failed", "30007"]);
    // About another message of the same notification: unmatched, nothing stored.
    await expectReceipt(await postSmsCallback(url, smsCallbackForm(`SM${"0".repeat(32)}`, "delivered")), { received: 1, unmatched: 1 }, SMS_WEBHOOK);
    assert.equal((await readNotification(api, sent.id)).deliveryState, "failed");
  }));
