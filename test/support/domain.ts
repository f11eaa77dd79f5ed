// Builders for the domain's resources through the API, for tests that need a property,
// a unit, a rate plan, a guest or a reservation to exist before the thing they test.
// Each takes a client of a member who may create it and returns the representation
// the API answered with, checked against the served contract.
import type { Client } from "./api.ts";
import { expectStatus, representation, unique } from "./api.ts";

export type Page<T> = { data: T[]; pagination: { limit: number; offset: number; total: number } };

export type Property = {
  id: string;
  name: string;
  timezone: string;
  currency: string;
  status: "active" | "archived";
  checkInTime: string;
  checkOutTime: string;
};

export type Unit = {
  id: string;
  propertyId: string;
  name: string;
  type: string;
  capacity: number;
  floor: string | null;
  status: "active" | "out_of_service" | "archived";
  createdAt: string;
  updatedAt: string;
};

export type RatePlan = {
  id: string;
  propertyId: string;
  name: string;
  code: string;
  currency: string;
  nightlyPrice: number;
  minStay: number;
  maxStay: number | null;
  cancellationPolicy: string;
  freeCancellationHours: number | null;
  active: boolean;
  createdAt: string;
  updatedAt: string;
};

export type Guest = {
  id: string;
  firstName: string;
  lastName: string;
  email: string | null;
  phone: string | null;
  locale: string;
  countryCode: string | null;
  marketingConsent: boolean;
  marketingConsentAt: string | null;
  notes: string | null;
  createdAt: string;
  updatedAt: string;
};

export type ReservationStatus = "pending" | "confirmed" | "checked_in" | "checked_out" | "cancelled" | "no_show";

export type Reservation = {
  id: string;
  propertyId: string;
  unitId: string | null;
  guestId: string;
  ratePlanId: string | null;
  confirmationCode: string;
  checkIn: string;
  checkOut: string;
  adults: number;
  children: number;
  status: ReservationStatus;
  totalAmount: number;
  currency: string;
  amountPaid: number;
  balance: number;
  source: string;
  externalReference: string | null;
  notes: string | null;
  cancellationReason: string | null;
  confirmedAt: string | null;
  checkedInAt: string | null;
  checkedOutAt: string | null;
  cancelledAt: string | null;
  noShowAt: string | null;
  createdAt: string;
  updatedAt: string;
};

type Fields = Record<string, unknown>;

async function create<T>(api: Client, collection: string, body: Fields): Promise<T> {
  const response = await api.post(`/${collection}`, body, representation);
  return await expectStatus<T>("POST", `/v1/${collection}`, response, 201);
}

export function createProperty(api: Client, fields: Fields = {}): Promise<Property> {
  return create(api, "properties", { name: unique("Harbour House"), timezone: "Europe/Lisbon", currency: "EUR", ...fields });
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
