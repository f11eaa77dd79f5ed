import { z } from "zod";
import { queryInteger } from "../db/pagination.ts";
import { answeredDate, currency, daysBetween, domainRule, id, isoDate, minorUnits } from "../http/schemas.ts";

export const availabilityQuery = z.strictObject({
  propertyId: id,
  arrival: isoDate.meta({ description: "The first night, on the property's clock." }),
  departure: isoDate.meta({ description: "The day the party leaves: after arrival, at most 365 nights on." }),
  adults: queryInteger(1, 50, "Adults, 1 to 50.").default(1),
  children: queryInteger(0, 50, "Children, 0 to 50.").default(0),
}).refine(
  (query) => query.departure > query.arrival && daysBetween(query.arrival, query.departure) <= 365,
  { message: "departure must be after arrival, at most 365 nights on.", path: ["departure"], params: domainRule },
);

const restriction = z.object({
  code: z.enum(["inactive", "closed", "closed_to_arrival", "closed_to_departure", "min_stay", "max_stay"]),
  date: answeredDate.optional(),
  minStay: z.number().int().optional(),
  maxStay: z.number().int().optional(),
});

const quote = z.object({
  ratePlanId: id,
  code: z.string(),
  name: z.string(),
  currency,
  bookable: z.boolean().meta({ description: "No restriction refuses the stay: booking it on this plan succeeds if a room is left." }),
  total: minorUnits.min(0).meta({ description: "The stay's price for the party, the sum of its nights." }),
  nights: z.array(z.object({ date: answeredDate, amount: minorUnits.min(0) })),
  restrictions: z.array(restriction).meta({ description: "Why the plan does not sell the stay, so the front desk can say so." }),
});

export const availability = z.object({
  propertyId: id,
  arrival: answeredDate,
  departure: answeredDate,
  nights: z.number().int(),
  adults: z.number().int(),
  children: z.number().int(),
  roomTypes: z.array(z.object({
    roomTypeId: id,
    code: z.string(),
    name: z.string(),
    maxOccupancy: z.number().int(),
    fitsParty: z.boolean().meta({ description: "The party is within the room type's maxima." }),
    available: z.number().int().meta({
      description: "How many more stays of the type its fullest night holds: units in service less held stays and blocks.",
    }),
    freeUnits: z.array(z.object({ unitId: id, name: z.string() }))
      .meta({ description: "The type's units free on every night, to assign." }),
    ratePlans: z.array(quote),
  })),
}).meta({ id: "Availability" });
