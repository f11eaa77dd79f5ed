// The notification pipeline end to end on the running stack: a change through the API
// leaves a pending notification (the database's triggers), the notifications worker
// (the edge function, called as the scheduler calls it) renders it and sends it
// through SendGrid (the capture server), and the notification becomes sent. Also
// the tenant's opt-out. Every scenario drains the queue first and builds its own
// tenant; every API response is checked against the served contract.
import assert from "node:assert/strict";
import { type Client, expectStatus, type Schemas, withFixture } from "../support/api.ts";
import {
  createGuest,
  createProperty,
  createRatePlan,
  createReservation,
  createUnit,
  type Guest,
  instant,
  type Property,
  type Reservation,
  stepReservation,
  type Unit,
} from "../support/domain.ts";
import {
  drainQueue,
  eventsFor,
  expandEvents,
  expectRunWithFailures,
  jobsFor,
  listNotifications,
  mail,
  type Notification,
  notificationFor,
  partsOf,
  readNotification,
  runWorker,
  setPreference,
  summary,
  type TemplateKey,
} from "../support/notifications.ts";
import { stack } from "../support/stack.ts";

type GuestStay = { property: Property; unit: Unit; guest: Guest; reservation: Reservation };

// A confirmed three-night stay (10 to 13 March 2027, 120.00 EUR a night, two adults) at
// a property whose name needs escaping in HTML and that has every contact detail.
async function guestStay(api: Client, fields: Record<string, unknown> = {}): Promise<GuestStay> {
  const tag = crypto.randomUUID().slice(0, 8);
  const property = await createProperty(api, {
    name: `Casa & Mar ${tag}`,
    addressLine1: "Rua do Sol 12",
    city: "Lisboa",
    phone: "+351912345678",
    email: "stay@casa-mar.example",
  });
  const unit = await createUnit(api, property.id, { name: `Room ${tag}` });
  const ratePlan = await createRatePlan(api, property.id);
  const guest = await createGuest(api);
  const reservation = await createReservation(api, { propertyId: property.id, guestId: guest.id }, {
    unitId: unit.id,
    ratePlanId: ratePlan.id,
    adults: 2,
    status: "confirmed",
    ...fields,
  });
  assert.deepEqual([reservation.checkIn, reservation.checkOut, reservation.totalAmount, guest.locale], ["2027-03-10", "2027-03-13", 36000, "en"]);
  return { property, unit, guest, reservation };
}

const escaped = (value: string) =>
  value.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;").replaceAll('"', "&quot;").replaceAll("'", "&#39;");

// What the guest must receive for one notification.
type Expected = { subject: string; text: string; html: string[] };

// A pending notification as the API shows it right after the change that made it.
function expectPending(found: Notification, tenantId: string, stay: GuestStay, templateKey: TemplateKey, accessCodeId: string | null, since: number) {
  assert.deepEqual(found, {
    id: found.id,
    tenantId,
    recipientId: stay.guest.id,
    recipientType: "guest",
    templateKey,
    channel: "email",
    subject: null,
    body: "",
    status: "pending",
    statusReason: null,
    attempts: 0,
    reservationId: stay.reservation.id,
    accessCodeId,
    sentAt: null,
    deliveryState: null,
    deliveryStateAt: null,
    deliveryReason: null,
    deliveryCode: null,
    createdAt: found.createdAt,
    updatedAt: found.createdAt,
  });
  const created = Date.parse(found.createdAt);
  assert.ok(created >= since - 1000 && created <= Date.now() + 1000, `createdAt ${found.createdAt} is the moment of the change`);
}

// Runs the worker once over this one pending notification and checks the email the
// capture server got and the notification afterwards.
async function deliverOne(api: Client, tenantId: string, stay: GuestStay, pending: Notification, expected: Expected) {
  assert.deepEqual(await runWorker(), summary({ read: 1, sent: 1 }));

  const messages = await mail.messages();
  assert.equal(messages.length, 1, "exactly one email");
  const sent = messages[0]!;
  assert.equal(sent.status, 202);
  assert.ok(sent.messageId);
  const parts = partsOf(sent.body);
  assert.deepEqual(parts.to, [stay.guest.email], "to the guest");
  assert.deepEqual(sent.body.from, { email: stack.notifications.fromEmail, name: stack.notifications.fromName });
  assert.equal(parts.subject, expected.subject);
  assert.equal(parts.text, expected.text);
  for (const fragment of expected.html) assert.ok(parts.html.includes(fragment), `the HTML part has ${JSON.stringify(fragment)}`);
  assert.ok(!parts.html.includes(stay.property.name), "the property's name is escaped in the HTML part");
  assert.deepEqual(parts.customArgs, { notification_id: pending.id, tenant_id: tenantId });
  assert.deepEqual(sent.body.categories, [pending.templateKey]);
  assert.deepEqual((await mail.requests()).map((attempt) => attempt.status), [202], "one request to SendGrid");

  const after = await readNotification(api, pending.id);
  assert.ok(after.sentAt, "sentAt is set");
  assert.deepEqual(after, {
    ...pending,
    subject: expected.subject,
    body: expected.text,
    status: "sent",
    statusReason: null,
    attempts: 1,
    sentAt: after.sentAt,
    // SendGrid (its double) reports the mail processed, then delivered.
    deliveryState: "delivered",
    deliveryStateAt: after.deliveryStateAt,
    deliveryReason: "250 OK",
    deliveryCode: null,
    updatedAt: after.updatedAt,
    events: after.events,
  });
  assert.deepEqual(after.events.map((event) => [event.provider, event.event, event.deliveryState]),
    [["sendgrid", "delivered", "delivered"], ["sendgrid", "processed", null]]);
  assert.ok(Date.parse(after.sentAt) >= Date.parse(pending.createdAt), "sent after it was created");
  assert.ok(Date.parse(after.updatedAt) >= Date.parse(after.sentAt));
  return after;
}

// Nothing left: the job is gone and a further run reads nothing and sends nothing.
async function expectDone(sql: Parameters<typeof jobsFor>[0], notificationId: string) {
  assert.deepEqual(await jobsFor(sql, notificationId), [], "the job was deleted");
  assert.deepEqual(await runWorker(), summary({}));
  assert.equal((await mail.messages()).length, 1, "still exactly one email");
}

const ARRIVAL = "Wednesday, March 10, 2027";
const DEPARTURE = "Saturday, March 13, 2027";

// ---------------------------------------------------------------- the four events

Deno.test("check-in through the API: a pending checkin_reminder, then one welcome email to the guest, then sent", () =>
  withFixture(async ({ sql, tenant }) => {
    await drainQueue(sql);
    const t = await tenant("checkin-mail");
    const api = t.ownerClient;
    const stay = await guestStay(api);
    const P = stay.property.name;
    const code = stay.reservation.confirmationCode;

    const since = Date.now();
    await stepReservation(api, stay.reservation.id, "check-in");
    // The check-in left its event, and nothing else, in its own transaction; the worker
    // makes the event's notifications before it claims jobs.
    assert.deepEqual(await eventsFor(sql, stay.reservation.id),
      [{ tenantId: t.tenantId, templateKey: "checkin_reminder", reservationId: stay.reservation.id, accessCodeId: null }]);
    assert.equal((await listNotifications(api)).pagination.total, 0, "no notification before the event is expanded");
    assert.equal(await expandEvents(), 1);
    assert.deepEqual(await eventsFor(sql, stay.reservation.id), [], "the event is gone with its expansion");
    const page = await listNotifications(api);
    assert.deepEqual(page.pagination, { limit: 20, offset: 0, total: 1, hasMore: false });
    const pending = page.data[0]!;
    expectPending(pending, t.tenantId, stay, "checkin_reminder", null, since);
    assert.deepEqual(await readNotification(api, pending.id), { ...pending, events: [] });
    assert.deepEqual((await jobsFor(sql, pending.id)).map((job) => [job.readCount, job.message]),
      [[0, { notificationId: pending.id, tenantId: t.tenantId }]], "one job for it on the queue");
    assert.deepEqual(await mail.requests(), [], "nothing is sent before the worker runs");

    await deliverOne(api, t.tenantId, stay, pending, {
      subject: `Welcome to ${P}, Ana`,
      text: `Hi Ana,

Welcome to ${P}! You are checked in, and we hope you enjoy your stay.

Confirmation code: ${code}
Your unit: ${stay.unit.name}
Arrival: ${ARRIVAL}
Departure: ${DEPARTURE}, check-out by 11:00 AM
Length of stay: 3 nights
Guests: 2 adults

Need anything during your stay?
Address: Rua do Sol 12, Lisboa
Phone: +351912345678
Email: stay@casa-mar.example

${P}
`,
      html: [escaped(P), `<strong>${code}</strong>`, ARRIVAL, DEPARTURE, "Rua do Sol 12, Lisboa"],
    });
    await expectDone(sql, pending.id);
  }));

Deno.test("check-out through the API: a checkout_summary with the stay and its balance, sent once", () =>
  withFixture(async ({ sql, tenant }) => {
    await drainQueue(sql);
    const t = await tenant("checkout-mail");
    const api = t.ownerClient;
    const stay = await guestStay(api);
    const P = stay.property.name;
    const code = stay.reservation.confirmationCode;
    const payment = await api.post(`/reservations/${stay.reservation.id}/payments`, { amount: 10000, method: "cash" });
    await expectStatus("POST", "/v1/reservations/{id}/payments", payment, 201);

    await stepReservation(api, stay.reservation.id, "check-in");
    assert.deepEqual(await runWorker(), summary({ events: 1, read: 1, sent: 1 }), "the check-in's event and email");
    await mail.clear();

    const since = Date.now();
    const checkedOut = await stepReservation(api, stay.reservation.id, "check-out");
    assert.deepEqual([checkedOut.amountPaid, checkedOut.balance], [10000, 26000]);
    await expandEvents();
    const page = await listNotifications(api);
    assert.deepEqual(page.data.map((n) => [n.templateKey, n.status]), [["checkout_summary", "pending"], ["checkin_reminder", "sent"]],
      "newest first");
    const pending = page.data[0]!;
    expectPending(pending, t.tenantId, stay, "checkout_summary", null, since);

    await deliverOne(api, t.tenantId, stay, pending, {
      subject: `Thank you for staying at ${P}`,
      text: `Hi Ana,

Thank you for staying at ${P}. We hope to welcome you back soon.

Your stay
Confirmation code: ${code}
Unit: ${stay.unit.name}
Arrival: ${ARRIVAL}
Departure: ${DEPARTURE}
Length of stay: 3 nights
Guests: 2 adults

Total: €360.00
Paid: €100.00
Balance: €260.00

A balance of €260.00 is still due. ${P} will be in touch about settling it.

Questions about your stay or your bill?
Address: Rua do Sol 12, Lisboa
Phone: +351912345678
Email: stay@casa-mar.example

${P}
`,
      html: [escaped(P), code, ARRIVAL, DEPARTURE, "€360.00", "€100.00", "€260.00"],
    });
    await expectDone(sql, pending.id);
  }));

Deno.test("cancel through the API: a reservation_cancelled email with the reason, sent once", () =>
  withFixture(async ({ sql, tenant }) => {
    await drainQueue(sql);
    const t = await tenant("cancel-mail");
    const api = t.ownerClient;
    const stay = await guestStay(api);
    const P = stay.property.name;
    const code = stay.reservation.confirmationCode;

    const since = Date.now();
    const response = await api.post(`/reservations/${stay.reservation.id}/cancel`, { reason: "Flight cancelled by the airline" });
    assert.equal(await expectStatus("POST", "/v1/reservations/{id}/cancel", response, 204), undefined);
    await expandEvents();
    const page = await listNotifications(api);
    assert.equal(page.pagination.total, 1);
    const pending = page.data[0]!;
    expectPending(pending, t.tenantId, stay, "reservation_cancelled", null, since);

    await deliverOne(api, t.tenantId, stay, pending, {
      subject: `Your reservation ${code} at ${P} is cancelled`,
      text: `Hi Ana,

Your reservation at ${P} has been cancelled.

Confirmation code: ${code}
Unit: ${stay.unit.name}
Arrival: ${ARRIVAL}
Departure: ${DEPARTURE}
Reason: Flight cancelled by the airline

If you did not expect this, or have a question about a payment you made, contact ${P}:
Phone: +351912345678
Email: stay@casa-mar.example

${P}
`,
      html: [escaped(P), code, ARRIVAL, DEPARTURE, "Flight cancelled by the airline"],
    });
    await expectDone(sql, pending.id);
  }));

Deno.test("a new access code: an access_code_delivery email with the code and its window in the property's time, sent once", () =>
  withFixture(async ({ sql, tenant }) => {
    await drainQueue(sql);
    const t = await tenant("code-mail");
    const api = t.ownerClient;
    const stay = await guestStay(api);
    const P = stay.property.name;

    const since = Date.now();
    const response = await api.post(`/reservations/${stay.reservation.id}/access-codes`, { code: "482913" }, {
      prefer: "return=representation",
    });
    const accessCode = await expectStatus<Schemas["AccessCode"]>(
      "POST", "/v1/reservations/{id}/access-codes", response, 201);
    assert.deepEqual([accessCode.code, instant(accessCode.validFrom), instant(accessCode.validUntil)],
      ["482913", "2027-03-10T15:00:00.000Z", "2027-03-13T11:00:00.000Z"]);
    const pending = await notificationFor(api, stay.reservation.id, "access_code_delivery");
    expectPending(pending, t.tenantId, stay, "access_code_delivery", accessCode.id, since);
    assert.equal((await listNotifications(api)).pagination.total, 1, "nothing else was enqueued");

    await deliverOne(api, t.tenantId, stay, pending, {
      subject: `Your door code for ${P}`,
      text: `Hi Ana,

Here is your door code for ${P}, ${stay.unit.name}:

    482913

Valid from: Wed, Mar 10, 2027, 3:00 PM
Valid until: Sat, Mar 13, 2027, 11:00 AM
Times are the property's local time (Europe/Lisbon).

Address: Rua do Sol 12, Lisboa
Check-in: ${ARRIVAL}, from 3:00 PM
Check-out: ${DEPARTURE}, by 11:00 AM
Confirmation code: ${stay.reservation.confirmationCode}

Please keep this code to yourself.
Trouble at the door? Call +351912345678.

${P}
`,
      html: [escaped(P), "482913", "Wed, Mar 10, 2027, 3:00 PM", "Sat, Mar 13, 2027, 11:00 AM"],
    });
    await expectDone(sql, pending.id);
  }));

// ---------------------------------------------------------------- preferences

Deno.test("opted out of checkin_reminder by email: the check-in's notification is skipped with the reason and nothing is sent; opted back in, the next one is sent", () =>
  withFixture(async ({ sql, tenant }) => {
    await drainQueue(sql);
    const t = await tenant("opt-out");
    const api = t.ownerClient;
    const first = await guestStay(api);
    const second = await guestStay(api);

    const optedOut = await setPreference(api, { templateKey: "checkin_reminder", channel: "email", enabled: false });
    assert.deepEqual({ ...optedOut, updatedAt: "" }, { templateKey: "checkin_reminder", channel: "email", enabled: false, updatedAt: "" });

    // The check-in is skipped; the same stay's check-out (another template) is not.
    await stepReservation(api, first.reservation.id, "check-in");
    const skippedBefore = await notificationFor(api, first.reservation.id, "checkin_reminder");
    await stepReservation(api, first.reservation.id, "check-out");
    assert.deepEqual(await runWorker(), summary({ events: 1, read: 2, sent: 1, skipped: 1 }), "the check-out's event made in the run");

    const skipped = await readNotification(api, skippedBefore.id);
    assert.deepEqual(skipped, {
      ...skippedBefore,
      status: "skipped",
      statusReason: "the tenant opted out of checkin_reminder by email",
      updatedAt: skipped.updatedAt,
      events: [],
    });
    assert.equal(skipped.sentAt, null);
    assert.equal(skipped.subject, null, "a skipped notification is not rendered");
    assert.deepEqual(await jobsFor(sql, skipped.id), [], "its job is done");

    const checkout = await notificationFor(api, first.reservation.id, "checkout_summary");
    assert.equal(checkout.status, "sent");
    const messages = await mail.messages();
    assert.deepEqual(messages.map((m) => [partsOf(m.body).customArgs.notification_id, partsOf(m.body).subject]),
      [[checkout.id, `Thank you for staying at ${first.property.name}`]], "only the check-out's email");
    assert.equal((await mail.requests()).length, 1, "no request at all for the skipped one");

    // Opted back in: the next check-in is sent.
    const optedIn = await setPreference(api, { templateKey: "checkin_reminder", channel: "email", enabled: true });
    assert.equal(optedIn.enabled, true);
    await mail.clear();
    await stepReservation(api, second.reservation.id, "check-in");
    assert.deepEqual(await runWorker(), summary({ events: 1, read: 1, sent: 1 }));
    const welcome = await notificationFor(api, second.reservation.id, "checkin_reminder");
    assert.equal(welcome.status, "sent");
    const [sent, ...more] = await mail.messages();
    assert.equal(more.length, 0);
    assert.deepEqual(partsOf(sent!.body).to, [second.guest.email]);
    assert.equal(partsOf(sent!.body).customArgs.notification_id, welcome.id);
    assert.equal((await readNotification(api, skipped.id)).status, "skipped", "the skipped one stays skipped");
  }));

Deno.test("an access code revoked before the worker runs: its notification is skipped, the code never emailed", () =>
  withFixture(async ({ sql, tenant }) => {
    await drainQueue(sql);
    const t = await tenant("revoked-code");
    const api = t.ownerClient;
    const stay = await guestStay(api);
    const created = await api.post(`/reservations/${stay.reservation.id}/access-codes`, { code: "735102" }, {
      prefer: "return=representation",
    });
    const accessCode = await expectStatus<Schemas["AccessCode"]>("POST", "/v1/reservations/{id}/access-codes", created, 201);
    const revoke = await api.post(`/reservations/${stay.reservation.id}/access-codes/${accessCode.id}/revoke`);
    assert.equal(await expectStatus("POST", "/v1/reservations/{id}/access-codes/{codeId}/revoke", revoke, 204), undefined);
    const pending = await notificationFor(api, stay.reservation.id, "access_code_delivery");
    assert.equal(pending.accessCodeId, accessCode.id);

    assert.deepEqual(await runWorker(), summary({ read: 1, skipped: 1 }));
    const skipped = await readNotification(api, pending.id);
    assert.deepEqual(skipped, {
      ...pending,
      status: "skipped",
      statusReason: "the access code was revoked before delivery",
      updatedAt: skipped.updatedAt,
      events: [],
    });
    assert.deepEqual(await mail.requests(), [], "the revoked code was not sent");
    assert.deepEqual(await jobsFor(sql, pending.id), []);
  }));

Deno.test("a guest without an email address: the check-in's notification fails with the reason, nothing is sent", () =>
  withFixture(async ({ sql, tenant }) => {
    await drainQueue(sql);
    const t = await tenant("no-email");
    const api = t.ownerClient;
    const stay = await guestStay(api);
    const cleared = await api.patch(`/guests/${stay.guest.id}`, { email: null }, { prefer: "return=representation" });
    assert.equal((await expectStatus<Guest>("PATCH", "/v1/guests/{id}", cleared, 200)).email, null);
    await stepReservation(api, stay.reservation.id, "check-in");
    const pending = await notificationFor(api, stay.reservation.id, "checkin_reminder");

    expectRunWithFailures(await runWorker(), { read: 1, failed: 1 });
    const failed = await readNotification(api, pending.id);
    assert.deepEqual(failed, {
      ...pending, status: "failed", statusReason: "the guest has no email address", updatedAt: failed.updatedAt, events: [],
    });
    assert.deepEqual(await mail.requests(), []);
    assert.deepEqual(await jobsFor(sql, pending.id), []);
  }));

Deno.test("a cancelled reservation deleted before the worker runs: its notification stays, fails with the reason, nothing is sent", () =>
  withFixture(async ({ sql, tenant }) => {
    await drainQueue(sql);
    const t = await tenant("deleted-stay");
    const api = t.ownerClient;
    const stay = await guestStay(api);
    await stepReservation(api, stay.reservation.id, "cancel");
    const pending = await notificationFor(api, stay.reservation.id, "reservation_cancelled");
    const deleted = await api.delete(`/reservations/${stay.reservation.id}`);
    assert.equal(await expectStatus("DELETE", "/v1/reservations/{id}", deleted, 204), undefined);

    const orphan = await readNotification(api, pending.id);
    assert.deepEqual(orphan, { ...pending, reservationId: null, updatedAt: orphan.updatedAt, events: [] }, "it lets go of the reservation");
    expectRunWithFailures(await runWorker(), { read: 1, failed: 1 });
    const failed = await readNotification(api, pending.id);
    assert.deepEqual([failed.status, failed.statusReason, failed.sentAt], ["failed", "its reservation no longer exists", null]);
    assert.deepEqual(await mail.requests(), []);
  }));
