import { sql, type Transaction } from "kysely";
import type { z } from "zod";
import type { DB } from "../db/database.ts";
import type { Reads } from "../db/reads.ts";
import { type CalendarField, calendarFields, type rateCalendarChange, type rateCalendarDay, weekdays } from "./schema.ts";

type Day = z.output<typeof rateCalendarDay>;

// Each field's column.
const columns: Record<CalendarField, string> = {
  price: "price",
  extraAdultPrice: "extra_adult_price",
  extraChildPrice: "extra_child_price",
  minStay: "min_stay",
  maxStay: "max_stay",
  closedToArrival: "closed_to_arrival",
  closedToDeparture: "closed_to_departure",
  closed: "closed",
};

// The plan's calendar as it applies (private.rate_plan_calendars), under the request's
// policies; undefined when the plan is not the tenant's.
export async function readRateCalendar(db: Reads, ratePlanId: string, from: string, to: string) {
  const plan = await db.selectFrom("rate_plans").select(["id", "currency"]).where("id", "=", ratePlanId).executeTakeFirst();
  if (!plan) return undefined;
  const { rows } = await sql<Day>`
    select c.day::text as date, c.price, c.extra_adult_price as "extraAdultPrice", c.extra_child_price as "extraChildPrice",
           c.min_stay as "minStay", c.max_stay as "maxStay", c.closed_to_arrival as "closedToArrival",
           c.closed_to_departure as "closedToDeparture", c.closed
    from private.rate_plan_calendars(array[${ratePlanId}::uuid], ${from}::date, ${to}::date) c`.execute(db);
  return { ratePlanId: plan.id, currency: plan.currency, days: rows };
}

type Change = z.output<typeof rateCalendarChange>;

// The changes in order, each its plan, range, ISO days of the week and the columns it sets
// (private.write_rate_calendar, under the request's policies: owners and admins write;
// another tenant's plan is refused by the days' foreign key).
export async function writeRateCalendar(db: Transaction<DB>, changes: Change[]) {
  const written = changes.map((change) => ({
    plan: change.ratePlanId, from: change.from, to: change.to,
    isodays: (change.weekdays ?? weekdays).map((day) => weekdays.indexOf(day) + 1),
    set: Object.fromEntries(
      calendarFields.filter((field) => change[field] !== undefined).map((field) => [columns[field], change[field]]),
    ),
  }));
  const { rows: [row] } = await sql<{ days: number }>`
    select private.write_rate_calendar(${JSON.stringify(written)}::jsonb) as days`.execute(db);
  return { days: row?.days ?? 0 };
}
