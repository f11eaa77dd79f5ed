import { isDatabaseUnavailable } from "../db/connection-loss.ts";
import { MAX_AMOUNT, MAX_NIGHTLY_PRICE } from "../money/limits.ts";
import { type FieldError, HttpError, type ProblemKind } from "./problem.ts";

// What a refused statement means to a client. The database enforces the rules and names
// the one that refused: a constraint's own name, or, for a rule a trigger or function
// checks, the CONSTRAINT it raises with (`raise ... using constraint = '<rule>'`). This
// module only looks those names up; it never reads the English of a message. Anything not
// covered here is a fault of ours and stays a 500.
//
// How the database raises its own refusals (see docs/errors.md):
//   SQLSTATE  PT<status>, PostgREST's convention: PT409, PT404
//   CONSTRAINT the rule's name, a key of `rules` below
//   DETAIL    for a lifecycle rule, a JSON object of the problem's extension members
//             ({"currentStatus": ..., "requestedStatus": ..., "allowedStatuses": [...]})
//   MESSAGE, HINT  the sentence a person reads; the problem's detail
export type DatabaseError = {
  code: string;
  message: string;
  detail?: string;
  hint?: string;
  constraint_name?: string;
  table_name?: string;
  column_name?: string;
};

function isDatabaseError(error: unknown): error is DatabaseError {
  return typeof error === "object" && error !== null && typeof (error as { code?: unknown }).code === "string" &&
    typeof (error as { message?: unknown }).message === "string";
}

type Rule = {
  problem: ProblemKind;
  // The sentence for a constraint Postgres reports in its own words; rules raised by the
  // domain's functions carry their own.
  detail?: string;
  // The request field to blame, as the client sent it.
  field?: string;
};

// Every rule a client can meet, by the name the database gives it.
export const rules: Record<string, Rule> = {
  // Exclusion constraints.
  reservations_no_overlapping_stays: { problem: "unit-already-booked", detail: "The unit is already booked for some of these nights." },
  unit_blocks_no_overlap: {
    problem: "unit-already-blocked", detail: "The unit is already blocked for some of these nights: make that block longer.",
  },
  access_codes_no_shared_active_code: {
    problem: "access-code-in-use", detail: "This code already opens the unit for an overlapping stay.", field: "code",
  },
  // Unique constraints.
  properties_tenant_id_name_key: { problem: "already-exists", detail: "A property with this name already exists.", field: "name" },
  units_tenant_id_property_id_name_key: {
    problem: "already-exists", detail: "The property already has a unit with this name.", field: "name",
  },
  room_types_tenant_id_property_id_code_key: {
    problem: "already-exists", detail: "The property already has a room type with this code.", field: "code",
  },
  rate_plans_tenant_id_property_id_code_key: {
    problem: "already-exists", detail: "The property already has a rate plan with this code.", field: "code",
  },
  reservations_tenant_channel_external_reference_key: {
    problem: "already-exists", detail: "A reservation with this source, channel and external reference already exists.",
    field: "externalReference",
  },
  payments_tenant_id_external_reference_key: {
    problem: "already-exists", detail: "A payment with this external reference is already recorded.", field: "externalReference",
  },
  // Foreign keys whose refusal says more than "no such record".
  payments_tenant_id_reservation_id_currency_fkey: {
    problem: "unprocessable", detail: "The currency must be the reservation's currency.", field: "currency",
  },
  // A list of references a trigger checks, as a foreign key would check one.
  webhook_subscriptions_property_ids_fkey: {
    problem: "unknown-reference", detail: "A property named in propertyIds does not exist in this tenant.", field: "propertyIds",
  },
  // Check constraints a request can break with valid-looking fields.
  room_types_standard_within_max_occupancy: {
    problem: "unprocessable", detail: "standardOccupancy must be at most maxOccupancy.", field: "standardOccupancy",
  },
  room_types_max_adults_within_max_occupancy: {
    problem: "unprocessable", detail: "maxAdults must be at most maxOccupancy.", field: "maxAdults",
  },
  room_types_max_children_below_max_occupancy: {
    problem: "unprocessable", detail: "maxChildren must be below maxOccupancy: a stay has at least one adult.", field: "maxChildren",
  },
  unit_blocks_ends_after_start: { problem: "unprocessable", detail: "endsOn must be after startsOn.", field: "endsOn" },
  unit_blocks_at_most_3660_nights: { problem: "unprocessable", detail: "A block is at most 3,660 nights.", field: "endsOn" },
  reservations_unit_of_room_type: {
    problem: "unprocessable", detail: "The unit is not of the stay's room type: change roomTypeId with it.", field: "unitId",
  },
  reservations_room_type_active: {
    problem: "unprocessable", detail: "The room type is archived and takes no new stays.", field: "roomTypeId",
  },
  reservations_tenant_id_property_id_room_type_id_fkey: {
    problem: "unknown-reference", detail: "The room type does not exist in the reservation's property.", field: "roomTypeId",
  },
  units_tenant_id_property_id_room_type_id_fkey: {
    problem: "unknown-reference", detail: "The room type does not exist in the unit's property.", field: "roomTypeId",
  },
  unit_blocks_tenant_id_property_id_unit_id_fkey: {
    problem: "unknown-reference", detail: "The unit does not exist in this tenant.", field: "unitId",
  },
  calendar_feeds_tenant_id_property_id_unit_id_fkey: {
    problem: "unknown-reference", detail: "The unit does not exist in this tenant.", field: "unitId",
  },
  calendar_imports_tenant_id_property_id_unit_id_fkey: {
    problem: "unknown-reference", detail: "The unit does not exist in this tenant.", field: "unitId",
  },
  calendar_feeds_tenant_id_property_id_room_type_id_fkey: {
    problem: "unknown-reference", detail: "The room type does not exist in this tenant.", field: "roomTypeId",
  },
  rate_plans_derivation_complete: {
    problem: "unprocessable", detail: "A derived plan names its base plan and exactly one of derivedPercent and derivedAmount.",
    field: "derivedFromId",
  },
  rate_plans_derived_from_base: {
    problem: "unprocessable", detail: "A plan derives from a base plan, which derives from none.", field: "derivedFromId",
  },
  rate_plans_tenant_id_property_id_derived_from_id_currency_fkey: {
    problem: "unknown-reference", detail: "The base plan does not exist in the plan's property with its currency.", field: "derivedFromId",
  },
  rate_plans_tenant_id_property_id_room_type_id_fkey: {
    problem: "unknown-reference", detail: "The room type does not exist in the plan's property.", field: "roomTypeId",
  },
  rate_plan_days_derived_without_prices: {
    problem: "unprocessable", detail: "A derived plan takes its prices from its base plan: set them there.", field: "price",
  },
  rate_plan_days_max_stay_not_below_min_stay: {
    problem: "unprocessable", detail: "maxStay must be at least minStay on each day.", field: "maxStay",
  },
  rate_plan_days_tenant_id_rate_plan_id_fkey: {
    problem: "unknown-reference", detail: "The rate plan does not exist in this tenant.", field: "ratePlanId",
  },
  reservations_rate_plan_room_type: {
    problem: "unprocessable", detail: "The rate plan sells another room type.", field: "ratePlanId",
  },
  rate_plans_max_stay_not_below_min_stay: { problem: "unprocessable", detail: "maxStay must be at least minStay.", field: "maxStay" },
  rate_plans_non_refundable_without_free_cancellation: {
    problem: "unprocessable", detail: "A non-refundable rate plan has no free cancellation hours.", field: "freeCancellationHours",
  },
  payment_links_expire_after_creation: { problem: "unprocessable", detail: "expiresAt must be later than now.", field: "expiresAt" },
  api_keys_expire_after_creation: { problem: "unprocessable", detail: "expiresAt must be later than now.", field: "expiresAt" },
  reservations_check_out_after_check_in: { problem: "unprocessable", detail: "checkOut must be after checkIn.", field: "checkOut" },
  reservations_stay_at_most_365_nights: { problem: "unprocessable", detail: "A stay is at most 365 nights.", field: "checkOut" },
  payments_external_source_has_external_reference: {
    problem: "unprocessable", detail: "A payment from an external source needs an externalReference.", field: "externalReference",
  },
  access_codes_valid_until_after_valid_from: {
    problem: "unprocessable", detail: "validUntil must be after validFrom.", field: "validUntil",
  },
  // The maxima of amounts (supabase/migrations/20261124000100_amount_maxima.sql). The API's
  // schemas refuse a single amount past its maximum first; only the sum of a reservation's
  // payments is the database's alone to know.
  rate_plans_nightly_price_within_maximum: {
    problem: "unprocessable", detail: `nightlyPrice is at most ${grouped(MAX_NIGHTLY_PRICE)}.`, field: "nightlyPrice",
  },
  reservations_total_amount_within_maximum: {
    problem: "unprocessable", detail: `totalAmount is at most ${grouped(MAX_AMOUNT)}.`, field: "totalAmount",
  },
  reservations_amount_paid_within_maximum: {
    problem: "unprocessable",
    detail: `The reservation's payments would add up to more than ${grouped(MAX_AMOUNT)}, the most one reservation takes.`,
    field: "amount",
  },
  payments_amount_within_maximum: { problem: "unprocessable", detail: `amount is at most ${grouped(MAX_AMOUNT)}.`, field: "amount" },
  payment_links_amount_within_maximum: {
    problem: "unprocessable", detail: `amount is at most ${grouped(MAX_AMOUNT)}.`, field: "amount",
  },
  // Rules the domain's triggers and functions raise.
  reservations_room_type_inventory: { problem: "no-availability" },
  unit_blocks_room_type_inventory: { problem: "no-availability" },
  units_room_type_inventory: { problem: "no-availability" },
  reservations_unit_blocked: { problem: "unit-out-of-order", field: "unitId" },
  reservations_unit_in_service: { problem: "unit-out-of-order", field: "unitId" },
  unit_blocks_no_held_stay: { problem: "unit-occupied" },
  units_hold_stays: { problem: "unit-occupied" },
  unit_blocks_unit_fixed: { problem: "immutable-field" },
  unit_blocks_imported: { problem: "held-by-calendar-import" },
  calendar_imports_unit_fixed: { problem: "immutable-field" },
  reservations_room_type_occupancy: { problem: "over-occupancy" },
  reservations_rate_restricted: { problem: "rate-restricted" },
  reservations_status_transition: { problem: "lifecycle-transition-refused" },
  reservations_final_stay_fixed: { problem: "lifecycle-transition-refused" },
  reservations_arrival_fixed_after_check_in: { problem: "lifecycle-transition-refused", field: "checkIn" },
  tasks_status_transition: { problem: "lifecycle-transition-refused" },
  tasks_final_fixed: { problem: "lifecycle-transition-refused" },
  payment_links_final_fixed: { problem: "lifecycle-transition-refused" },
  payment_links_fields_fixed: { problem: "immutable-field" },
  payments_link_must_be_active: { problem: "lifecycle-transition-refused" },
  payments_fields_fixed: { problem: "immutable-field" },
  access_codes_reservation_must_be_open: { problem: "lifecycle-transition-refused" },
  access_codes_fields_fixed: { problem: "immutable-field" },
  access_codes_revoked_final: { problem: "lifecycle-transition-refused" },
  api_keys_fields_fixed: { problem: "immutable-field" },
  api_keys_properties_required: {
    problem: "unprocessable", detail: "A key acts for all properties or for some: give propertyIds or allProperties.",
    field: "propertyIds",
  },
  api_keys_scopes_check: { problem: "unprocessable", detail: "scopes are some of the four a key may have.", field: "scopes" },
  api_keys_revoked_final: { problem: "lifecycle-transition-refused" },
  calendar_feeds_fields_fixed: { problem: "immutable-field" },
  calendar_feeds_revoked_final: { problem: "lifecycle-transition-refused" },
  notifications_status_transition: { problem: "lifecycle-transition-refused" },
  notifications_sent_final: { problem: "lifecycle-transition-refused" },
  tenant_members_keep_an_owner: { problem: "last-owner" },
  tenant_members_already_a_member: { problem: "already-a-member", field: "email" },
  tenant_members_no_such_user: { problem: "not-found" },
  tenant_members_no_such_member: { problem: "not-found" },
};

// A fallback by SQLSTATE, for refusals that name no rule of the list above.
const byCode: Record<string, ProblemKind> = {
  PT409: "conflict",
  PT404: "not-found",
  "23P01": "conflict", // exclusion
  "23505": "already-exists", // unique
  "23503": "unknown-reference", // a referenced row that does not exist, or not in this tenant
  "23514": "unprocessable", // check constraints and the domain's own checks
  "23502": "unprocessable", // not null
  "22001": "unprocessable", // value too long
  "22003": "unprocessable", // numeric out of range
  "22007": "unprocessable", // invalid datetime format
  "22008": "unprocessable", // datetime field overflow
  "22009": "unprocessable", // a UTC offset Postgres cannot take (16 hours or more)
  "22P02": "unprocessable", // invalid text representation
  "22023": "unprocessable", // invalid parameter value
  "22021": "unprocessable", // a byte sequence the encoding refuses (U+0000 among them)
  "22P05": "unprocessable", // a character the encoding cannot hold
  "42501": "forbidden", // row-level security or a permission rule
};

// What to do instead of deleting a resource that others still refer to, by its collection.
const insteadOfDeleting: Record<string, string> = {
  properties: "Archive it instead (status archived).",
  units: "Archive it instead (status archived).",
  "room-types": "Archive it instead (status archived).",
  "rate-plans": "Set it inactive instead (active false).",
  reservations: "Cancel it instead.",
};

// A DELETE's foreign key refusal means others still refer to the row. Postgres reports
// both directions of a foreign key with 23503 and the referring table, so only the
// statement knows which it was: the delete routes ask here first.
export function deleteRefusal(error: unknown, collection: string): HttpError | null {
  if (!isDatabaseError(error) || error.code !== "23503") return null;
  const referrer = error.table_name;
  const what = referrer ? referrer.replace(/_/g, " ") : "other records";
  const advice = insteadOfDeleting[collection];
  return new HttpError("still-referenced", `It cannot be deleted while ${what} refer to it.${advice ? ` ${advice}` : ""}`, {
    members: referrer ? { referencedBy: referrer } : {},
  });
}

// How long a client waits before retrying when the database is away: a restart or a
// failover takes seconds.
const DATABASE_RETRY_AFTER_SECONDS = "2";

export function httpErrorFromDatabase(error: unknown): HttpError | null {
  if (isDatabaseUnavailable(error)) {
    return new HttpError("service-unavailable", "The database cannot be reached right now. Try again shortly.", {
      headers: { "retry-after": DATABASE_RETRY_AFTER_SECONDS },
    });
  }
  if (!isDatabaseError(error)) return null;
  // The role's statement_timeout cut the request's statement (supabase/migrations: the
  // per-role settings); what the request asked for did not finish in time.
  if (error.code === "57014") {
    return new HttpError(
      "service-unavailable",
      "The request took longer than the database allows one request to run (statement timeout) and was stopped; nothing of it was saved.",
      { headers: { "retry-after": DATABASE_RETRY_AFTER_SECONDS } },
    );
  }
  const rule = error.constraint_name ? rules[error.constraint_name] : undefined;
  const problem = rule?.problem ?? byCode[error.code];
  if (!problem) return null;
  const checked = rule ? undefined : checkedColumn(error);
  const referencing = rule ? undefined : referencingColumn(error);
  const field = rule?.field ?? camelCase(error.column_name ?? checked ?? referencing);
  const detail = rule?.detail ??
    (checked ? `The value of ${field} is not allowed.` : undefined) ??
    // A foreign key Postgres reports in its own words, which name tables the client never sees.
    (error.code === "23503" && error.constraint_name ? "A referenced record does not exist in this tenant." : undefined) ??
    // A table's check Postgres reports in its own words: its name says which.
    (error.code === "23514" && error.constraint_name ? `The values break the rule ${error.constraint_name}.` : undefined) ??
    withHint(error.message, error.hint);
  const errors: FieldError[] | undefined = field && problemCarriesFields(problem) ? [{ path: field, message: detail }] : undefined;
  return new HttpError(problem, detail, {
    ...(errors ? { errors } : {}),
    members: members(error),
  });
}

function problemCarriesFields(problem: ProblemKind): boolean {
  return problem === "unprocessable" || problem === "already-exists" || problem === "unknown-reference" ||
    problem === "access-code-in-use";
}

// A lifecycle refusal's DETAIL is a JSON object of the problem's extension members.
function members(error: DatabaseError): Record<string, unknown> {
  if (!error.code.startsWith("PT") || !error.detail) return {};
  try {
    const parsed: unknown = JSON.parse(error.detail);
    return parsed && typeof parsed === "object" && !Array.isArray(parsed) ? parsed as Record<string, unknown> : {};
  } catch {
    return {};
  }
}

// A single column's check is named <table>_<column>_check: the name says the column.
function checkedColumn(error: DatabaseError): string | undefined {
  const { constraint_name: name, table_name: table } = error;
  if (error.code !== "23514" || !name || !table || !name.startsWith(`${table}_`) || !name.endsWith("_check")) return undefined;
  return name.slice(table.length + 1, -"_check".length) || undefined;
}

// A foreign key is named <table>_tenant_id_<columns>_fkey: the name says the referencing
// columns. Of (tenant_id, property_id, unit_id), the last names the record that is missing
// (a unit of that property), so it is the field to blame.
function referencingColumn(error: DatabaseError): string | undefined {
  const { constraint_name: name, table_name: table } = error;
  const prefix = `${table}_tenant_id_`;
  if (error.code !== "23503" || !name || !table || !name.startsWith(prefix) || !name.endsWith("_fkey")) return undefined;
  return name.slice(prefix.length, -"_fkey".length).split(/(?<=_id)_/).at(-1) || undefined;
}

function camelCase(column: string | undefined): string | undefined {
  return column?.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

function sentence(message: string): string {
  return `${message.charAt(0).toUpperCase()}${message.slice(1)}${message.endsWith(".") ? "" : "."}`;
}

function withHint(message: string, hint: string | undefined): string {
  const first = sentence(message);
  return hint ? `${first} ${hint}${hint.endsWith(".") ? "" : "."}` : first;
}

// 1000000000000 as 1,000,000,000,000.
function grouped(value: number): string {
  return value.toLocaleString("en-US");
}
