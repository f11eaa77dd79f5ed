// Builders for the domain's resources through the API, for tests that need a property,
// a unit, a rate plan, a guest or a reservation to exist before the thing they test.
// Each takes a client of a member who may create it and returns the representation
// the API answered with, checked against the served contract.
import assert from "node:assert/strict";
import type { Client, Schemas } from "./api.ts";
import { expectStatus, readOne, representation, unique } from "./api.ts";

export type Property = Schemas["Property"];
export type Unit = Schemas["Unit"];
export type RoomType = Schemas["RoomType"];
export type UnitBlock = Schemas["UnitBlock"];
export type RatePlan = Schemas["RatePlan"];
export type Guest = Schemas["Guest"];
export type Reservation = Schemas["Reservation"];
export type ReservationStatus = Reservation["status"];

type Fields = Record<string, unknown>;

async function create<T>(api: Client, collection: string, body: Fields): Promise<T> {
  const response = await api.post(`/${collection}`, body, representation);
  return await expectStatus<T>("POST", `/v1/${collection}`, response, 201);
}

export function createProperty(api: Client, fields: Fields = {}): Promise<Property> {
  return create(api, "properties", { name: unique("Harbour House"), timezone: "Europe/Lisbon", currency: "EUR", ...fields });
}

export function createRoomType(api: Client, propertyId: string, fields: Fields = {}): Promise<RoomType> {
  const code = `RT-${crypto.randomUUID().slice(0, 6).toUpperCase()}`;
  return create(api, "room-types", { propertyId, code, name: "Double", standardOccupancy: 2, maxOccupancy: 2, ...fields });
}

export function createUnitBlock(api: Client, unitId: string, startsOn: string, endsOn: string, fields: Fields = {}): Promise<UnitBlock> {
  return create(api, "unit-blocks", { unitId, startsOn, endsOn, reason: "Out of order", ...fields });
}

export function createUnit(api: Client, propertyId: string, fields: Fields = {}): Promise<Unit> {
  return create(api, "units", { propertyId, name: unique("Room"), capacity: 2, ...fields });
}

export function createRatePlan(api: Client, propertyId: string, fields: Fields = {}): Promise<RatePlan> {
  const code = `BAR-${crypto.randomUUID().slice(0, 6).toUpperCase()}`;
  return create(api, "rate-plans", { propertyId, name: "Best available", code, currency: "EUR", nightlyPrice: 12000, ...fields });
}

export function createGuest(api: Client, fields: Fields = {}): Promise<Guest> {
  const tag = crypto.randomUUID().slice(0, 8);
  return create(api, "guests", { firstName: "Ana", lastName: `Silva ${tag}`, email: `ana-${tag}@guest.example`, ...fields });
}

export function createReservation(api: Client, required: { propertyId: string; guestId: string }, fields: Fields = {}): Promise<Reservation> {
  return create(api, "reservations", { ...required, checkIn: "2027-03-10", checkOut: "2027-03-13", ...fields });
}

export type Stay = { property: Property; unit: Unit; ratePlan: RatePlan; guest: Guest; reservation: Reservation };

// A property with a unit, a rate plan and a guest, and a reservation for them
// (pending unless `fields` says otherwise); three nights at 120.00 EUR by default.
export async function createStay(api: Client, fields: Fields = {}): Promise<Stay> {
  const property = await createProperty(api);
  const unit = await createUnit(api, property.id);
  const ratePlan = await createRatePlan(api, property.id);
  const guest = await createGuest(api);
  const reservation = await createReservation(
    api,
    { propertyId: property.id, guestId: guest.id },
    { unitId: unit.id, ratePlanId: ratePlan.id, ...fields },
  );
  return { property, unit, ratePlan, guest, reservation };
}

export type ReservationAction = "confirm" | "check-in" | "check-out" | "cancel" | "no-show";

// A lifecycle action with return=representation: 200 and the reservation after it.
export async function stepReservation(api: Client, id: string, action: ReservationAction): Promise<Reservation> {
  const response = await api.post(`/reservations/${id}/${action}`, action === "cancel" ? {} : undefined, representation);
  return await expectStatus<Reservation>("POST", `/v1/reservations/{id}/${action}`, response, 200);
}

// GET /v1/reservations/{id}: the reservation and its ETag.
export function readReservation(api: Client, id: string): Promise<{ body: Reservation; etag: string }> {
  return readOne<Reservation>(api, "/v1/reservations/{id}", { id });
}

// How a new reservation reaches each status: the status it is created in, then actions.
export const routeTo: Record<ReservationStatus, { start: "pending" | "confirmed"; steps: ReservationAction[] }> = {
  pending: { start: "pending", steps: [] },
  confirmed: { start: "confirmed", steps: [] },
  checked_in: { start: "confirmed", steps: ["check-in"] },
  checked_out: { start: "confirmed", steps: ["check-in", "check-out"] },
  cancelled: { start: "pending", steps: ["cancel"] },
  no_show: { start: "confirmed", steps: ["no-show"] },
};

// Where a reservation is made: its property, unit, guest and (optionally) rate plan.
export type Place = { propertyId: string; unitId: string | null; guestId: string; ratePlanId: string | null };

// A reservation of three nights from `checkIn` at the place, brought to `status`.
export async function reservationIn(
  api: Client,
  at: Place,
  status: ReservationStatus,
  checkIn: string,
  fields: Fields = {},
): Promise<Reservation> {
  const route = routeTo[status];
  let current = await createReservation(api, { propertyId: at.propertyId, guestId: at.guestId }, {
    unitId: at.unitId,
    ratePlanId: at.ratePlanId,
    checkIn,
    checkOut: addDays(checkIn, 3),
    status: route.start,
    ...fields,
  });
  for (const action of route.steps) current = await stepReservation(api, current.id, action);
  assert.equal(current.status, status);
  return current;
}

// A date (YYYY-MM-DD) `days` later.
export function addDays(date: string, days: number): string {
  const day = new Date(`${date}T00:00:00Z`);
  day.setUTCDate(day.getUTCDate() + days);
  return day.toISOString().slice(0, 10);
}

// A timestamp as the instant it names, in UTC, so that offsets compare.
export function instant(timestamp: string): string {
  return new Date(timestamp).toISOString();
}
