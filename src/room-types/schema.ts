import { z } from "zod";
import { pageQuery } from "../db/pagination.ts";
import { domainRule, id, oneOrMany, patchOf, text, timestamp } from "../http/schemas.ts";

export const roomTypeStatuses = ["active", "archived"] as const;

const guests = z.number().int().min(1).max(100);

const editable = {
  name: text(200),
  code: z.string().regex(/^[A-Z0-9][A-Z0-9_-]{0,31}$/, "Up to 32 capitals, digits, _ and -, like DBL or FAM-4.")
    .meta({ description: "Unique within the property; channels map their room codes to it." }),
  description: z.string().max(2000).nullable(),
  standardOccupancy: guests.meta({ description: "The party a rate's price is for; guests beyond it pay its extra amounts." }),
  maxOccupancy: guests.meta({ description: "The most guests, adults and children, a stay of this type takes." }),
  maxAdults: guests.nullable().meta({ description: "The most adults; null: up to maxOccupancy." }),
  maxChildren: z.number().int().min(0).max(99).nullable()
    .meta({ description: "The most children; null: up to maxOccupancy less one adult." }),
  status: z.enum(roomTypeStatuses).meta({ description: "An archived type takes no new stays; its units and stays keep it." }),
};

type Occupancy = { standardOccupancy?: number; maxOccupancy?: number; maxAdults?: number | null; maxChildren?: number | null };

// The table's checks between occupancy fields (room_types_standard_within_max_occupancy and
// the two after it), tested on what the body itself gives, so that the 422 names the field.
// A PATCH that gives one side is still checked against the stored row by the database.
function withOccupancyRules<T extends z.ZodType<Occupancy>>(schema: T) {
  const within = (value: number | null | undefined, max: number | undefined, below = false) =>
    value == null || max === undefined || (below ? value < max : value <= max);
  return schema
    .refine((body) => within(body.standardOccupancy, body.maxOccupancy), {
      message: "standardOccupancy must be at most maxOccupancy.", path: ["standardOccupancy"], params: domainRule,
    })
    .refine((body) => within(body.maxAdults, body.maxOccupancy), {
      message: "maxAdults must be at most maxOccupancy.", path: ["maxAdults"], params: domainRule,
    })
    .refine((body) => within(body.maxChildren, body.maxOccupancy, true), {
      message: "maxChildren must be below maxOccupancy: a stay has at least one adult.", path: ["maxChildren"], params: domainRule,
    });
}

export const createRoomTypeBody = withOccupancyRules(z.strictObject({
  ...editable,
  propertyId: id,
  description: editable.description.optional(),
  standardOccupancy: editable.standardOccupancy.optional(),
  maxOccupancy: editable.maxOccupancy.optional(),
  maxAdults: editable.maxAdults.optional(),
  maxChildren: editable.maxChildren.optional(),
  status: editable.status.optional(),
})).meta({ id: "RoomTypeCreate" });

// A room type stays in its property: its units and stays name the pair.
export const updateRoomTypeBody = withOccupancyRules(patchOf(editable)).meta({ id: "RoomTypeUpdate" });

export const roomType = z.object({
  id,
  propertyId: id,
  code: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  standardOccupancy: z.number().int(),
  maxOccupancy: z.number().int(),
  maxAdults: z.number().int().nullable(),
  maxChildren: z.number().int().nullable(),
  status: z.enum(roomTypeStatuses),
  createdAt: timestamp,
  updatedAt: timestamp,
}).meta({ id: "RoomType" });

export const listRoomTypesQuery = z.strictObject({
  ...pageQuery,
  propertyId: id.optional(),
  status: oneOrMany(roomTypeStatuses).optional(),
});
