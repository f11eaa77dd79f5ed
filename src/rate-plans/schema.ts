import { z } from "zod";
import { pageQuery } from "../db/pagination.ts";
import { currency, domainRule, id, minorUnits, patchOf, queryBoolean, text, timestamp } from "../http/schemas.ts";
import { MAX_NIGHTLY_PRICE } from "../money/limits.ts";

export const cancellationPolicies = ["flexible", "moderate", "strict", "non_refundable"] as const;

const stayNights = z.number().int().min(1).max(365);

const editable = {
  name: text(200),
  code: z.string().regex(/^[A-Z0-9][A-Z0-9_-]{0,31}$/, "Up to 32 capitals, digits, _ and -, like BAR or NR-7.")
    .meta({ description: "Unique within the property." }),
  nightlyPrice: minorUnits.min(0).max(MAX_NIGHTLY_PRICE),
  minStay: stayNights.meta({ description: "Fewest nights a stay on this plan may have." }),
  maxStay: stayNights.nullable().meta({ description: "Most nights a stay on this plan may have; null for no limit." }),
  cancellationPolicy: z.enum(cancellationPolicies),
  freeCancellationHours: z.number().int().min(0).max(8760).nullable()
    .meta({ description: "Free cancellation until this many hours before check-in; null with non_refundable." }),
  active: z.boolean().meta({ description: "Only an active plan takes new bookings." }),
  roomTypeId: id.nullable().meta({ description: "The room type it sells; null: every room type of its property, at the same prices." }),
  extraAdultPrice: minorUnits.min(0).max(MAX_NIGHTLY_PRICE)
    .meta({ description: "What each adult above the room type's standard occupancy adds to a night." }),
  extraChildPrice: minorUnits.min(0).max(MAX_NIGHTLY_PRICE)
    .meta({ description: "What each child above the room type's standard occupancy adds to a night." }),
};

// A derived plan's prices are its base plan's, a percentage or an amount off or on,
// following every change of them; nightlyPrice and the extra amounts of its own are not used.
const derivation = {
  derivedFromId: id.nullable().meta({ description: "The base plan, of the same property and currency, itself not derived." }),
  derivedPercent: z.number().min(-100).max(100).multipleOf(0.01).nullable()
    .meta({ description: "Percent of the base plan's prices added (-10: ten percent off), rounded half away from zero." }),
  derivedAmount: minorUnits.min(-MAX_NIGHTLY_PRICE).max(MAX_NIGHTLY_PRICE).nullable()
    .meta({ description: "Minor units added to the base plan's nightly price (negative: off); the extra amounts stay the base's." }),
};

type Derivation = { derivedFromId?: string | null; derivedPercent?: number | null; derivedAmount?: number | null };

// rate_plans_derivation_complete, on what the body gives: a base plan and exactly one of
// a percentage and an amount, or none of the three.
function withDerivationRule<T extends z.ZodType<Derivation>>(schema: T) {
  return schema.refine((body) => {
    const given = [body.derivedFromId, body.derivedPercent, body.derivedAmount].filter((value) => value !== undefined);
    if (given.length === 0) return true;
    const set = [body.derivedPercent, body.derivedAmount].filter((value) => value != null).length;
    return body.derivedFromId === undefined || (body.derivedFromId === null ? set === 0 : set === 1);
  }, { message: "A derived plan names its base plan and exactly one of derivedPercent and derivedAmount.", path: ["derivedFromId"], params: domainRule });
}

type StayRules = {
  minStay?: number;
  maxStay?: number | null;
  cancellationPolicy?: (typeof cancellationPolicies)[number];
  freeCancellationHours?: number | null;
};

// The table's two-column checks (rate_plans_max_stay_not_below_min_stay and
// rate_plans_non_refundable_without_free_cancellation), tested on what the body itself
// gives, so that the 422 names the field. A PATCH that gives one side is still checked
// against the stored row by the database.
function withStayRules<T extends z.ZodType<StayRules>>(schema: T) {
  return schema
    .refine((body) => body.maxStay == null || body.minStay === undefined || body.maxStay >= body.minStay, {
      message: "maxStay must be at least minStay.",
      path: ["maxStay"],
      params: domainRule,
    })
    .refine((body) => body.cancellationPolicy !== "non_refundable" || body.freeCancellationHours == null, {
      message: "A non_refundable plan has no free cancellation; leave freeCancellationHours null.",
      path: ["freeCancellationHours"],
      params: domainRule,
    });
}

// The currency is required: the database fills in none, and reservations on the plan
// are priced in it.
export const createRatePlanBody = withDerivationRule(withStayRules(z.strictObject({
  ...editable,
  ...derivation,
  propertyId: id,
  currency,
  nightlyPrice: editable.nightlyPrice.optional().meta({ description: "Required unless the plan is derived." }),
  roomTypeId: editable.roomTypeId.optional(),
  extraAdultPrice: editable.extraAdultPrice.optional(),
  extraChildPrice: editable.extraChildPrice.optional(),
  derivedFromId: derivation.derivedFromId.optional(),
  derivedPercent: derivation.derivedPercent.optional(),
  derivedAmount: derivation.derivedAmount.optional(),
  minStay: editable.minStay.optional(),
  maxStay: editable.maxStay.optional(),
  cancellationPolicy: editable.cancellationPolicy.optional(),
  freeCancellationHours: editable.freeCancellationHours.optional(),
  active: editable.active.optional(),
})).refine((body) => body.nightlyPrice !== undefined || body.derivedFromId != null, {
  message: "nightlyPrice is required unless the plan derives from another.", path: ["nightlyPrice"], params: domainRule,
})).meta({ id: "RatePlanCreate" });

// The property and currency stay: reservations refer to a plan by both, with its id.
export const updateRatePlanBody = withDerivationRule(withStayRules(patchOf({ ...editable, ...derivation })))
  .meta({ id: "RatePlanUpdate" });

export const ratePlan = z.object({
  id,
  propertyId: id,
  name: z.string(),
  code: z.string(),
  currency,
  nightlyPrice: minorUnits.min(0).max(MAX_NIGHTLY_PRICE),
  minStay: z.number().int(),
  maxStay: z.number().int().nullable(),
  cancellationPolicy: z.enum(cancellationPolicies),
  freeCancellationHours: z.number().int().nullable(),
  active: z.boolean(),
  roomTypeId: id.nullable(),
  extraAdultPrice: minorUnits.min(0).max(MAX_NIGHTLY_PRICE),
  extraChildPrice: minorUnits.min(0).max(MAX_NIGHTLY_PRICE),
  derivedFromId: id.nullable(),
  derivedPercent: z.number().nullable(),
  derivedAmount: minorUnits.nullable(),
  createdAt: timestamp,
  updatedAt: timestamp,
}).meta({ id: "RatePlan" });

export const listRatePlansQuery = z.strictObject({
  ...pageQuery,
  propertyId: id.optional(),
  roomTypeId: id.optional(),
  active: queryBoolean.optional(),
});
