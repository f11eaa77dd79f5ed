// Calendar feeds (src/calendar-feeds): a manager makes a secret iCal URL for a unit or a
// room type and sees it once; a calendar service reads it with the token alone and gets
// the nights that cannot be sold, never whose they are; revoking ends it at once.
import assert from "node:assert/strict";
import { client, expectInvalid, expectProblem, expectStatus, expectUnprocessable, listPage, representation, UNKNOWN_ID, withFixture } from "../support/api.ts";
import {
  createGuest,
  createProperty,
  createReservation,
  createRoomType,
  createUnit,
  createUnitBlock,
  stepReservation,
} from "../support/domain.ts";
import type { Schemas } from "../support/api.ts";

type Feed = Schemas["CalendarFeed"];
type Issued = Schemas["CalendarFeedIssued"];
const FEEDS = "/v1/calendar-feeds";
const CONTENT = "/v1/ical/{feed}";

type Event = { uid: string; start: string; end: string; summary: string; stamp: string };

// The calendar as a subscriber unfolds and reads it.
function eventsOf(body: string): Event[] {
  const lines = body.replaceAll("\r\n ", "").split("\r\n");
  const events: Event[] = [];
  let current: Record<string, string> | null = null;
  for (const line of lines) {
    if (line === "BEGIN:VEVENT") current = {};
    else if (line === "END:VEVENT" && current) {
      events.push({
        uid: current.UID!, start: current["DTSTART;VALUE=DATE"]!, end: current["DTEND;VALUE=DATE"]!, summary: current.SUMMARY!,
        stamp: current.DTSTAMP!,
      });
      current = null;
    } else if (current) {
      const at = line.indexOf(":");
      current[line.slice(0, at)] = line.slice(at + 1);
    }
  }
  return events;
}

async function read(url: string, headers: Record<string, string> = {}): Promise<Response> {
  return await fetch(url, { headers });
}

Deno.test("a unit's feed: its held stays and blocks as all-day events, DTEND the first free night, no guest in it", () =>
  withFixture(async ({ tenant }) => {
    const a = await tenant("feeds");
    const owner = a.ownerClient;
    const property = await createProperty(owner);
    const unit = await createUnit(owner, property.id, { name: "Room 101" });
    const guest = await createGuest(owner, { firstName: "Beatriz", lastName: "Quaresma", email: "beatriz@guest.example" });
    const at = { propertyId: property.id, guestId: guest.id };
    const stay = await createReservation(owner, at, { unitId: unit.id, checkIn: "2027-06-10", checkOut: "2027-06-13", status: "confirmed" });
    const cancelled = await createReservation(owner, at, { unitId: unit.id, checkIn: "2027-07-01", checkOut: "2027-07-03" });
    await stepReservation(owner, cancelled.id, "cancel");
    await createUnitBlock(owner, unit.id, "2027-08-01", "2027-08-05", { reason: "Repainting after Beatriz's party" });

    const response = await owner.post("/calendar-feeds", { unitId: unit.id, name: "Room 101, Harbour House" });
    const issued = await expectStatus<Issued>("POST", FEEDS, response, 201);
    assert.equal(response.headers.get("cache-control"), "no-store");
    assert.equal(response.headers.get("etag"), null, "no validator derived from the secret");
    assert.match(issued.url, /\/v1\/ical\/[A-Za-z0-9_-]{43}\.ics$/);
    assert.deepEqual([issued.propertyId, issued.unitId, issued.roomTypeId, issued.status], [property.id, unit.id, null, "active"]);
    assert.equal(issued.lastFour, issued.url.slice(-8, -4));

    const served = await read(issued.url);
    assert.equal(served.status, 200);
    assert.equal(served.headers.get("content-type"), "text/calendar; charset=utf-8");
    const body = await served.text();
    assert.ok(body.startsWith("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:"));
    assert.ok(body.includes("\r\nX-WR-CALNAME:Room 101\\, Harbour House\r\n"));
    const events = eventsOf(body);
    assert.deepEqual(events.map((event) => [event.start, event.end, event.summary]), [
      ["20270610", "20270613", "Reserved"],
      ["20270801", "20270805", "Not available"],
    ], "held stays and blocks; a cancelled stay frees its nights");
    assert.equal(new Set(events.map((event) => event.uid)).size, 2, "each event its own UID");
    for (const word of ["Beatriz", "Quaresma", "beatriz@", stay.confirmationCode, guest.id, "Repainting"]) {
      assert.ok(!body.includes(word), `the feed says nothing of ${word}`);
    }

    // A subscriber that polls gets 304 until the calendar changes.
    const etag = served.headers.get("etag")!;
    const again = await read(issued.url, { "if-none-match": etag });
    assert.equal(again.status, 304);
    await again.body?.cancel();
    await createReservation(owner, at, { unitId: unit.id, checkIn: "2027-09-01", checkOut: "2027-09-02", status: "pending" });
    const changed = await read(issued.url, { "if-none-match": etag });
    assert.equal(changed.status, 200);
    assert.notEqual(changed.headers.get("etag"), etag);
    assert.deepEqual(eventsOf(await changed.text()).map((event) => event.start), ["20270610", "20270801", "20270901"]);
  }));

Deno.test("a room type's feed: the runs of nights on which it has no room left", () =>
  withFixture(async ({ tenant }) => {
    const a = await tenant("feeds");
    const owner = a.ownerClient;
    const property = await createProperty(owner);
    const double = await createRoomType(owner, property.id);
    const [one, two] = [await createUnit(owner, property.id, { roomTypeId: double.id }), await createUnit(owner, property.id, { roomTypeId: double.id })];
    const guest = await createGuest(owner);
    const at = { propertyId: property.id, guestId: guest.id, roomTypeId: double.id };
    await createReservation(owner, at, { checkIn: "2027-05-01", checkOut: "2027-05-05", status: "confirmed" });
    await createReservation(owner, at, { unitId: one.id, checkIn: "2027-05-03", checkOut: "2027-05-08", status: "confirmed" });
    await createUnitBlock(owner, two.id, "2027-05-20", "2027-05-22");
    await createReservation(owner, at, { unitId: one.id, checkIn: "2027-05-21", checkOut: "2027-05-23", status: "confirmed" });

    const issued = await expectStatus<Issued>("POST", FEEDS, await owner.post("/calendar-feeds", { roomTypeId: double.id, name: "Doubles" }), 201);
    assert.deepEqual([issued.unitId, issued.roomTypeId, issued.propertyId], [null, double.id, property.id]);
    const events = eventsOf(await (await read(issued.url)).text());
    assert.deepEqual(events.map((event) => [event.start, event.end, event.summary]), [
      ["20270503", "20270505", "Fully booked"],
      ["20270521", "20270522", "Fully booked"],
    ], "both units taken on 3 and 4 May; on 21 May one is blocked and the other booked");
  }));

Deno.test("revoked, unknown or malformed: the feed's URL answers 404 or 400; managers alone see feeds, and never their URLs", () =>
  withFixture(async ({ tenant, memberOf }) => {
    const a = await tenant("feeds");
    const b = await tenant("other");
    const owner = a.ownerClient;
    const property = await createProperty(owner);
    const unit = await createUnit(owner, property.id);
    const theirs = await createUnit(b.ownerClient, (await createProperty(b.ownerClient)).id);
    const issued = await expectStatus<Issued>("POST", FEEDS, await owner.post("/calendar-feeds", { unitId: unit.id, name: "Room" }), 201);

    const listed = await listPage<Feed>(owner, FEEDS, `?unitId=${unit.id}`);
    assert.deepEqual(listed.data.map((feed) => feed.id), [issued.id]);
    assert.ok(!JSON.stringify(listed).includes(issued.url.slice(-47, -4)), "the list never shows the token");
    const renamed = await expectStatus<Feed>("PATCH", `${FEEDS}/{id}`,
      await owner.patch(`/calendar-feeds/${issued.id}`, { name: "Room 7" }, representation), 200);
    assert.equal(renamed.name, "Room 7");
    assert.ok((await (await read(issued.url)).text()).includes("X-WR-CALNAME:Room 7\r\n"));

    const staff = client(await memberOf(a, "staff"), a.tenantId);
    await expectProblem("GET", FEEDS, await staff.get("/calendar-feeds"), 403, "forbidden");
    await expectProblem("POST", FEEDS, await staff.post("/calendar-feeds", { unitId: unit.id, name: "x" }), 403, "forbidden");
    await expectUnprocessable("POST", FEEDS, await owner.post("/calendar-feeds", { name: "x" }), "unitId");
    await expectUnprocessable("POST", FEEDS, await owner.post("/calendar-feeds", { unitId: unit.id, roomTypeId: unit.roomTypeId, name: "x" }), "unitId");
    await expectInvalid("POST", FEEDS, await owner.post("/calendar-feeds", { unitId: unit.id }), "name");
    await expectProblem("POST", FEEDS, await owner.post("/calendar-feeds", { unitId: theirs.id, name: "x" }), 422, "unknown-reference");
    await expectProblem("POST", FEEDS, await owner.post("/calendar-feeds", { unitId: UNKNOWN_ID, name: "x" }), 422, "unknown-reference");

    const unknown = await expectProblem("GET", CONTENT,
      await read(issued.url.replace(/[A-Za-z0-9_-]{43}\.ics$/, `${"A".repeat(43)}.ics`)), 404, "not-found");
    for (const malformed of [issued.url.replace(/\.ics$/, ""), `${issued.url}x`, issued.url.replace(/\/[^/]+$/, "/short.ics")]) {
      const problem = await expectProblem("GET", CONTENT, await read(malformed), 404, "not-found");
      assert.deepEqual(problem, unknown, "a malformed token answers as an unknown one");
    }

    assert.equal((await owner.delete(`/calendar-feeds/${issued.id}`)).status, 204);
    const gone = await expectProblem("GET", CONTENT, await read(issued.url), 404, "not-found");
    const never = await expectProblem("GET", CONTENT, await read(issued.url.replace(/[A-Za-z0-9_-]{43}\.ics$/, `${"B".repeat(43)}.ics`)), 404);
    assert.deepEqual(gone, never, "a revoked feed answers as one that never was");
    assert.equal((await owner.delete(`/calendar-feeds/${issued.id}`)).status, 204, "revoking again changes nothing");
    const revoked = await expectStatus<Feed>("GET", `${FEEDS}/{id}`, await owner.get(`/calendar-feeds/${issued.id}`), 200);
    assert.equal(revoked.status, "revoked");
  }));
