// SMS through the notifications worker and the SMS provider double
// (local/sms-capture, Twilio's Messages API). Each test enqueues an sms notification
// directly, as the admin connection: the row and its job, as the fan-out does where the
// tenant opted in (channels.test.ts tests the fan-out itself).
import assert from "node:assert/strict";
import type postgres from "postgres";
import { type Client, withFixture } from "../support/api.ts";
import { createGuest, createProperty, createReservation, createUnit, type Guest, type Property, type Reservation } from "../support/domain.ts";
import {
  deliveryColumns,
  drainQueue,
  expectFailureNoticed,
  expectRunWithFailures,
  jobsFor,
  listPreferences,
  mail,
  type NotificationWithEvents,
  readNotification,
  runWorker,
  runWorkerInProcess,
  runWorkerUntilRead,
  setPreference,
  sms,
  summary,
} from "../support/notifications.ts";
import { stack } from "../support/stack.ts";
import { smsCallbackUrl } from "../support/webhooks.ts";
import { smsSegments } from "../../src/notifications/sms-text.ts";

const PHONE = "+351912345678";

type SmsStay = { property: Property; guest: Guest; reservation: Reservation };

// A confirmed stay for a guest with `phone` (or none).
async function smsStay(api: Client, phone: string | null): Promise<SmsStay> {
  const property = await createProperty(api);
  const unit = await createUnit(api, property.id);
  const guest = await createGuest(api, { phone });
  const reservation = await createReservation(api, { propertyId: property.id, guestId: guest.id }, {
    unitId: unit.id,
    status: "confirmed",
  });
  return { property, guest, reservation };
}

// A checkin_reminder by `channel` for the stay's guest and its job, in one transaction.
async function enqueueReminder(sql: postgres.Sql, tenantId: string, stay: SmsStay, channel = "sms"): Promise<string> {
  return await sql.begin(async (trx) => {
    const [row] = await trx<{ id: string }[]>`
      insert into public.notifications (tenant_id, recipient_id, recipient_type, template_key, channel, reservation_id)
      values (${tenantId}, ${stay.guest.id}, 'guest', 'checkin_reminder', ${channel}, ${stay.reservation.id})
      returning id`;
    await trx`select private.send_notification_job(${row!.id}::uuid, ${tenantId}::uuid)`;
    return row!.id;
  });
}

async function pendingSms(api: Client, id: string, stay: SmsStay, tenantId: string): Promise<NotificationWithEvents> {
  const pending = await readNotification(api, id);
  assert.deepEqual(pending, {
    id,
    tenantId,
    recipientId: stay.guest.id,
    recipientType: "guest",
    templateKey: "checkin_reminder",
    channel: "sms",
    subject: null,
    body: "",
    status: "pending",
    statusReason: null,
    attempts: 0,
    reservationId: stay.reservation.id,
    accessCodeId: null,
    sentAt: null,
    deliveryState: null,
    deliveryStateAt: null,
    deliveryReason: null,
    deliveryCode: null,
    createdAt: pending.createdAt,
    updatedAt: pending.createdAt,
    events: [],
  });
  return pending;
}

// The one accepted text message, to the guest's phone from the stack's number, and the
// notification sent with the provider's message SID kept.
async function expectTexted(sql: postgres.Sql, api: Client, stay: SmsStay, pending: NotificationWithEvents, attempts: number) {
  const messages = await sms.messages();
  assert.equal(messages.length, 1, "exactly one text message");
  const [message] = messages;
  assert.equal(message!.accountSid, stack.notifications.sms.accountSid);
  assert.deepEqual(Object.keys(message!.params).sort(), ["Body", "From", "StatusCallback", "To"]);
  assert.equal(message!.params.StatusCallback, smsCallbackUrl(pending.tenantId, pending.id), "the status comes back to the webhook");
  assert.equal(message!.params.To, PHONE);
  assert.equal(message!.params.From, stack.notifications.sms.fromNumber);
  const body = message!.params.Body!;
  assert.ok(body.includes(stay.property.name) && body.includes(stay.reservation.confirmationCode), body);
  // The template's own short text, in one segment, not the email's.
  assert.ok(body.startsWith(`${stay.property.name}: welcome, Ana!`), body);
  assert.deepEqual([smsSegments(body).encoding, smsSegments(body).segments], ["GSM-7", 1]);
  assert.ok(message!.sid?.startsWith("SM"));

  const sent = await readNotification(api, pending.id);
  assert.ok(sent.sentAt);
  assert.deepEqual(sent, {
    ...pending,
    subject: null,
    body,
    status: "sent",
    statusReason: null,
    attempts,
    sentAt: sent.sentAt,
    // The provider (its double) reports the message sent, then delivered.
    deliveryState: "delivered",
    deliveryStateAt: sent.deliveryStateAt,
    deliveryReason: null,
    deliveryCode: null,
    updatedAt: sent.updatedAt,
    events: sent.events,
  });
  assert.deepEqual(sent.events.map((event) => [event.provider, event.event, event.deliveryState]),
    [["sms", "delivered", "delivered"], ["sms", "sent", null]]);
  assert.deepEqual(await deliveryColumns(sql, pending.id), { recipient_address: PHONE, provider_message_id: message!.sid });
  assert.deepEqual(await jobsFor(sql, pending.id), []);
  assert.deepEqual(await mail.requests(), [], "nothing went by email");
}

Deno.test("an sms notification for a guest with a phone: one text message to the phone from the stack's number, the notification sent", () =>
  withFixture(async ({ sql, tenant }) => {
    await drainQueue(sql);
    const t = await tenant("sms");
    const stay = await smsStay(t.ownerClient, PHONE);
    const pending = await pendingSms(t.ownerClient, await enqueueReminder(sql, t.tenantId, stay), stay, t.tenantId);

    assert.deepEqual(await runWorker(), summary({ read: 1, sent: 1 }));
    await expectTexted(sql, t.ownerClient, stay, pending, 1);
    assert.deepEqual(await runWorker(), summary({}));
    assert.equal((await sms.requests()).length, 1, "sent once");
  }));

Deno.test("an sms notification for a guest without a phone: failed, 'the guest has no phone number', nothing sent", () =>
  withFixture(async ({ sql, tenant }) => {
    await drainQueue(sql);
    const t = await tenant("sms-no-phone");
    const stay = await smsStay(t.ownerClient, null);
    const pending = await pendingSms(t.ownerClient, await enqueueReminder(sql, t.tenantId, stay), stay, t.tenantId);

    expectRunWithFailures(await runWorker(), { read: 1, failed: 1 });
    const failed = await readNotification(t.ownerClient, pending.id);
    assert.deepEqual(failed, {
      ...pending,
      status: "failed",
      statusReason: "the guest has no phone number",
      updatedAt: failed.updatedAt,
      events: [],
    });
    assert.deepEqual(await jobsFor(sql, pending.id), []);
    assert.deepEqual(await sms.requests(), []);
    assert.deepEqual(await mail.requests(), []);
  }));

Deno.test("the SMS provider answers 429, then 201: retried (pending, the 429 kept), then sent, one message", () =>
  withFixture(async ({ sql, tenant }) => {
    await drainQueue(sql);
    const t = await tenant("sms-retry");
    const stay = await smsStay(t.ownerClient, PHONE);
    const pending = await pendingSms(t.ownerClient, await enqueueReminder(sql, t.tenantId, stay), stay, t.tenantId);
    await sms.script({ status: 429, headers: { "retry-after": "1" } });

    assert.deepEqual(await runWorker(), summary({ read: 1, retried: 1 }));
    const waiting = await readNotification(t.ownerClient, pending.id);
    assert.deepEqual([waiting.status, waiting.attempts, waiting.sentAt], ["pending", 1, null]);
    assert.match(waiting.statusReason ?? "", /\b429\b/);
    assert.deepEqual(await runWorker(), summary({}), "not before the wait");

    const { run } = await runWorkerUntilRead(5000);
    assert.deepEqual(run, summary({ read: 1, sent: 1 }));
    assert.deepEqual((await sms.requests()).map((attempt) => attempt.status), [429, 201]);
    await expectTexted(sql, t.ownerClient, stay, pending, 2);
  }));

Deno.test("the SMS provider refuses the message (400): failed at once with the provider's message kept", () =>
  withFixture(async ({ sql, tenant }) => {
    await drainQueue(sql);
    const t = await tenant("sms-refused");
    const stay = await smsStay(t.ownerClient, PHONE);
    const pending = await pendingSms(t.ownerClient, await enqueueReminder(sql, t.tenantId, stay), stay, t.tenantId);
    const refusal = "Attempt to send to unsubscribed recipient";
    await sms.script({ status: 400, body: { code: 21610, message: refusal, status: 400 } });

    expectRunWithFailures(await runWorker(), { read: 1, failed: 1 });
    const failed = await readNotification(t.ownerClient, pending.id);
    assert.deepEqual([failed.status, failed.attempts, failed.sentAt], ["failed", 1, null]);
    assert.match(failed.statusReason ?? "", /\b400\b/);
    assert.ok(failed.statusReason?.includes(refusal), failed.statusReason ?? "");
    assert.deepEqual(await jobsFor(sql, pending.id), []);
    assert.deepEqual(await sms.messages(), []);
  }));

Deno.test("opted out of checkin_reminder by sms: the sms one is skipped; the email pair has no row", () =>
  withFixture(async ({ sql, tenant }) => {
    await drainQueue(sql);
    const t = await tenant("sms-opt-out");
    const stay = await smsStay(t.ownerClient, PHONE);
    await setPreference(t.ownerClient, { templateKey: "checkin_reminder", channel: "sms", enabled: false });
    const pending = await pendingSms(t.ownerClient, await enqueueReminder(sql, t.tenantId, stay), stay, t.tenantId);

    assert.deepEqual(await runWorker(), summary({ read: 1, skipped: 1 }));
    const skipped = await readNotification(t.ownerClient, pending.id);
    assert.deepEqual([skipped.status, skipped.statusReason], ["skipped", "the tenant opted out of checkin_reminder by sms"]);
    assert.deepEqual(await sms.requests(), []);
    assert.deepEqual((await listPreferences(t.ownerClient)).data.map((p) => [p.templateKey, p.channel, p.enabled]),
      [["checkin_reminder", "sms", false]], "only the sms pair is stored");
  }));

Deno.test("wrong SMS credentials: the provider answers 401 and the notification fails; no sending number: sms is disabled, skipped with a warning", () =>
  withFixture(async ({ sql, tenant }) => {
    await drainQueue(sql);
    const t = await tenant("sms-config");
    const stay = await smsStay(t.ownerClient, PHONE);

    const wrongToken = await pendingSms(t.ownerClient, await enqueueReminder(sql, t.tenantId, stay), stay, t.tenantId);
    const refused = await runWorkerInProcess({ sms: { authToken: "not-the-token" } });
    expectRunWithFailures(refused.run, { read: 1, failed: 1 });
    const failed = await readNotification(t.ownerClient, wrongToken.id);
    assert.equal(failed.status, "failed");
    assert.match(failed.statusReason ?? "", /\b401\b/);
    assert.deepEqual(refused.logs.map((line) => [line.level, line.fields?.notificationId]), [["error", wrongToken.id]]);
    assert.deepEqual((await sms.requests()).map((attempt) => attempt.status), [401]);
    assert.deepEqual(await sms.messages(), []);
    await expectFailureNoticed(t.ownerClient, wrongToken.id);

    await sms.clear();
    const noNumber = await pendingSms(t.ownerClient, await enqueueReminder(sql, t.tenantId, stay), stay, t.tenantId);
    const disabled = await runWorkerInProcess({ sms: { fromNumber: null } });
    assert.deepEqual(disabled.run, summary({ read: 1, skipped: 1 }));
    const reason = "sms is disabled: the sending number (SMS_FROM_NUMBER) is not set";
    assert.deepEqual(disabled.logs.map((line) => [line.level, line.message, line.fields?.notificationId]), [["warn", reason, noNumber.id]]);
    const skipped = await readNotification(t.ownerClient, noNumber.id);
    assert.deepEqual([skipped.status, skipped.statusReason], ["skipped", reason]);
    assert.deepEqual(await sms.requests(), []);
  }));

Deno.test("push and in_app notifications to a guest: a guest has no inbox or browser here, so they are skipped with the reason", () =>
  withFixture(async ({ sql, tenant }) => {
    await drainQueue(sql);
    const t = await tenant("other-channels");
    const stay = await smsStay(t.ownerClient, PHONE);
    const ids: Record<string, string> = {};
    for (const channel of ["push", "in_app"]) {
      ids[channel] = await enqueueReminder(sql, t.tenantId, stay, channel);
    }
    assert.deepEqual(await runWorker(), summary({ read: 2, skipped: 2 }));
    for (const [channel, id] of Object.entries(ids)) {
      const skipped = await readNotification(t.ownerClient, id);
      assert.deepEqual([skipped.channel, skipped.status, skipped.statusReason], [channel, "skipped", `a guest is not reached by ${channel}`]);
    }
    assert.deepEqual(await sms.requests(), []);
    assert.deepEqual(await mail.requests(), []);
  }));
