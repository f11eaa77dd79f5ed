// Every channel and recipient type, end to end through the gateway: an event fans out one
// notification per (recipient, channel), the worker function delivers each one through its
// channel's double (SendGrid, the SMS provider, a Web Push service) or into the inbox, and
// the tenant's preferences skip any pair at delivery.
import assert from "node:assert/strict";
import type postgres from "postgres";
import { type Client, client, expectStatus, listPage, representation, type Schemas, withFixture } from "../support/api.ts";
import { createStay, stepReservation, type Stay } from "../support/domain.ts";
import {
  deliverNotice,
  drainQueue,
  expandEvents,
  expectRunWithFailures,
  jobsFor,
  listNotifications,
  mail,
  type Notification,
  partsOf,
  runWorker,
  setPreference,
  sms,
  summary,
} from "../support/notifications.ts";
import { decryptPush, newBrowserSubscription, pushService, register } from "../support/push.ts";
import { smsSegments } from "../../src/notifications/sms-text.ts";
import { renderCheckInAlert } from "../../src/notifications/staff-text.ts";
import type { TestUser } from "../support/session.ts";

const PHONE = "+351912345678";

type InboxMessage = Schemas["InboxMessage"];

// A confirmed stay whose guest has `phone` (or none).
async function stayWithPhone(api: Client, phone: string | null): Promise<Stay> {
  const stay = await createStay(api, { status: "confirmed" });
  if (phone === null) return stay;
  const response = await api.patch(`/guests/${stay.guest.id}`, { phone }, representation);
  const guest = await expectStatus<Stay["guest"]>("PATCH", "/v1/guests/{id}", response, 200);
  return { ...stay, guest };
}

// The reservation's notifications, as (template, recipient type, channel) triples, sorted.
// What the reservation's events reached, once the worker's step that makes them into
// notifications has run.
async function fannedOut(api: Client, reservationId: string): Promise<Notification[]> {
  await expandEvents();
  const page = await listNotifications(api, `?reservationId=${reservationId}&limit=100`);
  return page.data;
}

const shape = (notifications: Notification[]) =>
  notifications.map((n) => `${n.templateKey}/${n.recipientType}/${n.channel}${n.recipientId ? "" : "/nobody"}`).sort();

const inbox = (api: Client, query = "") => listPage<InboxMessage>(api, "/v1/inbox", query);

async function unreadCount(api: Client): Promise<number> {
  const body = await expectStatus<{ unread: number }>("GET", "/v1/inbox/unread-count", await api.get("/inbox/unread-count"), 200);
  return body.unread;
}

async function subscribeBrowser(api: Client) {
  const { token, endpoint } = pushService.endpoint();
  const browser = newBrowserSubscription(endpoint);
  const stored = await register(api, browser.subscription, 201);
  return { token, browser, stored };
}

Deno.test("a guest's SMS: created only where the tenant opted in and the guest has a phone; its own short text, one segment", () =>
  withFixture(async ({ sql, tenant }) => {
    await drainQueue(sql);
    const t = await tenant("sms-fan-out");
    const api = t.ownerClient;

    // Not opted in: email only (the tenant has no staff to alert).
    const before = await stayWithPhone(api, PHONE);
    await stepReservation(api, before.reservation.id, "check-in");
    assert.deepEqual(shape(await fannedOut(api, before.reservation.id)), ["checkin_reminder/guest/email"]);

    // Opted in: email and SMS, for a guest with a phone.
    await setPreference(api, { templateKey: "checkin_reminder", channel: "sms", enabled: true });
    const withPhone = await stayWithPhone(api, PHONE);
    await stepReservation(api, withPhone.reservation.id, "check-in");
    assert.deepEqual(shape(await fannedOut(api, withPhone.reservation.id)), [
      "checkin_reminder/guest/email", "checkin_reminder/guest/sms",
    ]);

    // Opted in, but the guest has no phone: no SMS notification at all.
    const noPhone = await stayWithPhone(api, null);
    await stepReservation(api, noPhone.reservation.id, "check-in");
    assert.deepEqual(shape(await fannedOut(api, noPhone.reservation.id)), ["checkin_reminder/guest/email"]);

    // Three check-ins: three guest emails, one SMS.
    assert.deepEqual(await runWorker(), summary({ read: 4, sent: 4 }));
    const texts = await sms.messages();
    assert.equal(texts.length, 1, "one text message");
    const text = texts[0]!.params;
    assert.equal(text.To, PHONE);
    assert.ok(text.Body!.includes(withPhone.reservation.confirmationCode), text.Body);
    assert.ok(text.Body!.includes(withPhone.property.name), text.Body);
    const emails = (await mail.messages()).map((m) => partsOf(m.body));
    const emailToGuest = emails.find((e) => e.to.includes(withPhone.guest.email!));
    assert.ok(emailToGuest, "the guest's email went too");
    assert.notEqual(text.Body, emailToGuest.text, "the SMS is not the email's text");
    assert.deepEqual(smsSegments(text.Body!), { ...smsSegments(text.Body!), encoding: "GSM-7", segments: 1 });

    const [smsNotification] = (await fannedOut(api, withPhone.reservation.id)).filter((n) => n.channel === "sms");
    assert.equal(smsNotification!.status, "sent");
    assert.equal(smsNotification!.body, text.Body);
    assert.equal(smsNotification!.subject, null);
  }));

Deno.test("a check-in reaches every staff member in-app (user), not owners or admins; the inbox lists, counts and marks only their own", () =>
  withFixture(async ({ sql, tenant, memberOf }) => {
    await drainQueue(sql);
    const t = await tenant("check-in-alerts");
    const staff = await memberOf(t, "staff");
    const frontDesk = await memberOf(t, "staff", "front-desk");
    const admin = await memberOf(t, "admin");
    const staffApi = client(staff, t.tenantId);
    const frontDeskApi = client(frontDesk, t.tenantId);
    const adminApi = client(admin, t.tenantId);
    const stay = await stayWithPhone(t.ownerClient, null);
    await stepReservation(t.ownerClient, stay.reservation.id, "check-in");

    const alerts = (await fannedOut(t.ownerClient, stay.reservation.id)).filter((n) => n.templateKey === "check_in_alerts");
    assert.deepEqual(alerts.map((n) => [n.recipientId, n.recipientType, n.channel]).sort(), [
      [staff.id, "user", "in_app"], [frontDesk.id, "user", "in_app"],
    ].sort());
    assert.equal(await unreadCount(staffApi), 0, "nothing lands before the worker delivers it");

    assert.deepEqual(await runWorker(), summary({ read: 3, sent: 3 }));
    assert.deepEqual((await inbox(adminApi)).data, [], "an admin gets no check-in alert");
    assert.deepEqual((await inbox(t.ownerClient)).data, [], "nor does the owner");
    const guestName = `${stay.guest.firstName} ${stay.guest.lastName}`;
    for (const [who, api] of [[staff, staffApi], [frontDesk, frontDeskApi]] as [TestUser, Client][]) {
      const page = await inbox(api);
      assert.equal(page.data.length, 1, `${who.email} has one message`);
      const [message] = page.data;
      const alert = alerts.find((n) => n.recipientId === who.id)!;
      assert.equal(message!.notificationId, alert.id);
      assert.equal(message!.templateKey, "check_in_alerts");
      assert.ok(message!.title.includes(guestName), message!.title);
      assert.equal(message!.url, `/reservations/${stay.reservation.id}`);
      assert.equal(message!.readAt, null);
      assert.equal(await unreadCount(api), 1);
    }
    const sentAlerts = (await fannedOut(t.ownerClient, stay.reservation.id)).filter((n) => n.templateKey === "check_in_alerts");
    assert.ok(sentAlerts.every((n) => n.status === "sent" && n.sentAt !== null), "in_app is sent when it lands");

    // One read, then all read; marks stick and are only the caller's.
    const [staffMessage] = (await inbox(staffApi)).data;
    const [otherMessage] = (await inbox(frontDeskApi)).data;
    const read = await expectStatus<InboxMessage>("POST", "/v1/inbox/{id}/read", await staffApi.post(`/inbox/${staffMessage!.id}/read`, undefined, representation), 200);
    assert.ok(read.readAt);
    const again = await expectStatus<InboxMessage>("POST", "/v1/inbox/{id}/read", await staffApi.post(`/inbox/${staffMessage!.id}/read`, undefined, representation), 200);
    assert.equal(again.readAt, read.readAt, "read once, at the first time");
    assert.equal(await unreadCount(staffApi), 0);
    assert.deepEqual((await inbox(staffApi, "?unread=true")).data, []);
    // Someone else's message is not the staff member's to see or mark.
    assert.equal((await staffApi.post(`/inbox/${otherMessage!.id}/read`)).status, 404);
    assert.equal(await unreadCount(frontDeskApi), 1);
    const all = await expectStatus<{ marked: number }>("POST", "/v1/inbox/read-all", await frontDeskApi.post("/inbox/read-all"), 200);
    assert.equal(all.marked, 1);
    assert.equal(await unreadCount(frontDeskApi), 0);
    const none = await expectStatus<{ marked: number }>("POST", "/v1/inbox/read-all", await staffApi.post("/inbox/read-all"), 200);
    assert.equal(none.marked, 0, "nothing left unread for the first");

    // A run with nothing new delivers nothing twice.
    assert.deepEqual(await runWorker(), summary({}));
    assert.equal((await inbox(staffApi)).data.length, 1);
  }));

// What the front desk should read about a checked-in stay, from the API's own account of it.
function expectedAlert(stay: Stay, checkedIn: Stay["reservation"]) {
  return renderCheckInAlert({
    locale: "en",
    guest: { firstName: stay.guest.firstName, lastName: stay.guest.lastName },
    property: { name: stay.property.name, timezone: stay.property.timezone },
    unit: { name: stay.unit.name },
    reservation: {
      id: checkedIn.id, confirmationCode: checkedIn.confirmationCode, checkIn: checkedIn.checkIn, checkOut: checkedIn.checkOut,
      adults: checkedIn.adults, children: checkedIn.children, balance: checkedIn.balance, currency: checkedIn.currency,
    },
    checkedInAt: checkedIn.checkedInAt!,
  });
}

Deno.test("the worker writes a check-in's in-app alerts into the inboxes as it makes the event's notifications, with no job each, saying what a job would", () =>
  withFixture(async ({ sql, tenant, memberOf }) => {
    await drainQueue(sql);
    const t = await tenant("alerts-at-expansion");
    const staff = await memberOf(t, "staff");
    const frontDesk = await memberOf(t, "staff", "front-desk");
    const apis = [client(staff, t.tenantId), client(frontDesk, t.tenantId)];
    const members = [staff, frontDesk];
    const viaWorker = await stayWithPhone(t.ownerClient, null);
    const viaWorkerCheckedIn = await stepReservation(t.ownerClient, viaWorker.reservation.id, "check-in");

    // One job: the guest's email. The alerts were sent as the event was made.
    assert.deepEqual(await runWorker(), summary({ events: 1, read: 1, sent: 3 }));
    const alerts = (await listNotifications(t.ownerClient, `?reservationId=${viaWorker.reservation.id}&templateKey=check_in_alerts`)).data;
    assert.deepEqual(alerts.map((n) => [n.recipientId, n.channel, n.status]).sort(),
      [[staff.id, "in_app", "sent"], [frontDesk.id, "in_app", "sent"]].sort());
    const expected = expectedAlert(viaWorker, viaWorkerCheckedIn);
    for (const alert of alerts) {
      assert.ok(alert.sentAt, "sent when it landed");
      const [created, sent, updated] = [alert.createdAt, alert.sentAt, alert.updatedAt].map((at) => Date.parse(at!));
      assert.ok(updated! >= sent! && sent! > created!, `sent and last changed after the check-in: ${JSON.stringify(alert)}`);
      assert.equal(alert.subject, expected.title);
      assert.equal(alert.body, expected.body);
    }
    for (const [index, api] of apis.entries()) {
      const [message, ...others] = (await inbox(api)).data;
      assert.deepEqual(others, [], "one message each");
      assert.equal(message!.notificationId, alerts.find((n) => n.recipientId === members[index]!.id)!.id);
      assert.deepEqual({ title: message!.title, body: message!.body, url: message!.url }, expected);
    }

    // The same check-in made into notifications in SQL alone: the alerts go by jobs, and say
    // the same of their stay.
    const viaJobs = await stayWithPhone(t.ownerClient, null);
    const viaJobsCheckedIn = await stepReservation(t.ownerClient, viaJobs.reservation.id, "check-in");
    assert.equal(await expandEvents(), 1);
    assert.deepEqual(await runWorker(), summary({ read: 3, sent: 3 }));
    const expectedByJob = expectedAlert(viaJobs, viaJobsCheckedIn);
    for (const api of apis) {
      const [message] = (await inbox(api)).data;
      assert.deepEqual({ title: message!.title, body: message!.body, url: message!.url }, expectedByJob);
    }
    assert.deepEqual(await runWorker(), summary({}), "nothing is left to deliver");
  }));

Deno.test("a check-in reaches a subscribed member's browser by Web Push: VAPID-signed, and the payload decrypts with the browser's keys", () =>
  withFixture(async ({ sql, tenant, memberOf }) => {
    await drainQueue(sql);
    const t = await tenant("check-in-push");
    const staff = await memberOf(t, "staff");
    const staffApi = client(staff, t.tenantId);
    const { token, browser, stored } = await subscribeBrowser(staffApi);
    const stay = await stayWithPhone(t.ownerClient, null);
    await stepReservation(t.ownerClient, stay.reservation.id, "check-in");

    const pushes = (await fannedOut(t.ownerClient, stay.reservation.id)).filter((n) => n.channel === "push");
    assert.deepEqual(pushes.map((n) => [n.recipientId, n.recipientType, n.templateKey]), [[staff.id, "user", "check_in_alerts"]],
      "push only for the member who subscribed");

    assert.deepEqual(await runWorker(), summary({ read: 3, sent: 3 }));
    const received = await pushService.messages(token);
    assert.equal(received.length, 1, "one push");
    assert.equal(received[0]!.contentEncoding, "aes128gcm");
    const payload = JSON.parse(decryptPush(received[0]!.bodyBase64, browser.keys));
    const [message] = (await inbox(staffApi)).data;
    assert.deepEqual(payload, {
      title: message!.title, body: message!.body, url: `/reservations/${stay.reservation.id}`,
      notificationId: pushes[0]!.id, tenantId: t.tenantId, templateKey: "check_in_alerts",
    });
    const [sent] = (await fannedOut(t.ownerClient, stay.reservation.id)).filter((n) => n.channel === "push");
    assert.equal(sent!.status, "sent");
    const [subscription] = (await listPage<Schemas["PushSubscription"]>(staffApi, "/v1/push/subscriptions")).data;
    assert.equal(subscription!.id, stored.id);
    assert.ok(subscription!.lastAcceptedAt, "the subscription's last acceptance is recorded");
  }));

Deno.test("a push subscription its service calls gone (410) is removed and the push skipped; 429 is retried later", () =>
  withFixture(async ({ sql, tenant, memberOf }) => {
    await drainQueue(sql);
    const t = await tenant("push-gone");
    const staff = await memberOf(t, "staff");
    const staffApi = client(staff, t.tenantId);
    const gone = await subscribeBrowser(staffApi);
    await pushService.script(gone.token, { status: 410, body: "" });
    const first = await stayWithPhone(t.ownerClient, null);
    await stepReservation(t.ownerClient, first.reservation.id, "check-in");
    // The email and the push by jobs; the in-app alert landed as the event was made.
    assert.deepEqual(await runWorker(), summary({ events: 1, read: 2, sent: 2, skipped: 1 }));
    const [skipped] = (await fannedOut(t.ownerClient, first.reservation.id)).filter((n) => n.channel === "push");
    assert.equal(skipped!.status, "skipped");
    assert.match(skipped!.statusReason ?? "", /gone \(410\)/);
    assert.deepEqual((await listPage(staffApi, "/v1/push/subscriptions")).data, [], "the gone subscription is removed");

    // A throttled push service: the push waits for its retry, nothing is removed.
    const throttled = await subscribeBrowser(staffApi);
    await pushService.script(throttled.token, { status: 429, headers: { "retry-after": "120" }, body: "" });
    const second = await stayWithPhone(t.ownerClient, null);
    await stepReservation(t.ownerClient, second.reservation.id, "check-in");
    assert.deepEqual(await runWorker(), summary({ events: 1, read: 2, sent: 2, retried: 1 }));
    const [waiting] = (await fannedOut(t.ownerClient, second.reservation.id)).filter((n) => n.channel === "push");
    assert.equal(waiting!.status, "pending");
    const [job] = await jobsFor(sql, waiting!.id);
    assert.ok(job!.secondsLeft >= 110, `the retry waits for Retry-After: ${job!.secondsLeft}s`);
    assert.equal((await listPage(staffApi, "/v1/push/subscriptions")).data.length, 1);
  }));

// The next moment after now at which `zone` has just passed 23:00 and the tenant existed.
async function tonightAfterTheHour(sql: postgres.Sql, zone: string): Promise<Date> {
  const [row] = await sql<{ at: Date }[]>`
    select ((((now() at time zone ${zone}) - interval '23 hours')::date + 1 + interval '23 hours 5 minutes')
            at time zone ${zone}) as at`;
  return row!.at;
}

Deno.test("the nightly summary: one email per owner and admin with the night's figures, and never a second for the same night", () =>
  withFixture(async ({ sql, tenant, memberOf }) => {
    await drainQueue(sql);
    const t = await tenant("nightly");
    const admin = await memberOf(t, "admin");
    await memberOf(t, "staff");
    const api = t.ownerClient;
    const stay = await createStay(api, { status: "confirmed" });
    const at = await tonightAfterTheHour(sql, stay.property.timezone);
    const night = await sql<{ night: string }[]>`select ((${at}::timestamptz at time zone ${stay.property.timezone})::date)::text as night`;
    // Tonight's arrival for two nights, priced again from its plan (120.00 a night), checked
    // in with its balance unpaid, and an open task.
    await sql`update public.reservations set check_in = ${night[0]!.night}::date, check_out = ${night[0]!.night}::date + 2
              where id = ${stay.reservation.id}`;
    await stepReservation(api, stay.reservation.id, "check-in");
    await expectStatus("POST", "/v1/tasks", await api.post("/tasks", { propertyId: stay.property.id, type: "maintenance", title: "Fix the tap" }, representation), 201);
    await runWorker();
    await mail.clear();

    const [first] = await sql<{ recorded: number }[]>`select private.enqueue_nightly_summaries(${at}) as recorded`;
    const [second] = await sql<{ recorded: number }[]>`select private.enqueue_nightly_summaries(${at}) as recorded`;
    const [later] = await sql<{ recorded: number }[]>`
      select private.enqueue_nightly_summaries(${at}::timestamptz + interval '3 hours') as recorded`;
    assert.ok(first!.recorded >= 1, "this tenant's night was recorded");
    assert.equal(second!.recorded, 0, "a second run records nothing");
    assert.equal(later!.recorded, 0, "nor does a later one that night");

    const summaries = (await listNotifications(api, "?templateKey=nightly_summary")).data;
    assert.deepEqual(summaries.map((n) => [n.recipientId, n.recipientType, n.channel]).sort(),
      [[t.owner.id, "admin", "email"], [admin.id, "admin", "email"]].sort(), "owners and admins, once each; not staff");

    await runWorker();
    const sent = (await mail.messages()).map((m) => partsOf(m.body)).filter((m) => m.customArgs.tenant_id === t.tenantId);
    assert.deepEqual(sent.map((m) => m.to[0]).sort(), [t.owner.email, admin.email].sort());
    const { subject, text } = sent[0]!;
    assert.ok(subject.includes(night[0]!.night) || subject.includes(t.name), subject);
    assert.ok(text.includes(stay.property.name), text);
    assert.match(text, /Arrivals\D*1/i);
    assert.match(text, /in[- ]house\D*1/i);
    assert.ok(text.includes("240.00") || text.includes("240,00"), `the unpaid balance: ${text}`);
    assert.match(text, /open tasks\D*1/i);
  }));

Deno.test("preferences skip each channel at delivery: sms, in_app, push and email", () =>
  withFixture(async ({ sql, tenant, memberOf }) => {
    await drainQueue(sql);
    const t = await tenant("skips");
    const staff = await memberOf(t, "staff");
    const staffApi = client(staff, t.tenantId);
    const { token } = await subscribeBrowser(staffApi);
    const api = t.ownerClient;
    await setPreference(api, { templateKey: "checkin_reminder", channel: "sms", enabled: true });
    const stay = await stayWithPhone(api, PHONE);
    await stepReservation(api, stay.reservation.id, "check-in");
    await expandEvents();
    // Fanned out while every pair was on; switched off before delivery.
    for (const [templateKey, channel] of [
      ["checkin_reminder", "email"], ["checkin_reminder", "sms"], ["check_in_alerts", "in_app"], ["check_in_alerts", "push"],
    ] as const) {
      await setPreference(api, { templateKey, channel, enabled: false });
    }
    assert.deepEqual(await runWorker(), summary({ read: 4, skipped: 4 }));
    for (const n of await fannedOut(api, stay.reservation.id)) {
      assert.equal(n.status, "skipped", `${n.templateKey} by ${n.channel}`);
      assert.equal(n.statusReason, `the tenant opted out of ${n.templateKey} by ${n.channel}`);
    }
    assert.deepEqual(await mail.requests(), []);
    assert.deepEqual(await sms.requests(), []);
    assert.deepEqual(await pushService.requests(token), []);
    assert.deepEqual((await inbox(staffApi)).data, []);
  }));

Deno.test("a notification that fails for good leaves a system notice in the owners' and admins' inboxes, not staff's", () =>
  withFixture(async ({ sql, tenant, memberOf }) => {
    await drainQueue(sql);
    const t = await tenant("system-notice");
    const staff = await memberOf(t, "staff");
    const api = t.ownerClient;
    await setPreference(api, { templateKey: "checkin_reminder", channel: "sms", enabled: true });
    const stay = await stayWithPhone(api, PHONE);
    // The SMS provider refuses the number for good.
    await sms.script({ status: 400, body: { code: 21211, message: "The 'To' number is not a valid phone number." } });
    await stepReservation(api, stay.reservation.id, "check-in");
    // The email and the SMS by jobs; the staff's in-app alert landed as the event was made.
    expectRunWithFailures(await runWorker(), { events: 1, read: 2, sent: 2, failed: 1 });

    const notices = (await listNotifications(api, "?templateKey=delivery_failed")).data;
    assert.equal(notices.length, 1);
    assert.equal(notices[0]!.recipientType, "system");
    assert.equal(notices[0]!.recipientId, null);
    assert.equal(notices[0]!.channel, "in_app");
    await deliverNotice(notices[0]!);
    const ownerInbox = (await inbox(api, "?templateKey=delivery_failed")).data;
    assert.equal(ownerInbox.length, 1);
    assert.ok(ownerInbox[0]!.body.includes("not a valid phone number"), ownerInbox[0]!.body);
    const staffInbox = (await inbox(client(staff, t.tenantId))).data.map((m) => m.templateKey);
    assert.deepEqual(staffInbox, ["check_in_alerts"], "staff get the alert, not the notice");
  }));
