// What became of each mail after SendGrid accepted it, end to end on the running stack:
// the worker sends through the SendGrid double, which then posts SendGrid's signed events
// to POST /v1/webhooks/sendgrid through the gateway, as SendGrid does; the notification
// shows its delivery state and its events, and a guest whose address bounces gets no more
// mail until the mark is cleared. Posts the tests make themselves (signed with the
// stack's key, with another, or not at all) show what is refused and that it changes nothing.
import assert from "node:assert/strict";
import type postgres from "postgres";
import { client, type Client, expectProblem, expectStatus, listPage, readOne, type Schemas, withFixture } from "../support/api.ts";
import { createStay, type Stay, stepReservation } from "../support/domain.ts";
import {
  expandEvents,
  callWorker,
  drainQueue,
  type Fate,
  mail,
  type Notification,
  notificationFor,
  type NotificationWithEvents,
  readNotification,
  runWorker,
  sleep,
  summary,
} from "../support/notifications.ts";
import {
  expectInvalidSignature,
  expectReceipt,
  nowSeconds,
  postSendGrid,
  SENDGRID_WEBHOOK,
  sendGridEvent,
  sendGridSignature,
  strangerKey,
} from "../support/webhooks.ts";

type Guest = Schemas["Guest"];
const GUEST = "/v1/guests/{id}";
const MARK = "/v1/guests/{id}/email-undeliverable";

// A checked-in stay whose checkin_reminder the worker sent through the double, which met
// `fate` (delivered by default); the notification once the double's reports are in.
async function sentReminder(api: Client, fate?: Fate): Promise<{ stay: Stay; sent: NotificationWithEvents; messageId: string }> {
  if (fate) await mail.fates(fate);
  const stay = await createStay(api, { status: "confirmed" });
  await stepReservation(api, stay.reservation.id, "check-in");
  const pending = await notificationFor(api, stay.reservation.id, "checkin_reminder");
  assert.deepEqual(await runWorker(), summary({ read: 1, sent: 1 }));
  const accepted = (await mail.messages()).filter((message) => message.body.custom_args?.notification_id === pending.id);
  assert.equal(accepted.length, 1, "one mail for the notification");
  return { stay, sent: await readNotification(api, pending.id), messageId: accepted[0]!.messageId! };
}

// The delivery columns and the events (name, state) of a notification, newest first.
function delivery(notification: NotificationWithEvents) {
  return {
    state: notification.deliveryState,
    reason: notification.deliveryReason,
    code: notification.deliveryCode,
    events: notification.events.map((event) => [event.event, event.deliveryState]),
  };
}

async function readGuest(api: Client, id: string): Promise<Guest> {
  return (await readOne<Guest>(api, GUEST, { id })).body;
}

// A new access code for the stay: its access_code_delivery notification, after a worker run.
async function nextDelivery(api: Client, stay: Stay, expected: { sent: number; skipped: number }): Promise<NotificationWithEvents> {
  const created = await api.post(`/reservations/${stay.reservation.id}/access-codes`, {}, { prefer: "return=representation" });
  const code = await expectStatus<Schemas["AccessCode"]>("POST", "/v1/reservations/{id}/access-codes", created, 201);
  await expandEvents();
  const page = await listPage<Notification>(api, "/v1/notifications", `?reservationId=${stay.reservation.id}&templateKey=access_code_delivery`);
  const pending = page.data.find((notification) => notification.accessCodeId === code.id);
  assert.ok(pending, "the new code's notification");
  assert.deepEqual(await runWorker(), summary({ read: 1, ...expected }));
  return await readNotification(api, pending.id);
}

// What a refused post must leave as it was: the notification, its events and the guest.
async function snapshot(api: Client, sql: postgres.Sql, notificationId: string, guestId: string) {
  const [row] = await sql<{ count: number }[]>`select count(*)::int as count from public.notification_events`;
  return { notification: await readNotification(api, notificationId), guest: await readGuest(api, guestId), allEvents: row!.count };
}

Deno.test("a delivered mail: SendGrid's processed and delivered events recorded once each, the notification delivered, its events newest first", () =>
  withFixture(async ({ sql, tenant }) => {
    await drainQueue(sql);
    const t = await tenant("sg-delivered");
    const { sent, messageId, stay } = await sentReminder(t.ownerClient);

    const [post] = await mail.reports();
    assert.equal(post!.attempts.at(-1)!.status, 200, "the webhook took the double's post");
    const events = post!.payload as Record<string, unknown>[];
    assert.deepEqual(events.map((event) => [event.event, event.notification_id, event.tenant_id, event.email]), [
      ["processed", sent.id, t.tenantId, stay.guest.email],
      ["delivered", sent.id, t.tenantId, stay.guest.email],
    ]);
    assert.ok(events.every((event) => String(event.sg_message_id).startsWith(`${messageId}.`)), "sg_message_id is the X-Message-Id and a suffix");

    assert.equal(sent.status, "sent", "the status stays sent");
    assert.deepEqual(delivery(sent), { state: "delivered", reason: "250 OK", code: null, events: [["delivered", "delivered"], ["processed", null]] });
    assert.equal(Date.parse(sent.deliveryStateAt!), (events[1]!.timestamp as number) * 1000, "when SendGrid says it was delivered");
    assert.deepEqual(sent.events.map((event) => event.provider), ["sendgrid", "sendgrid"]);
    assert.deepEqual((await readGuest(t.ownerClient, stay.guest.id)).emailUndeliverableAt, null);

    const delivered = await listPage<Notification>(t.ownerClient, "/v1/notifications", "?deliveryState=delivered");
    assert.deepEqual(delivered.data.map((notification) => notification.id), [sent.id], "the list filters by delivery state");
    assert.deepEqual((await listPage<Notification>(t.ownerClient, "/v1/notifications", "?deliveryState=bounced,dropped")).data, []);
  }));

Deno.test("deferred, then delivered: the notification is deferred with the server's answer until the delivery comes", () =>
  withFixture(async ({ sql, tenant }) => {
    await drainQueue(sql);
    const t = await tenant("sg-deferred");
    const api = t.ownerClient;
    const stay = await createStay(api, { status: "confirmed" });
    await mail.fates({
      events: [{ event: "processed" }, { event: "deferred", response: "421 4.7.0 Try again later", attempt: "1" }, { event: "delivered", response: "250 2.0.0 OK" }],
      post: "separately", gapMs: 1500,
    });
    await stepReservation(api, stay.reservation.id, "check-in");
    const pending = await notificationFor(api, stay.reservation.id, "checkin_reminder");
    // The worker alone, without waiting for the double's reports.
    assert.deepEqual((await callWorker()).body, summary({ read: 1, sent: 1 }));

    // The deferral is in, the delivery not yet (it comes 1.5 s after).
    for (let posts = await mail.reports(); posts.filter((post) => post.done).length < 2; posts = await mail.reports()) {
      await sleep(25);
    }
    const deferred = await readNotification(api, pending.id);
    assert.deepEqual(delivery(deferred), {
      state: "deferred", reason: "421 4.7.0 Try again later (attempt 1)", code: null,
      events: [["deferred", "deferred"], ["processed", null]],
    });

    const done = await mail.reportsDone(3);
    assert.deepEqual(done.map((post) => post.attempts.map((attempt) => attempt.status)), [[200], [200], [200]]);
    const delivered = await readNotification(api, pending.id);
    assert.deepEqual(delivery(delivered), {
      state: "delivered", reason: "250 2.0.0 OK", code: null,
      events: [["delivered", "delivered"], ["deferred", "deferred"], ["processed", null]],
    });
  }));

Deno.test("a hard bounce: the notification bounced, the guest's address marked; the next mail is skipped with that reason; staff cannot clear the mark, a manager does, and the next mail is sent", () =>
  withFixture(async ({ sql, tenant, memberOf }) => {
    await drainQueue(sql);
    const t = await tenant("sg-bounce");
    const api = t.ownerClient;
    const { stay, sent } = await sentReminder(api, {
      events: [{ event: "processed" }, {
        event: "bounce", type: "bounce", status: "5.1.1", bounce_classification: "Invalid Address",
        reason: "550 5.1.1 The email account that you tried to reach does not exist",
      }],
    });
    assert.deepEqual(delivery(sent), {
      state: "bounced", reason: "550 5.1.1 The email account that you tried to reach does not exist", code: "5.1.1",
      events: [["bounce", "bounced"], ["processed", null]],
    });
    const marked = await readGuest(api, stay.guest.id);
    assert.equal(marked.emailUndeliverableAt, sent.deliveryStateAt, "marked when the bounce happened");
    assert.equal(marked.emailUndeliverableReason, "the mail bounced: 550 5.1.1 The email account that you tried to reach does not exist");
    assert.deepEqual((await listPage<Notification>(api, "/v1/notifications", "?deliveryState=bounced")).data.map((n) => n.id), [sent.id]);

    await mail.clear();
    const skipped = await nextDelivery(api, stay, { sent: 0, skipped: 1 });
    assert.equal(skipped.status, "skipped");
    assert.equal(skipped.statusReason,
      `the guest's email address was marked undeliverable at ${marked.emailUndeliverableAt}: ${marked.emailUndeliverableReason}. ` +
        `Change the address, or clear the mark with DELETE /v1/guests/${stay.guest.id}/email-undeliverable`);
    assert.deepEqual(await mail.requests(), [], "nothing went to the marked address");

    const staff = await memberOf(t, "staff");
    const asStaff = client(staff, t.tenantId);
    await expectProblem("DELETE", MARK, await asStaff.delete(`/guests/${stay.guest.id}/email-undeliverable`), 403, "forbidden");
    assert.equal((await readGuest(api, stay.guest.id)).emailUndeliverableAt, marked.emailUndeliverableAt, "staff cleared nothing");

    const cleared = await expectStatus<Guest>("DELETE", MARK,
      await api.delete(`/guests/${stay.guest.id}/email-undeliverable`, undefined, { prefer: "return=representation" }), 200);
    assert.deepEqual([cleared.emailUndeliverableAt, cleared.emailUndeliverableReason], [null, null]);
    assert.deepEqual(await readGuest(api, stay.guest.id), cleared);

    const next = await nextDelivery(api, stay, { sent: 1, skipped: 0 });
    assert.equal(next.status, "sent");
    assert.equal(next.deliveryState, "delivered", "the next mail is sent, and delivered");
    assert.deepEqual((await mail.messages()).map((message) => message.body.personalizations[0]!.to[0]!.email), [stay.guest.email]);
  }));

Deno.test("a drop for an invalid address: the notification dropped with SendGrid's reason, the address marked; a new address clears the mark", () =>
  withFixture(async ({ sql, tenant }) => {
    await drainQueue(sql);
    const t = await tenant("sg-dropped");
    const api = t.ownerClient;
    const { stay, sent } = await sentReminder(api, { events: [{ event: "dropped", reason: "Invalid" }] });
    assert.deepEqual(delivery(sent), { state: "dropped", reason: "Invalid", code: null, events: [["dropped", "dropped"]] });
    assert.equal((await readGuest(api, stay.guest.id)).emailUndeliverableReason, "the provider dropped the mail: Invalid");

    const patched = await api.patch(`/guests/${stay.guest.id}`, { email: `fixed-${stay.guest.email}` }, { prefer: "return=representation" });
    const fixed = await expectStatus<Guest>("PATCH", GUEST, patched, 200);
    assert.deepEqual([fixed.emailUndeliverableAt, fixed.emailUndeliverableReason], [null, null], "a new address has no mark");
    const next = await nextDelivery(api, stay, { sent: 1, skipped: 0 });
    assert.equal(next.deliveryState, "delivered");
  }));

Deno.test("an unsubscribed address's drop and a blocked bounce leave the address unmarked; a spam report marks it", () =>
  withFixture(async ({ sql, tenant }) => {
    await drainQueue(sql);
    const t = await tenant("sg-kinds");
    const api = t.ownerClient;
    const dropped = await sentReminder(api, { events: [{ event: "dropped", reason: "Unsubscribed Address" }] });
    assert.equal(dropped.sent.deliveryState, "dropped");
    assert.equal((await readGuest(api, dropped.stay.guest.id)).emailUndeliverableAt, null);
    const blocked = await sentReminder(api, {
      events: [{ event: "bounce", type: "blocked", reason: "550 5.7.1 IP address blocked", status: "5.7.1" }],
    });
    assert.deepEqual(delivery(blocked.sent), {
      state: "bounced", reason: "blocked: 550 5.7.1 IP address blocked", code: "5.7.1", events: [["bounce", "bounced"]],
    });
    assert.equal((await readGuest(api, blocked.stay.guest.id)).emailUndeliverableAt, null);
    const spam = await sentReminder(api, { events: [{ event: "delivered", response: "250 OK" }, { event: "spamreport" }] });
    assert.deepEqual(delivery(spam.sent), {
      state: "spam_report", reason: null, code: null, events: [["spamreport", "spam_report"], ["delivered", "delivered"]],
    });
    assert.equal((await readGuest(api, spam.stay.guest.id)).emailUndeliverableReason, "the guest reported the mail as spam");
  }));

Deno.test("a post SendGrid sends twice is counted once; opens and clicks are events only", () =>
  withFixture(async ({ sql, tenant }) => {
    await drainQueue(sql);
    const t = await tenant("sg-duplicate");
    const { sent } = await sentReminder(t.ownerClient, {
      events: [{ event: "processed" }, { event: "delivered", response: "250 OK" }, { event: "open" }, { event: "click", url: "https://example.com/" }],
      duplicate: true,
    });
    const posts = await mail.reports();
    assert.equal(posts.length, 2, "the same post twice");
    assert.deepEqual(posts[0]!.payload, posts[1]!.payload, "with the same events");
    assert.deepEqual(delivery(sent), {
      state: "delivered", reason: "250 OK", code: null,
      events: [["click", null], ["open", null], ["delivered", "delivered"], ["processed", null]],
    });
    // The webhook's own count of the second: each event a duplicate.
    const again = await postSendGrid(posts[1]!.payload);
    await expectReceipt(again, { received: 4, duplicates: 4 });
    assert.equal((await readNotification(t.ownerClient, sent.id)).events.length, 4, "still one of each");
  }));

Deno.test("events out of order end in the state of the last that happened", () =>
  withFixture(async ({ sql, tenant }) => {
    await drainQueue(sql);
    const t = await tenant("sg-reordered");
    const { sent } = await sentReminder(t.ownerClient, {
      events: [{ event: "processed" }, { event: "deferred", response: "421 try later", attempt: "1" }, { event: "delivered", response: "250 OK" }],
      post: "reversed",
    });
    const posted = (await mail.reports()).map((post) => (post.payload as { event: string }[])[0]!.event);
    assert.deepEqual(posted, ["delivered", "deferred", "processed"], "posted last first");
    assert.deepEqual(delivery(sent), {
      state: "delivered", reason: "250 OK", code: null,
      events: [["delivered", "delivered"], ["deferred", "deferred"], ["processed", null]],
    });
  }));

Deno.test("a missing or bad signature, another key's, a tampered body and a stale or future timestamp are refused with 401 and change nothing", () =>
  withFixture(async ({ sql, tenant }) => {
    await drainQueue(sql);
    const t = await tenant("sg-signatures");
    const api = t.ownerClient;
    const { stay, sent, messageId } = await sentReminder(api);
    const about = { notificationId: sent.id, tenantId: t.tenantId, messageId, email: stay.guest.email! };
    // After the delivery the double reported (an asynchronous bounce), so it is the state once recorded.
    const bounce = [sendGridEvent(about, { event: "bounce", type: "bounce", reason: "550 no such user", status: "5.1.1", timestamp: nowSeconds() + 5 })];
    const body = JSON.stringify(bounce);
    const before = await snapshot(api, sql, sent.id, stay.guest.id);
    const now = String(nowSeconds());

    const refusals: [string, Promise<Response>][] = [
      ["no signature", postSendGrid(bounce, { signature: null })],
      ["no timestamp", postSendGrid(bounce, { timestamp: null, signature: sendGridSignature("", body) })],
      ["a signature that is not base64 DER", postSendGrid(bounce, { signature: "not-a-signature" })],
      ["another key's signature", postSendGrid(bounce, { signature: sendGridSignature(now, body, await strangerKey()), timestamp: now })],
      ["a tampered body", postSendGrid(bounce, { body: body.replace("5.1.1", "5.1.2"), signature: sendGridSignature(now, body), timestamp: now })],
      ["another timestamp than signed", postSendGrid(bounce, { timestamp: String(Number(now) - 1), signature: sendGridSignature(now, body) })],
      ["a timestamp ten minutes old", postSendGrid(bounce, { timestamp: String(nowSeconds() - 600) })],
      ["a timestamp ten minutes ahead", postSendGrid(bounce, { timestamp: String(nowSeconds() + 600) })],
      ["a timestamp that is not a number", postSendGrid(bounce, { timestamp: "yesterday" })],
    ];
    for (const [label, response] of refusals) {
      const problem = await expectInvalidSignature(await response);
      assert.ok(problem.detail.length > 0, label);
    }
    assert.deepEqual(await snapshot(api, sql, sent.id, stay.guest.id), before, "nothing changed");

    // The very same events, signed as SendGrid signs: recorded.
    await expectReceipt(await postSendGrid(bounce), { received: 1, recorded: 1 });
    assert.equal((await readNotification(api, sent.id)).deliveryState, "bounced");
    assert.notEqual((await readGuest(api, stay.guest.id)).emailUndeliverableAt, null);
  }));

Deno.test("events about no tracked message are answered 200 and recorded nowhere; one ahead of the worker's record is a 503 to send again", () =>
  withFixture(async ({ sql, tenant }) => {
    await drainQueue(sql);
    const t = await tenant("sg-unmatched");
    const api = t.ownerClient;
    const { stay, sent, messageId } = await sentReminder(api);
    const about = { notificationId: sent.id, tenantId: t.tenantId, messageId, email: stay.guest.email! };
    const before = await snapshot(api, sql, sent.id, stay.guest.id);
    const strangers = [
      sendGridEvent({ ...about, messageId: "someOtherMessageId0000" }, { event: "bounce", type: "bounce" }),
      sendGridEvent({ ...about, notificationId: crypto.randomUUID() }, { event: "bounce", type: "bounce" }),
      sendGridEvent({ ...about, tenantId: crypto.randomUUID() }, { event: "bounce", type: "bounce" }),
      { ...sendGridEvent(about, { event: "bounce" }), notification_id: undefined },
    ];
    await expectReceipt(await postSendGrid(strangers), { received: 4, unmatched: 4 });
    await expectReceipt(await postSendGrid([{ event: "delivered" }, { ...sendGridEvent(about, { event: "open" }), timestamp: "noon" }]),
      { received: 2, ignored: 2 });
    assert.deepEqual(await snapshot(api, sql, sent.id, stay.guest.id), before, "nothing changed");

    // Before the worker records SendGrid's acceptance, an event cannot be matched yet.
    await stepReservation(api, stay.reservation.id, "check-out");
    const pending = await notificationFor(api, stay.reservation.id, "checkout_summary");
    const early = [
      sendGridEvent({ ...about, notificationId: pending.id, messageId: "notYetKnown00000000000" }, { event: "processed" }),
      // Opened after the double reported the delivery (a second after it accepted the mail).
      sendGridEvent(about, { event: "open", timestamp: nowSeconds() + 5 }),
    ];
    const tooEarly = await expectProblem("POST", SENDGRID_WEBHOOK, await postSendGrid(early), 503, "report-too-early");
    assert.match(tooEarly.detail, /1 of 2 events/);
    assert.deepEqual((await readNotification(api, pending.id)).events, [], "nothing stored for the pending one");
    assert.deepEqual((await readNotification(api, sent.id)).events.map((event) => event.event), ["open", "delivered", "processed"],
      "the rest of the post was recorded");

    // Once the worker has recorded the message SendGrid accepted, the same post again is
    // answered for good: the pending one's event names another message, the open was recorded.
    assert.deepEqual(await runWorker(), summary({ read: 1, sent: 1 }));
    await expectReceipt(await postSendGrid(early), { received: 2, duplicates: 1, unmatched: 1 });
    assert.deepEqual(delivery(await readNotification(api, pending.id)).events, [["delivered", "delivered"], ["processed", null]]);
  }));

Deno.test("the SendGrid webhook refuses a body that is not SendGrid's once the signature verifies: 415, 400, 413", () =>
  withFixture(async () => {
    const form = await postSendGrid(null, { body: "a=1", contentType: "application/x-www-form-urlencoded" });
    await expectProblem("POST", SENDGRID_WEBHOOK, form, 415, "unsupported-media-type");
    await expectProblem("POST", SENDGRID_WEBHOOK, await postSendGrid(null, { body: "[{" }), 400, "malformed-json");
    await expectProblem("POST", SENDGRID_WEBHOOK, await postSendGrid({ event: "delivered" }), 400, "validation");
    await expectProblem("POST", SENDGRID_WEBHOOK, await postSendGrid([1, 2]), 400, "validation");
    await expectProblem("POST", SENDGRID_WEBHOOK, await postSendGrid([], { query: "?x=1" }), 400, "validation");
    const large = await postSendGrid(null, { body: JSON.stringify([{ event: "open", pad: "x".repeat(1024 * 1024) }]) });
    await expectProblem("POST", SENDGRID_WEBHOOK, large, 413, "payload-too-large");
    await expectReceipt(await postSendGrid([]), { received: 0 });
  }));
