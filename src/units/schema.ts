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
  status: z.enum(unitStatuses).meta({
    description: "Only an active unit takes stays and counts in its room type's inventory; for some nights out of order, block it.",
  }),
  roomTypeId: id.meta({ description: "The room type it is sold as." }),
};

export const createUnitBody = z.strictObject({
  ...editable,
  propertyId: id,
  type: editable.type.optional(),
  capacity: editable.capacity.optional(),
  floor: editable.floor.optional(),
  status: editable.status.optional(),
  roomTypeId: editable.roomTypeId.optional().meta({
    description: "The room type it is sold as; without it, the property's room type for its kind and capacity (code ROOM-2, " +
      "SUITE-4, ...), made the first time with the capacity as its maximum occupancy.",
  }),
}).meta({ id: "UnitCreate" });

// A unit stays in its property: reservations and tasks name the pair, and a move
// would take their history with it. Retiring a unit is a status.
export const updateUnitBody = patchOf(editable).meta({ id: "UnitUpdate" });

export const unit = z.object({
  id,
  propertyId: id,
  roomTypeId: id,
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
  roomTypeId: id.optional(),
  status: oneOrMany(unitStatuses).optional(),
});
