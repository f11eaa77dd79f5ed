import { z } from "zod";
import { pageQuery } from "../db/pagination.ts";
import { id, oneOrMany, patchOf, text, timestamp } from "../http/schemas.ts";

export const unitTypes = ["room", "suite", "apartment", "house", "dorm_bed", "other"] as const;
export const unitStatuses = ["active", "out_of_service", "archived"] as const;

const editable = {
  name: text(100),
  type: z.enum(unitTypes),
  capacity: z.number().int().min(1).max(100).meta({ description: "How many guests it sleeps." }),
  floor: z.string().max(20).nullable(),
  status: z.enum(unitStatuses),
};

export const createUnitBody = z.strictObject({
  ...editable,
  propertyId: id,
  type: editable.type.optional(),
  capacity: editable.capacity.optional(),
  floor: editable.floor.optional(),
  status: editable.status.optional(),
}).meta({ id: "UnitCreate" });

// A unit stays in its property: reservations and tasks name the pair, and a move
// would take their history with it. Retiring a unit is a status.
export const updateUnitBody = patchOf(editable).meta({ id: "UnitUpdate" });

export const unit = z.object({
  id,
  propertyId: id,
  name: z.string(),
  type: z.enum(unitTypes),
  capacity: z.number().int(),
  floor: z.string().nullable(),
  status: z.enum(unitStatuses),
  createdAt: timestamp,
  updatedAt: timestamp,
}).meta({ id: "Unit" });

export const listUnitsQuery = z.strictObject({
  ...pageQuery,
  propertyId: id.optional(),
  status: oneOrMany(unitStatuses).optional(),
});
