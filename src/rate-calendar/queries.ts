import { sql, type Transaction } from "kysely";
import type { z } from "zod";
import type { DB } from "../db/database.ts";
import type { Reads } from "../db/reads.ts";
import { type CalendarField, calendarFields, type rateCalendarChange, type rateCalendarDay, weekdays } from "./schema.ts";

type Day = z.output<typeof rateCalendarDay>;

// Each field's column and type: a value written with its type, so that a null is one.
const columns: Record<CalendarField, { column: string; type: string }> = {
  price: { column: "price", type: "bigint" },
  extraAdultPrice: { column: "extra_adult_price", type: "bigint" },
  extraChildPrice: { column: "extra_child_price", type: "bigint" },
  minStay: { column: "min_stay", type: "integer" },
  maxStay: { column: "max_stay", type: "integer" },
  closedToArrival: { column: "closed_to_arrival", type: "boolean" },
  closedToDeparture: { column: "closed_to_departure", type: "boolean" },
  closed: { column: "closed", type: "boolean" },
};

// The plan's calendar as it applies (private.rate_plan_calendar), under the request's
// policies; undefined when the plan is not the tenant's.
export async function readRateCalendar(db: Reads, ratePlanId: string, from: string, to: string) {
  const plan = await db.selectFrom("rate_plans").select(["id", "currency"]).where("id", "=", ratePlanId).executeTakeFirst();
  if (!plan) return undefined;
  const { rows } = await sql<Day>`
    select c.day::text as date, c.price, c.extra_adult_price as "extraAdultPrice", c.extra_child_price as "extraChildPrice",
           c.min_stay as "minStay", c.max_stay as "maxStay", c.closed_to_arrival as "closedToArrival",
           c.closed_to_departure as "closedToDeparture", c.closed
    from private.rate_plan_calendar(${ratePlanId}::uuid, ${from}::date, ${to}::date) c`.execute(db);
  return { ratePlanId: plan.id, currency: plan.currency, days: rows };
}

type Change = z.output<typeof rateCalendarChange>;

// Changes that set the same fields, each on a plan and range none of the others touches,
// can be written by one statement in any order; the changes are taken in order, in runs of
// such changes.
function runsOfChanges(changes: Change[]): Change[][] {
  const fieldsOf = (change: Change) => calendarFields.filter((field) => change[field] !== undefined).join(",");
  const meets = (a: Change, b: Change) => a.ratePlanId === b.ratePlanId && a.from <= b.to && b.from <= a.to;
  const runs: Change[][] = [];
  for (const change of changes) {
    const run = runs.at(-1);
    if (run && fieldsOf(run[0]!) === fieldsOf(change) && !run.some((earlier) => meets(earlier, change))) run.push(change);
    else runs.push([change]);
  }
  return runs;
}

// Each run of changes sets its values on the chosen days of its ranges, in one statement;
// days left with no value of their own are then removed, the plan's defaults again. The
// policies let owners and admins write; another tenant's plan is refused by the days'
// foreign key. The tenant is the request's, read once for the statement rather than by
// the column's default for every day.
export async function writeRateCalendar(db: Transaction<DB>, changes: Change[]) {
  let days = 0;
  for (const run of runsOfChanges(changes)) {
    const given = calendarFields.filter((field) => run[0]![field] !== undefined).map((field) => ({ field, ...columns[field] }));
    const rows = run.map((change) => ({
      plan: change.ratePlanId, from: change.from, to: change.to,
      isodays: (change.weekdays ?? weekdays).map((day) => weekdays.indexOf(day) + 1),
      ...Object.fromEntries(given.map(({ field, column }) => [column, change[field] ?? null])),
    }));
    const names = sql.join(given.map(({ column }) => sql.ref(column)));
    const values = sql.join(given.map(({ column }) => sql`c.${sql.ref(column)}`));
    const shape = sql.join([
      sql`plan uuid, "from" date, "to" date, isodays integer[]`,
      ...given.map(({ column, type }) => sql`${sql.ref(column)} ${sql.raw(type)}`),
    ]);
    const updates = sql.join(given.map(({ column }) => sql`${sql.ref(column)} = excluded.${sql.ref(column)}`));
    const written = await sql`
      insert into public.rate_plan_days (tenant_id, rate_plan_id, day, ${names})
      select (select private.request_tenant_id()), c.plan, d::date, ${values}
      from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) as c(${shape})
      cross join generate_series(c."from", c."to", interval '1 day') d
      where extract(isodow from d)::integer = any(c.isodays)
      on conflict on constraint rate_plan_days_pkey do update set ${updates}`.execute(db);
    days += Number(written.numAffectedRows ?? 0n);
  }
  const planIds = [...new Set(changes.map((change) => change.ratePlanId))];
  await sql`
    delete from public.rate_plan_days
    where rate_plan_id = any(${planIds}::uuid[])
      and num_nonnulls(price, extra_adult_price, extra_child_price, min_stay, max_stay, closed_to_arrival,
                       closed_to_departure, closed) = 0`.execute(db);
  return { days };
}
