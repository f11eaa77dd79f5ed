// The fixture the sweeps over every operation of the served OpenAPI document share:
// the operations with their access and tenant scope, tenant A with one of everything,
// the path templates filled with A's ids, and a valid body per operation. An operation
// with a request body and no entry in bodiesFor, a path parameter fill does not know,
// or a new kind of access fails the sweep that meets it.
import assert from "node:assert/strict";
import { type Client, client, expectStatus, listPage, representation, type Schemas, type TenantFixture, unique } from "./api.ts";
import type { Fixture } from "./api.ts";
import { createGuest, createProperty, createRatePlan, createReservation, createUnit } from "./domain.ts";
import { deliverToInbox } from "./inbox.ts";
import { issueApiKey } from "./integration.ts";
import { expandEvents } from "./notifications.ts";
import { browserSubscription, register, type SubscriptionRegistration } from "./push.ts";
import { openApiDocument } from "./openapi.ts";
import type { TestUser } from "./session.ts";

export type Access = "public" | "session" | "member" | "manager" | "integration" | "webhook";
export type Operation = {
  operationId: string;
  requestBody?: unknown;
  parameters?: { $ref?: string; name?: string; in?: string }[];
  "x-access": Access;
};
type Document = { paths: Record<string, Record<string, Operation>> };

// Where the tenant comes from: none (session), the x-tenant-id header, the path, an API
// key, or the provider's signed report (a webhook: the notification it names).
export type Scope = "public" | "session" | "header" | "path" | "key" | "signature";
export type Probe = { method: string; template: string; operation: Operation; access: Access; scope: Scope };

const ACCESS: readonly Access[] = ["public", "session", "member", "manager", "integration", "webhook"];

// Every operation of the served document, with its access and where its tenant comes from.
export async function operations(): Promise<Probe[]> {
  const document = await openApiDocument() as unknown as Document;
  const probes: Probe[] = [];
  for (const [template, byMethod] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(byMethod)) {
      const access = operation["x-access"];
      assert.ok(ACCESS.includes(access), `${method} ${template}: unknown x-access ${access}: teach the sweeps about it`);
      const scope: Scope = access === "public" || access === "session"
        ? access
        : access === "integration"
        ? "key"
        : access === "webhook"
        ? "signature"
        : template.startsWith("/v1/tenants/{tenantId}")
        ? "path"
        : "header";
      const parameters = operation.parameters ?? [];
      const takesHeader = parameters.some((parameter) => parameter.$ref === "#/components/parameters/TenantId");
      assert.equal(takesHeader, scope === "header", `${method} ${template}: the document's x-tenant-id parameter`);
      probes.push({ method: method.toUpperCase(), template, operation, access, scope });
    }
  }
  return probes;
}

// The fixtures of tenant A the path templates are filled with.
export type Ids = {
  tenantId: string;
  userId: string;
  codeId: string;
  byCollection: Record<string, string>;
};

// A path template with A's ids, as a path under /v1.
// The query a route cannot do without, so that a probe reaches its resource (or its 404),
// or the refusal of who asks.
const requiredQueries: Record<string, (ids: Ids) => string> = {
  "/v1/rate-plans/{id}/calendar": () => "?from=2027-01-01&to=2027-01-31",
  "/v1/external/properties/{id}/ari": () => "?from=2027-01-01&to=2027-01-31",
  "/v1/availability": (ids) => `?propertyId=${ids.byCollection.properties}&arrival=2027-01-01&departure=2027-01-04`,
};

export function fill(template: string, ids: Ids): string {
  const path = template
    .replace(/\/([a-z-]+)\/\{id\}/, (_, collection: string) => {
      const id = ids.byCollection[collection];
      assert.ok(id, `no fixture for /${collection}/{id}: add one to world() in test/support/sweep.ts`);
      return `/${collection}/${id}`;
    })
    .replace("{tenantId}", ids.tenantId)
    .replace("{userId}", ids.userId)
    .replace("{codeId}", ids.codeId)
    .replace(/^\/v1/, "");
  assert.ok(!path.includes("{"), `${template}: a path parameter fill() does not know: add it`);
  return path + (requiredQueries[template]?.(ids) ?? "");
}

// A valid body per operation, so that no answer of a sweep can be a 400 about the body.
export function bodiesFor(
  f: {
    propertyId: string;
    unitId: string;
    roomTypeId: string;
    guestId: string;
    ratePlanId: string;
    email: string;
    browser: SubscriptionRegistration;
  },
): Record<string, unknown> {
  return {
    createTenant: { name: unique("Never created") },
    updateTenant: { name: "Renamed by a probe" },
    addMember: { email: f.email, role: "staff" },
    changeMemberRole: { role: "admin" },
    createProperty: { name: "Probe House", timezone: "Europe/Lisbon", currency: "EUR" },
    updateProperty: { city: "Elsewhere" },
    createRoomType: { propertyId: f.propertyId, code: "PROBE", name: "Probe room", maxOccupancy: 2 },
    updateRoomType: { name: "Renamed by a probe" },
    createUnit: { propertyId: f.propertyId, name: "Probe room", type: "room", capacity: 2 },
    updateUnit: { name: "Moved" },
    createUnitBlock: { unitId: f.unitId, startsOn: "2027-10-01", endsOn: "2027-10-03", reason: "Probe" },
    updateUnitBlock: { reason: "changed by a probe" },
    createRatePlan: { propertyId: f.propertyId, name: "Probe", code: "PROBE", currency: "EUR", nightlyPrice: 5000 },
    updateRatePlan: { name: "Cheaper" },
    setRateCalendar: { changes: [{ ratePlanId: f.ratePlanId, from: "2027-11-01", to: "2027-11-07", price: 9900 }] },
    createGuest: { firstName: "Pro", lastName: "Be", email: "probe@guest.example" },
    updateGuest: { notes: "changed by a probe" },
    createReservation: {
      propertyId: f.propertyId, unitId: f.unitId, guestId: f.guestId, ratePlanId: f.ratePlanId,
      checkIn: "2027-09-01", checkOut: "2027-09-03",
    },
    updateReservation: { notes: "changed by a probe" },
    cancelReservation: { reason: "the guest called" },
    recordPayment: { amount: 100, method: "cash" },
    createPaymentLink: {},
    createAccessCode: {},
    createTask: { propertyId: f.propertyId, unitId: f.unitId, type: "maintenance", title: "Probe task" },
    updateTask: { title: "changed by a probe" },
    changeTaskStatus: { status: "in_progress" },
    setNotificationPreference: { templateKey: "checkout_summary", channel: "email", enabled: false },
    createApiKey: { name: "Probe integration", propertyId: f.propertyId },
    createCalendarFeed: { unitId: f.unitId, name: "Probe room's calendar" },
    updateCalendarFeed: { name: "Renamed by a probe" },
    createCalendarImport: { unitId: f.unitId, name: "Probe's calendar", url: "https://calendars.example.com/probe.ics" },
    updateCalendarImport: { name: "Renamed by a probe" },
    registerPushSubscription: f.browser,
    createWebhookSubscription: { url: "https://probe.example.com/other" },
    updateWebhookSubscription: { description: "changed by a probe" },
    rotateWebhookSecret: {},
    recordExternalPayment: { amount: 100, currency: "EUR", method: "card", externalReference: unique("probe") },
    createChannelBooking: {
      roomTypeId: f.roomTypeId, ratePlanId: f.ratePlanId, checkIn: "2027-12-01", checkOut: "2027-12-03", channel: "Probe",
      externalReference: unique("probe"), guest: { firstName: "Pro", lastName: "Be" },
    },
    changeChannelBooking: { notes: "changed by a probe" },
    cancelChannelBooking: { reason: "the channel cancelled" },
  };
}

// The body to send with `probe`: none when it takes none.
export function bodyOf(bodies: Record<string, unknown>, probe: Probe): unknown {
  const { operationId, requestBody } = probe.operation;
  if (requestBody === undefined) return undefined;
  assert.ok(operationId in bodies, `no body for ${operationId}: add one to bodiesFor() in test/support/sweep.ts`);
  return bodies[operationId];
}

// API keys' secrets: A's for the fixture property, A's for another property of A, B's for B's.
export type Keys = { a: string; sibling: string; b: string };

export type World = {
  a: TenantFixture & { ownerClient: Client };
  b: TenantFixture & { ownerClient: Client };
  keys: Keys;
  outsider: TestUser; // the owner of tenant B, a member of no tenant A
  staff: TestUser;
  ids: Ids;
  bodies: Record<string, unknown>;
  probes: Probe[];
};

// Tenant A with one of everything (created by its owner), a staff member of A, and
// tenant B with its owner.
export async function world(fixture: Fixture): Promise<World> {
  const a = await fixture.tenant("target");
  const b = await fixture.tenant("outsider");
  const owner = a.ownerClient;
  const staff = await fixture.memberOf(a, "staff");

  const made = async (path: string, template: string, body: unknown) => {
    const response = await owner.post(path, body, representation);
    return (await expectStatus<{ id: string }>("POST", template, response, 201)).id;
  };
  const property = await createProperty(owner);
  const unit = await createUnit(owner, property.id, { type: "room" });
  const unitBlock = await made("/unit-blocks", "/v1/unit-blocks", {
    unitId: unit.id, startsOn: "2027-05-01", endsOn: "2027-05-03", reason: "New carpet",
  });
  const ratePlan = await createRatePlan(owner, property.id, { nightlyPrice: 9000 });
  const guest = await createGuest(owner);
  const reservation = await createReservation(owner, { propertyId: property.id, guestId: guest.id }, {
    unitId: unit.id, ratePlanId: ratePlan.id, checkIn: "2027-03-01", checkOut: "2027-03-03", status: "confirmed",
  });
  const payment = await made(`/reservations/${reservation.id}/payments`, "/v1/reservations/{id}/payments", {
    amount: 1000, method: "card",
  });
  const paymentLink = await made(`/reservations/${reservation.id}/payment-link`, "/v1/reservations/{id}/payment-link", {});
  const accessCode = await made(`/reservations/${reservation.id}/access-codes`, "/v1/reservations/{id}/access-codes", {});
  const task = await made("/tasks", "/v1/tasks", {
    propertyId: property.id, unitId: unit.id, type: "maintenance", title: "Fix the tap",
  });
  // Keys that may do everything an integration may, so that every refusal a sweep sees is
  // about whose data it names, never about the key's scopes.
  const everyScope = { scopes: ["reservations:read", "reservations:write", "payments:write", "ari:read"] };
  const apiKey = await issueApiKey(owner, property.id, everyScope);
  const calendarFeed = await made("/calendar-feeds", "/v1/calendar-feeds", { unitId: unit.id, name: "Room 1" });
  const calendarImport = await made("/calendar-imports", "/v1/calendar-imports", {
    unitId: unit.id, name: "Airbnb", url: "https://calendars.example.com/listing/4412.ics",
  });
  const sibling = await issueApiKey(owner, (await createProperty(owner)).id, everyScope);
  const theirs = await issueApiKey(b.ownerClient, (await createProperty(b.ownerClient)).id, everyScope);
  // The door code's delivery, made from its event as the worker makes it.
  await expandEvents();
  const notices = await listPage<Schemas["Notification"]>(owner, "/v1/notifications", `?reservationId=${reservation.id}`);
  assert.ok(notices.data[0], "the door code's notification");
  const notification = notices.data[0].id;
  // A message in the staff member's inbox: only its own user may mark it, so the sweep that
  // acts as staff can, and every other caller gets the 404 of an unknown message.
  const inboxMessage = (await deliverToInbox(fixture.sql, a.tenantId, staff.id)).id;
  // The staff member's browser, for the same reason.
  const subscription = (await register(client(staff, a.tenantId), await browserSubscription(), 201)).id;
  // A webhook subscription, and a delivery of its test event (never posted: no worker runs here).
  const webhookSubscription = await made("/webhook-subscriptions", "/v1/webhook-subscriptions", {
    url: "https://probe.example.com/hooks", enabled: false,
  });
  const webhookDelivery = (await expectStatus<{ deliveryId: string }>("POST", "/v1/webhook-subscriptions/{id}/test",
    await owner.post(`/webhook-subscriptions/${webhookSubscription}/test`), 202)).deliveryId;

  return {
    a,
    b,
    outsider: b.owner,
    staff,
    keys: { a: apiKey.secret, sibling: sibling.secret, b: theirs.secret },
    ids: {
      tenantId: a.tenantId,
      userId: a.owner.id,
      codeId: accessCode,
      byCollection: {
        properties: property.id, units: unit.id, "room-types": unit.roomTypeId, "unit-blocks": unitBlock,
        "rate-plans": ratePlan.id, guests: guest.id,
        reservations: reservation.id, payments: payment, "payment-links": paymentLink, tasks: task,
        notifications: notification, "api-keys": apiKey.id, "calendar-feeds": calendarFeed, "calendar-imports": calendarImport, inbox: inboxMessage, subscriptions: subscription,
        "webhook-subscriptions": webhookSubscription, "webhook-deliveries": webhookDelivery,
      },
    },
    bodies: bodiesFor({
      propertyId: property.id, unitId: unit.id, roomTypeId: unit.roomTypeId, guestId: guest.id, ratePlanId: ratePlan.id,
      email: b.owner.email,
      browser: await browserSubscription(),
    }),
    probes: await operations(),
  };
}
