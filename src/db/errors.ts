import { HttpError } from "../http/problem.ts";

// What a refused statement means to a client. The database enforces the rules; this
// only names them. Anything not listed here is a fault of ours and stays a 500.
type DatabaseError = {
  code: string;
  message: string;
  constraint_name?: string;
  column_name?: string;
  hint?: string;
};

function isDatabaseError(error: unknown): error is DatabaseError {
  return typeof error === "object" && error !== null && typeof (error as { code?: unknown }).code === "string" &&
    typeof (error as { message?: unknown }).message === "string";
}

// Constraint names a client meets, in words; the rest fall back to the database's message.
export const constraintMessages: Record<string, string> = {
  reservations_no_overlapping_stays: "The unit is already booked for some of these nights.",
  access_codes_no_shared_active_code: "This code already opens the unit for an overlapping stay.",
  payments_tenant_id_external_reference_key: "A payment with this external reference is already recorded.",
  rate_plans_tenant_id_property_id_code_key: "The property already has a rate plan with this code.",
  units_tenant_id_property_id_name_key: "The property already has a unit with this name.",
  reservations_tenant_source_external_reference_key: "A reservation with this source and external reference already exists.",
  properties_tenant_id_name_key: "A property with this name already exists.",
  payments_tenant_id_reservation_id_currency_fkey: "The currency must be the reservation's currency.",
  // Checks across columns, each named for its rule.
  rate_plans_max_stay_not_below_min_stay: "maxStay must be at least minStay.",
  rate_plans_non_refundable_without_free_cancellation: "A non-refundable rate plan has no free cancellation hours.",
  payment_links_expire_after_creation: "expiresAt must be later than now.",
  api_keys_expire_after_creation: "expiresAt must be later than now.",
  access_codes_valid_until_after_valid_from: "validUntil must be after validFrom.",
};

function withHint(message: string, hint: string | undefined): string {
  const sentence = message.charAt(0).toUpperCase() + message.slice(1);
  return hint ? `${sentence}. ${hint}` : `${sentence}.`;
}

export function httpErrorFromDatabase(error: unknown): HttpError | null {
  if (!isDatabaseError(error)) return null;
  const named = error.constraint_name ? constraintMessages[error.constraint_name] : undefined;
  switch (error.code) {
    case "PT409": // a lifecycle or state rule (raised by the domain's triggers)
      return new HttpError("conflict", withHint(error.message, error.hint));
    case "PT404":
      return new HttpError("not-found", withHint(error.message, error.hint));
    case "23P01": // exclusion: a double booking
    case "23505": // unique
      return new HttpError("conflict", named ?? withHint(error.message, error.hint));
    case "23503": // a referenced row that does not exist (or is not this tenant's), or one still referenced
      return error.message.startsWith("update or delete on table")
        ? new HttpError("conflict", stillReferencedMessage(error))
        : new HttpError("unprocessable", named ?? referenceMessage(error));
    case "23514": // check constraints and the domain's own checks
    case "23502": // not null
    case "22001": // value too long
    case "22003": // numeric out of range
    case "22007": // invalid datetime format
    case "22008": // datetime field overflow
    case "22P02": // invalid text representation
    case "22023": // invalid parameter value
    case "22021": // a byte sequence the encoding refuses (U+0000 among them)
    case "22P05": // a character the encoding cannot hold
      return new HttpError("unprocessable", named ?? checkMessage(error));
    case "42501": // row-level security or a permission rule
      return new HttpError("forbidden", withHint(error.message, error.hint));
    default:
      return null;
  }
}

// What to do instead of deleting a row that others still refer to, by its table.
const insteadOfDeleting: Record<string, string> = {
  properties: "Archive it instead (status archived).",
  units: "Archive it instead (status archived).",
  rate_plans: "Set it inactive instead (active false).",
  reservations: "Cancel it instead.",
};

// Postgres: update or delete on table "units" violates foreign key constraint "…" on table "reservations".
function stillReferencedMessage(error: DatabaseError): string {
  const [, table, referrer] = /^update or delete on table "([a-z_]+)" .* on table "([a-z_]+)"$/.exec(error.message) ?? [];
  const what = referrer ? referrer.replace(/_/g, " ") : "other records";
  const advice = table ? insteadOfDeleting[table] : undefined;
  return `It cannot be deleted while ${what} refer to it.${advice ? ` ${advice}` : ""}`;
}

function referenceMessage(error: DatabaseError): string {
  // postgres' own FK message names tables and keys; the domain's triggers write sentences.
  if (error.message.startsWith("insert or update on table")) {
    return "A referenced record does not exist in this tenant.";
  }
  return withHint(error.message, error.hint);
}

// The migrations name a column's own check <table>_<column>_check, and a check across
// columns for its rule; the client sent the column under its camelCase name.
function checkMessage(error: DatabaseError & { table_name?: string }): string {
  if (error.message.startsWith("new row for relation")) {
    const name = error.constraint_name;
    const column = error.table_name && name?.startsWith(`${error.table_name}_`) && name.endsWith("_check")
      ? name.slice(error.table_name.length + 1, -"_check".length)
      : null;
    const field = column ? column.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase()) : null;
    return field ? `The value of ${field} is not allowed.` : `The values break the rule ${name}.`;
  }
  return withHint(error.message, error.hint);
}
