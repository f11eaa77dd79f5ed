// The mapping from a refused statement to a problem: by the rule the database names,
// never by the English of its message. Pure: no database, no stack.
import assert from "node:assert/strict";
import { deleteRefusal, httpErrorFromDatabase, rules } from "../../src/http/database-refusals.ts";
import { problemResponse, problemTypes } from "../../src/http/problem.ts";

const root = new URL("../../", import.meta.url);

async function migrations(): Promise<string> {
  const folder = new URL("supabase/migrations/", root);
  const texts: string[] = [];
  for await (const entry of Deno.readDir(folder)) {
    if (entry.name.endsWith(".sql")) texts.push(await Deno.readTextFile(new URL(entry.name, folder)));
  }
  return texts.join("\n");
}

Deno.test("every rule the migrations raise by name is in the table, with a type more specific than conflict", async () => {
  const sql = await migrations();
  const raised = new Set([...sql.matchAll(/constraint\s*=\s*'([a-z_]+)'/g)].map(([, name]) => name!));
  assert.ok(raised.size >= 20, `only ${raised.size} raised rules found`);
  for (const name of raised) {
    assert.ok(rules[name], `${name} is raised by the schema but not in the rules table`);
    assert.notEqual(rules[name]!.problem, "conflict", `${name} deserves a specific type`);
  }
});

Deno.test("every rule in the table is a constraint the migrations declare or a rule they raise", async () => {
  const sql = await migrations();
  // A unique index reports its own name as the constraint's. The CLI's schema diff writes
  // `ADD CONSTRAINT "name"`, in capitals and quotes.
  const declared = new Set([...sql.matchAll(/(?:constraint|unique index)\s+"?([a-z_][a-z0-9_]*)"?/gi)].map(([, name]) => name!));
  const raised = new Set([...sql.matchAll(/constraint\s*=\s*'([a-z_]+)'/g)].map(([, name]) => name!));
  for (const name of Object.keys(rules)) {
    assert.ok(declared.has(name) || raised.has(name), `${name} names nothing in the schema`);
  }
});

Deno.test("docs/errors.md lists every problem type with its status", async () => {
  const doc = await Deno.readTextFile(new URL("docs/errors.md", root));
  for (const [kind, { status }] of Object.entries(problemTypes)) {
    assert.ok(doc.includes(`| \`${kind}\` | ${status} |`), `docs/errors.md does not list ${kind} (${status})`);
  }
});

Deno.test("a constraint the table names gives its type, sentence and field, whatever the message says", () => {
  const refused = httpErrorFromDatabase({
    code: "23P01", message: "anything at all", constraint_name: "reservations_no_overlapping_stays", table_name: "reservations",
  });
  assert.equal(refused?.kind, "unit-already-booked");
  assert.equal(refused?.status, 409);
  assert.equal(refused?.detail, "The unit is already booked for some of these nights.");

  const duplicate = httpErrorFromDatabase({ code: "23505", message: "x", constraint_name: "properties_tenant_id_name_key" });
  assert.equal(duplicate?.kind, "already-exists");
  assert.deepEqual(duplicate?.extra.errors, [{ path: "name", message: "A property with this name already exists." }]);
});

Deno.test("a rule raised by a trigger gives its type, its sentence and hint, and DETAIL's members", async () => {
  const refused = httpErrorFromDatabase({
    code: "PT409",
    message: "a checked_out reservation cannot become cancelled",
    hint: "checked_out is final",
    detail: JSON.stringify({ currentStatus: "checked_out", requestedStatus: "cancelled", allowedStatuses: [] }),
    constraint_name: "reservations_status_transition",
  });
  assert.equal(refused?.kind, "lifecycle-transition-refused");
  assert.equal(refused?.detail, "A checked_out reservation cannot become cancelled. checked_out is final.");
  const body = await problemResponse(refused!).json();
  assert.deepEqual(body, {
    type: "urn:pms:problem:lifecycle-transition-refused",
    title: "Lifecycle transition refused",
    status: 409,
    detail: "A checked_out reservation cannot become cancelled. checked_out is final.",
    currentStatus: "checked_out",
    requestedStatus: "cancelled",
    allowedStatuses: [],
  });
});

Deno.test("DETAIL that is not a JSON object adds no members; Postgres' own DETAIL is never read", async () => {
  for (const detail of ["not json", "[1]", "null", '"text"']) {
    const refused = httpErrorFromDatabase({ code: "PT409", message: "m", detail, constraint_name: "tasks_final_fixed" });
    const body = await problemResponse(refused!).json();
    assert.deepEqual(Object.keys(body).sort(), ["detail", "status", "title", "type"], detail);
  }
  // A unique violation's DETAIL, "Key (name)=(x) already exists.", is not the API's to show.
  const duplicate = httpErrorFromDatabase({
    code: "23505", message: "m", detail: "Key (name)=(x) already exists.", constraint_name: "properties_tenant_id_name_key",
  });
  assert.ok(!JSON.stringify(await problemResponse(duplicate!).json()).includes("Key (name)"));
});

Deno.test("without a named rule the SQLSTATE decides; a column's check names its field", () => {
  const check = httpErrorFromDatabase({
    code: "23514", message: "new row violates", constraint_name: "units_max_occupancy_check", table_name: "units",
  });
  assert.equal(check?.kind, "unprocessable");
  assert.equal(check?.detail, "The value of maxOccupancy is not allowed.");
  assert.deepEqual(check?.extra.errors, [{ path: "maxOccupancy", message: "The value of maxOccupancy is not allowed." }]);

  const notNull = httpErrorFromDatabase({ code: "23502", message: "null value in column", column_name: "check_in", table_name: "x" });
  assert.deepEqual(notNull?.extra.errors?.map((error) => error.path), ["checkIn"]);

  assert.equal(httpErrorFromDatabase({ code: "23503", message: "m", constraint_name: "some_fkey" })?.kind, "unknown-reference");
  // Postgres' own words name tables; the foreign key's name says the field.
  const reference = httpErrorFromDatabase({
    code: "23503", message: 'insert or update on table "tasks" violates foreign key constraint "tasks_tenant_id_assignee_id_fkey"',
    constraint_name: "tasks_tenant_id_assignee_id_fkey", table_name: "tasks",
  });
  assert.equal(reference?.detail, "A referenced record does not exist in this tenant.");
  assert.deepEqual(reference?.extra.errors, [{ path: "assigneeId", message: "A referenced record does not exist in this tenant." }]);
  // Of (tenant_id, property_id, unit_id), the missing record is the unit of that property.
  const unitOfProperty = httpErrorFromDatabase({
    code: "23503", message: "m", constraint_name: "tasks_tenant_id_property_id_unit_id_fkey", table_name: "tasks",
  });
  assert.deepEqual(unitOfProperty?.extra.errors?.map((error) => error.path), ["unitId"]);
  const linkOfReservation = httpErrorFromDatabase({
    code: "23503", message: "m", constraint_name: "payments_tenant_id_reservation_id_payment_link_id_fkey", table_name: "payments",
  });
  assert.deepEqual(linkOfReservation?.extra.errors?.map((error) => error.path), ["paymentLinkId"]);
  assert.equal(httpErrorFromDatabase({ code: "42501", message: "m" })?.kind, "forbidden");
  assert.equal(httpErrorFromDatabase({ code: "PT404", message: "no such member" })?.kind, "not-found");
  // A fault of ours stays a fault: no problem type, so the router answers 500.
  assert.equal(httpErrorFromDatabase({ code: "42P01", message: "relation does not exist" }), null);
  assert.equal(httpErrorFromDatabase(new Error("not from the database")), null);
});

Deno.test("the maxima of amounts are 422s naming the field sent; the sum of a reservation's payments names the payment's amount", () => {
  const paid = httpErrorFromDatabase({
    code: "23514", message: "new row for relation \"reservations\" violates check constraint",
    constraint_name: "reservations_amount_paid_within_maximum", table_name: "reservations",
  });
  assert.equal(paid?.kind, "unprocessable");
  assert.equal(paid?.detail, "The reservation's payments would add up to more than 1,000,000,000,000, the most one reservation takes.");
  assert.deepEqual(paid?.extra.errors?.map((error) => error.path), ["amount"]);
  for (
    const [constraint, table, field] of [
      ["rate_plans_nightly_price_within_maximum", "rate_plans", "nightlyPrice"],
      ["reservations_total_amount_within_maximum", "reservations", "totalAmount"],
      ["payments_amount_within_maximum", "payments", "amount"],
      ["payment_links_amount_within_maximum", "payment_links", "amount"],
    ]
  ) {
    const refused = httpErrorFromDatabase({ code: "23514", message: "m", constraint_name: constraint, table_name: table });
    assert.equal(refused?.status, 422, constraint);
    assert.deepEqual(refused?.extra.errors?.map((error) => error.path), [field], constraint);
    assert.match(refused!.detail, /at most 1,000,000,000(,000)?\.$/, constraint);
  }
});

Deno.test("a delete's foreign key refusal is still-referenced, naming the referrer from the error's table", async () => {
  const refused = deleteRefusal({ code: "23503", message: "m", table_name: "reservations", constraint_name: "x_fkey" }, "units");
  assert.equal(refused?.kind, "still-referenced");
  assert.equal(refused?.detail, "It cannot be deleted while reservations refer to it. Archive it instead (status archived).");
  assert.equal((await problemResponse(refused!).json()).referencedBy, "reservations");
  assert.equal(deleteRefusal({ code: "23505", message: "m" }, "units"), null);
});

Deno.test("values the database cannot take are 422s; a refusal by row-level security is a 403 in its own words", () => {
  for (const code of ["23502", "22001", "22003", "22007", "22008", "22009", "22P02", "22023", "22021", "22P05"]) {
    assert.equal(httpErrorFromDatabase({ code, message: "invalid input" })?.status, 422, code);
  }
  const refused = httpErrorFromDatabase({ code: "42501", message: "new row violates row-level security policy" });
  assert.deepEqual([refused?.status, refused?.kind, refused?.detail], [403, "forbidden", "New row violates row-level security policy."]);
  assert.equal(httpErrorFromDatabase(Object.assign(new Error("deadlock detected"), { code: "40P01" })), null);
  assert.equal(httpErrorFromDatabase("a string"), null);
  assert.equal(httpErrorFromDatabase(null), null);
});
