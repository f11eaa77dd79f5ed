// What a refused statement means to a client, on the database's error fields alone: the
// rules the database enforces become 409, 422, 403 or 404 problems in words; anything
// else stays a fault of ours (no problem, so the router answers 500 and logs it).
import assert from "node:assert/strict";
import { httpErrorFromDatabase } from "../../src/db/errors.ts";

type Fields = { code: string; message: string; constraint_name?: string; table_name?: string; hint?: string };

function mapped(fields: Fields) {
  const error = httpErrorFromDatabase(Object.assign(new Error(fields.message), fields));
  assert.ok(error, `${fields.code} is mapped`);
  return { status: error.status, kind: error.kind, detail: error.detail };
}

Deno.test("a double booking and a unique key are 409s in words, by the constraint's name", () => {
  assert.deepEqual(mapped({ code: "23P01", message: "conflicting key value", constraint_name: "reservations_no_overlapping_stays" }), {
    status: 409, kind: "conflict", detail: "The unit is already booked for some of these nights.",
  });
  assert.deepEqual(mapped({ code: "23505", message: "duplicate key", constraint_name: "properties_tenant_id_name_key" }), {
    status: 409, kind: "conflict", detail: "A property with this name already exists.",
  });
  // A constraint without words of its own: the database's message, as a sentence, with its hint.
  assert.deepEqual(mapped({ code: "23505", message: "duplicate key value", constraint_name: "other_key", hint: "Pick another." }), {
    status: 409, kind: "conflict", detail: "Duplicate key value. Pick another.",
  });
});

Deno.test("the domain's own state and lookup rules (PT409, PT404) keep their message and hint", () => {
  assert.deepEqual(mapped({ code: "PT409", message: "the reservation is checked_out", hint: "Only notes can change." }), {
    status: 409, kind: "conflict", detail: "The reservation is checked_out. Only notes can change.",
  });
  assert.deepEqual(mapped({ code: "PT404", message: "no such reservation" }), {
    status: 404, kind: "not-found", detail: "No such reservation.",
  });
});

Deno.test("deleting a row others refer to is a 409 saying what refers to it and what to do instead", () => {
  assert.deepEqual(
    mapped({
      code: "23503",
      message: 'update or delete on table "units" violates foreign key constraint "reservations_unit_fkey" on table "reservations"',
    }),
    { status: 409, kind: "conflict", detail: "It cannot be deleted while reservations refer to it. Archive it instead (status archived)." },
  );
});

Deno.test("a reference to a row not in the tenant is a 422 that names no table", () => {
  assert.deepEqual(
    mapped({ code: "23503", message: 'insert or update on table "units" violates foreign key constraint "units_property_fkey"' }),
    { status: 422, kind: "unprocessable", detail: "A referenced record does not exist in this tenant." },
  );
  assert.deepEqual(
    mapped({ code: "23503", message: "x", constraint_name: "payments_tenant_id_reservation_id_currency_fkey" }),
    { status: 422, kind: "unprocessable", detail: "The currency must be the reservation's currency." },
  );
});

Deno.test("a column's check names the field as the client sent it; a table check in words or by name", () => {
  assert.deepEqual(
    mapped({
      code: "23514",
      message: 'new row for relation "units" violates check constraint "units_max_capacity_check"',
      constraint_name: "units_max_capacity_check",
      table_name: "units",
    }),
    { status: 422, kind: "unprocessable", detail: "The value of maxCapacity is not allowed." },
  );
  assert.equal(mapped({ code: "23514", message: "new row", constraint_name: "rate_plans_check" }).detail, "maxStay must be at least minStay.");
  assert.equal(
    mapped({ code: "23514", message: 'new row for relation "units" violates', constraint_name: "units_check", table_name: "units" }).detail,
    "The values break the rule units_check.",
  );
});

Deno.test("values the database cannot take are 422s; a refusal by row-level security is a 403", () => {
  for (const code of ["23502", "22001", "22003", "22007", "22008", "22P02", "22023", "22021", "22P05"]) {
    assert.equal(mapped({ code, message: "invalid input" }).status, 422, code);
  }
  assert.deepEqual(mapped({ code: "42501", message: "new row violates row-level security policy" }), {
    status: 403, kind: "forbidden", detail: "New row violates row-level security policy.",
  });
});

Deno.test("anything else is not a client's problem: no mapping, so the router answers 500", () => {
  assert.equal(httpErrorFromDatabase(Object.assign(new Error("deadlock detected"), { code: "40P01" })), null);
  assert.equal(httpErrorFromDatabase(new Error("no code")), null);
  assert.equal(httpErrorFromDatabase("a string"), null);
  assert.equal(httpErrorFromDatabase(null), null);
});
