import type { Endpoint } from "../http/endpoint.ts";
import { json } from "../http/json.ts";
import { idParams } from "../http/schemas.ts";
import { tenantEndpoint } from "../http/session-endpoints.ts";
import type { RequestScope } from "../http/request-scope.ts";
import { readRateCalendar, writeRateCalendar } from "./queries.ts";
import { rateCalendar, rateCalendarQuery, rateCalendarWritten, setRateCalendarBody } from "./schema.ts";

const tag = "Rate calendar";

// What a rate plan charges and allows, day by day (supabase/schemas/rates.sql).
export function rateCalendarEndpoints(scope: RequestScope): Endpoint[] {
  return [
    tenantEndpoint(scope, {
      method: "GET", path: "/v1/rate-plans/{id}/calendar", operationId: "getRateCalendar", tag, access: "member",
      summary: "Read a rate plan's calendar from one day to another (both included): each day's prices and restrictions as " +
        "they apply, a derived plan's from its base plan.",
      params: idParams, resource: "rate plan", query: rateCalendarQuery, problems: ["unprocessable"],
      success: [{ status: 200, description: "The plan's days.", schema: rateCalendar }],
    }, async ({ db, params, query, missing }) => {
      const calendar = await readRateCalendar(db, params.id, query.from, query.to);
      if (!calendar) throw missing();
      return json(200, calendar);
    }),
    tenantEndpoint(scope, {
      method: "PATCH", path: "/v1/rate-calendar", operationId: "setRateCalendar", tag, access: "manager",
      summary: "Set prices and restrictions on rate plans' days in bulk: each change a plan, a range of days and, optionally, " +
        "some days of the week; all changes in one transaction. Setting the same values again changes nothing.",
      body: setRateCalendarBody, problems: ["unknown-reference", "unprocessable"],
      success: [{ status: 200, description: "Written.", schema: rateCalendarWritten }],
    }, async ({ db, body }) => json(200, await writeRateCalendar(db, body.changes))),
  ];
}
