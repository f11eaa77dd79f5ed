import { z } from "zod";
import { pageQuery } from "../db/pagination.ts";
import { answeredDate, domainRule, id, isoDate, patchOf, text, timestamp } from "../http/schemas.ts";

const editable = {
  startsOn: isoDate.meta({ description: "The first night the unit is out of order, on the property's clock." }),
  endsOn: isoDate.meta({ description: "The first night it is back (exclusive, as a stay's checkOut)." }),
  reason: text(500).meta({ description: "Why, for the front desk and housekeeping: a burst pipe, a renovation." }),
};

const nightsInOrder = (body: { startsOn?: string; endsOn?: string }) =>
  body.startsOn === undefined || body.endsOn === undefined || body.endsOn > body.startsOn;
const endsAfterStart = { message: "endsOn must be after startsOn.", path: ["endsOn"], params: domainRule };

export const createUnitBlockBody = z.strictObject({ ...editable, unitId: id }).refine(nightsInOrder, endsAfterStart)
  .meta({ id: "UnitBlockCreate" });

// A block stays on its unit: to block another unit, make another block.
export const updateUnitBlockBody = patchOf(editable).refine(nightsInOrder, endsAfterStart).meta({ id: "UnitBlockUpdate" });

export const unitBlock = z.object({
  id,
  propertyId: id,
  unitId: id,
  startsOn: answeredDate,
  endsOn: answeredDate,
  reason: z.string(),
  calendarImportId: id.nullable().meta({
    description: "The calendar import whose feed holds the unit on these nights; such a block changes only with its feed.",
  }),
  createdAt: timestamp,
  updatedAt: timestamp,
}).meta({ id: "UnitBlock" });

export const listUnitBlocksQuery = z.strictObject({
  ...pageQuery,
  propertyId: id.optional(),
  unitId: id.optional(),
  from: isoDate.optional().meta({ description: "Blocks that cover a night on or after this date." }),
  to: isoDate.optional().meta({ description: "Blocks that begin before this date." }),
});
