import { z } from "zod";
import { pageQuery } from "../db/pagination.ts";
import { clockTime, countryCode, currency, email, id, patchOf, phone, text, timestamp } from "../http/schemas.ts";

export const propertyStatuses = ["active", "archived"] as const;

const editable = {
  name: text(200),
  timezone: z.string().min(1).max(64).meta({ description: "An IANA time zone, like Europe/Lisbon." }),
  addressLine1: z.string().max(200).nullable(),
  addressLine2: z.string().max(200).nullable(),
  city: z.string().max(100).nullable(),
  region: z.string().max(100).nullable(),
  postalCode: z.string().max(20).nullable(),
  countryCode: countryCode.nullable(),
  email: email.nullable(),
  phone: phone.nullable(),
  checkInTime: clockTime,
  checkOutTime: clockTime,
};

export const createPropertyBody = z.strictObject({
  ...editable,
  currency,
  addressLine1: editable.addressLine1.optional(),
  addressLine2: editable.addressLine2.optional(),
  city: editable.city.optional(),
  region: editable.region.optional(),
  postalCode: editable.postalCode.optional(),
  countryCode: editable.countryCode.optional(),
  email: editable.email.optional(),
  phone: editable.phone.optional(),
  checkInTime: clockTime.optional(),
  checkOutTime: clockTime.optional(),
}).meta({ id: "PropertyCreate" });

// The currency stays: rate plans and reservations are priced in it. Archiving is a status.
export const updatePropertyBody = patchOf({ ...editable, status: z.enum(propertyStatuses) })
  .meta({ id: "PropertyUpdate" });

export const property = z.object({
  id,
  name: z.string(),
  timezone: z.string(),
  currency,
  addressLine1: z.string().nullable(),
  addressLine2: z.string().nullable(),
  city: z.string().nullable(),
  region: z.string().nullable(),
  postalCode: z.string().nullable(),
  countryCode: z.string().nullable(),
  email: z.string().nullable(),
  phone: z.string().nullable(),
  checkInTime: z.string(),
  checkOutTime: z.string(),
  status: z.enum(propertyStatuses),
  createdAt: timestamp,
  updatedAt: timestamp,
}).meta({ id: "Property" });

export const listPropertiesQuery = z.strictObject({
  ...pageQuery,
  status: z.enum(propertyStatuses).optional(),
});
