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
};

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
export const createRatePlanBody = withStayRules(z.strictObject({
  ...editable,
  propertyId: id,
  currency,
  minStay: editable.minStay.optional(),
  maxStay: editable.maxStay.optional(),
  cancellationPolicy: editable.cancellationPolicy.optional(),
  freeCancellationHours: editable.freeCancellationHours.optional(),
  active: editable.active.optional(),
})).meta({ id: "RatePlanCreate" });

// The property and currency stay: reservations refer to a plan by both, with its id.
export const updateRatePlanBody = withStayRules(patchOf(editable)).meta({ id: "RatePlanUpdate" });

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
  createdAt: timestamp,
  updatedAt: timestamp,
}).meta({ id: "RatePlan" });

export const listRatePlansQuery = z.strictObject({
  ...pageQuery,
  propertyId: id.optional(),
  active: queryBoolean.optional(),
});
