// A unit imports an iCal feed through the gateway: the webhooks worker fetches it from a
// server of the test's, and its events hold the unit; the feed changing, answering 304,
// failing and being deleted are followed.
import assert from "node:assert/strict";
import { expectProblem, expectStatus, representation, type Schemas, withFixture } from "../support/api.ts";
import { addDays, createGuest, createProperty, createRatePlan, createReservation, createRoomType, createUnit } from "../support/domain.ts";
import { runWorker } from "../support/notifications.ts";
import { runWebhookWorker } from "../support/outbound-webhooks.ts";

type CalendarImport = Schemas["CalendarImport"];
type UnitBlock = Schemas["UnitBlock"];

// An Airbnb export's shape: all-day events, DTEND exclusive, CRLF lines, a folded line.
function airbnbCalendar(events: { from: string; to: string; summary?: string }[]): string {
  const lines = ["BEGIN:VCALENDAR", "PRODID;X-RICAL-TZSOURCE=TZINFO:-//Airbnb Inc//Hosting Calendar 0.8.8//EN", "CALSCALE:GREGORIAN",
    "VERSION:2.0"];
  for (const [index, event] of events.entries()) {
    lines.push("BEGIN:VEVENT", `DTEND;VALUE=DATE:${event.to.replaceAll("-", "")}`, `DTSTART;VALUE=DATE:${event.from.replaceAll("-", "")}`,
      `UID:1418fb94e984-${index}-${event.from}@airbnb.com`,
      "DESCRIPTION:Reservation URL: https://www.airbnb.com/hosting/reservations/det", " ails/HMQ4ZT8XKE",
      `SUMMARY:${event.summary ?? "Reserved"}`, "END:VEVENT");
  }
  lines.push("END:VCALENDAR");
  return lines.join("\r\n") + "\r\n";
}

// The other service: serves `calendar` with an ETag, 304 to a matching If-None-Match, or
// the status it is told to fail with.
function calendarServer() {
  const state = { calendar: airbnbCalendar([]), failWith: 0, requests: [] as { ifNoneMatch: string | null; userAgent: string | null }[] };
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (request) => {
    state.requests.push({ ifNoneMatch: request.headers.get("if-none-match"), userAgent: request.headers.get("user-agent") });
    if (state.failWith) return new Response("unavailable", { status: state.failWith });
    const etag = `"${state.calendar.length}-${hash(state.calendar)}"`;
    if (request.headers.get("if-none-match") === etag) return new Response(null, { status: 304, headers: { etag } });
    return new Response(state.calendar, { headers: { etag, "content-type": "text/calendar; charset=utf-8" } });
  });
  return { state, url: `http://127.0.0.1:${server.addr.port}/ical/listing-4412.ics`, close: () => server.shutdown() };
}

function hash(text: string): number {
  let value = 0;
  for (const character of text) value = (value * 31 + character.charCodeAt(0)) >>> 0;
  return value;
}

function today(timezone: string): string {
  return new Intl.DateTimeFormat("en-CA", { timeZone: timezone, year: "numeric", month: "2-digit", day: "2-digit" }).format(new Date());
}

Deno.test("a unit's imported calendar holds it on the feed's nights, follows the feed's changes and 304s, reports conflicts, and goes with its import", () =>
  withFixture(async (fixture) => {
    const { ownerClient: api, tenantId, owner } = await fixture.tenant("calendar-import");
    const property = await createProperty(api, { timezone: "Europe/Lisbon" });
    const roomType = await createRoomType(api, property.id);
    const unit = await createUnit(api, property.id, { roomTypeId: roomType.id });
    const ratePlan = await createRatePlan(api, property.id);
    const guest = await createGuest(api);
    const day = today("Europe/Lisbon");
    // A stay booked here before the import, on nights the feed will also hold.
    const stay = await createReservation(api, { propertyId: property.id, guestId: guest.id },
      { unitId: unit.id, ratePlanId: ratePlan.id, checkIn: addDays(day, 40), checkOut: addDays(day, 42) });
    const feed = calendarServer();
    const due = () => fixture.sql`update public.calendar_imports set next_fetch_at = now() where tenant_id = ${tenantId}`;
    const blocks = async () =>
      ((await expectStatus<{ data: UnitBlock[] }>("GET", "/v1/unit-blocks", await api.get(`/unit-blocks?unitId=${unit.id}`), 200)).data)
        .map((block) => [block.startsOn, block.endsOn, block.calendarImportId !== null]);
    try {
      feed.state.calendar = airbnbCalendar([
        { from: addDays(day, 10), to: addDays(day, 14) },
        // Back to back with the first: one run of held nights.
        { from: addDays(day, 14), to: addDays(day, 16), summary: "Airbnb (Not available)" },
        { from: addDays(day, 39), to: addDays(day, 43) },
        // Past nights hold nothing.
        { from: addDays(day, -20), to: addDays(day, -15) },
      ]);

      // A private address is refused before anything is saved.
      const refused = await api.post("/calendar-imports", { unitId: unit.id, name: "Router", url: "http://10.0.0.1/cal.ics" });
      await expectProblem("POST", "/v1/calendar-imports", refused, 422, "unprocessable");

      const created = await expectStatus<CalendarImport>("POST", "/v1/calendar-imports",
        await api.post("/calendar-imports", { unitId: unit.id, name: "Airbnb", url: feed.url }, representation), 201);
      assert.deepEqual([created.propertyId, created.unitId, created.lastOutcome, created.events], [property.id, unit.id, null, 0]);

      await runWebhookWorker();
      assert.equal(feed.state.requests.length, 1, "the import is fetched on the worker's next run");
      assert.equal(feed.state.requests[0]!.userAgent, "pms-calendar-import/1");
      assert.deepEqual(await blocks(), [
        [addDays(day, 10), addDays(day, 16), true],
        [addDays(day, 39), addDays(day, 40), true],
        [addDays(day, 42), addDays(day, 43), true],
      ], "held on the feed's future nights, around the stay already booked");
      const read = await expectStatus<CalendarImport>("GET", "/v1/calendar-imports/{id}", await api.get(`/calendar-imports/${created.id}`), 200);
      assert.equal(read.lastOutcome, "changed");
      assert.equal(read.events, 3);
      assert.deepEqual(read.conflicts, [{ startsOn: addDays(day, 40), endsOn: addDays(day, 42), reason: "stay" }]);

      // The held nights are not for sale on this unit.
      const onHeld = await api.post("/reservations", {
        propertyId: property.id, guestId: guest.id, unitId: unit.id, ratePlanId: ratePlan.id, checkIn: addDays(day, 11), checkOut: addDays(day, 12),
      });
      await expectProblem("POST", "/v1/reservations", onHeld, 409);
      // A member cannot remove the feed's hold; only the feed can.
      const [held] = (await expectStatus<{ data: UnitBlock[] }>("GET", "/v1/unit-blocks", await api.get(`/unit-blocks?unitId=${unit.id}`), 200)).data;
      const removal = await api.delete(`/unit-blocks/${held!.id}`);
      const problem = await expectProblem("DELETE", "/v1/unit-blocks/{id}", removal, 409, "held-by-calendar-import");
      assert.equal((problem as { calendarImportId?: string }).calendarImportId, created.id);

      // Nothing new: a conditional request, answered 304, and nothing changes.
      await due();
      await runWebhookWorker();
      assert.equal(feed.state.requests.at(-1)!.ifNoneMatch?.startsWith('"'), true, "the ETag is sent back");
      const again = await expectStatus<CalendarImport>("GET", "/v1/calendar-imports/{id}", await api.get(`/calendar-imports/${created.id}`), 200);
      assert.equal(again.lastOutcome, "unchanged");
      assert.deepEqual((await blocks()).length, 3);

      // The feed changes: the stay elsewhere ends early, another one comes; the stay here
      // is cancelled, so its nights can be held now.
      await expectStatus("POST", "/v1/reservations/{id}/cancel", await api.post(`/reservations/${stay.id}/cancel`, {}), 204);
      feed.state.calendar = airbnbCalendar([
        { from: addDays(day, 10), to: addDays(day, 12) },
        { from: addDays(day, 39), to: addDays(day, 43) },
        { from: addDays(day, 60), to: addDays(day, 61) },
      ]);
      await due();
      await runWebhookWorker();
      assert.deepEqual(await blocks(), [
        [addDays(day, 10), addDays(day, 12), true],
        [addDays(day, 39), addDays(day, 43), true],
        [addDays(day, 60), addDays(day, 61), true],
      ]);
      const changed = await expectStatus<CalendarImport>("GET", "/v1/calendar-imports/{id}", await api.get(`/calendar-imports/${created.id}`), 200);
      assert.deepEqual([changed.lastOutcome, changed.events, changed.conflicts], ["changed", 3, []]);

      // Three failures in a row: the holds stay as they were, and the owners and admins are told once.
      feed.state.failWith = 503;
      for (let attempt = 1; attempt <= 4; attempt++) {
        await due();
        await runWebhookWorker();
      }
      const failing = await expectStatus<CalendarImport>("GET", "/v1/calendar-imports/{id}", await api.get(`/calendar-imports/${created.id}`), 200);
      assert.deepEqual([failing.lastOutcome, failing.lastErrorCode, failing.failures], ["failed", "http-status", 4]);
      assert.ok(failing.failingSince !== null);
      assert.equal((await blocks()).length, 3, "a failing feed leaves the holds as the last good one made them");
      const [notice] = await fixture.sql<{ count: number }[]>`
        select count(*)::int as count from public.notifications
        where tenant_id = ${tenantId} and template_key = 'calendar_import_failing'`;
      assert.equal(notice!.count, 1, "told once, not at every failure");
      await runWorker();
      const inbox = await expectStatus<{ data: { title: string; url: string | null }[] }>("GET", "/v1/inbox", await api.get("/inbox"), 200);
      const message = inbox.data.find((item) => item.url === `/calendar-imports/${created.id}`);
      assert.ok(message, `the owner ${owner.email} finds the notice in the inbox`);
      assert.match(message.title, /Airbnb/);

      // Deleted, its holds go with it.
      assert.equal((await api.delete(`/calendar-imports/${created.id}`)).status, 204);
      assert.deepEqual(await blocks(), []);
    } finally {
      await feed.close();
    }
  }));

Deno.test("calendar imports are the managers', and stay in their tenant", () =>
  withFixture(async (fixture) => {
    const { ownerClient: api } = await fixture.tenant("calendar-import-access");
    const property = await createProperty(api);
    const unit = await createUnit(api, property.id);
    const created = await expectStatus<CalendarImport>("POST", "/v1/calendar-imports",
      await api.post("/calendar-imports", { unitId: unit.id, name: "Vrbo", url: "https://calendars.example.com/listing/4412.ics" }, representation), 201);
    const staff = await fixture.memberOf({ ownerClient: api }, "staff");
    const { client } = await import("../support/api.ts");
    const staffClient = client(staff, api.tenantId);
    await expectProblem("GET", "/v1/calendar-imports/{id}", await staffClient.get(`/calendar-imports/${created.id}`), 403);
    const other = await fixture.tenant("calendar-import-other");
    await expectProblem("GET", "/v1/calendar-imports/{id}", await other.ownerClient.get(`/calendar-imports/${created.id}`), 404);
    const otherUnit = await createUnit(other.ownerClient, (await createProperty(other.ownerClient)).id);
    await expectProblem("POST", "/v1/calendar-imports",
      await api.post("/calendar-imports", { unitId: otherUnit.id, name: "Theirs", url: "https://calendars.example.com/x.ics" }), 422);
    // The same feed twice on one unit is refused.
    await expectProblem("POST", "/v1/calendar-imports",
      await api.post("/calendar-imports", { unitId: unit.id, name: "Again", url: "https://calendars.example.com/listing/4412.ics" }), 409);
    const renamed = await expectStatus<CalendarImport>("PATCH", "/v1/calendar-imports/{id}",
      await api.patch(`/calendar-imports/${created.id}`, { name: "Vrbo 4412" }, representation), 200);
    assert.equal(renamed.name, "Vrbo 4412");
  }));
