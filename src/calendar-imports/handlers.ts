import type { Endpoint } from "../http/endpoint.ts";
import type { RequestScope } from "../http/request-scope.ts";
import { resourceEndpoints } from "../http/resource-endpoints.ts";
import type { WebhookEndpointPolicy } from "../webhook-delivery/endpoint.ts";
import { checkOutboundUrl, type OutboundUrlSettings, outboundUrlSettings } from "../webhook-delivery/url-settings.ts";
import {
  deleteCalendarImport,
  findCalendarImport,
  insertCalendarImport,
  listCalendarImports,
  lockCalendarImport,
  updateCalendarImport,
} from "./queries.ts";
import { calendarImport, createCalendarImportBody, listCalendarImportsQuery, updateCalendarImportBody } from "./schema.ts";

const tag = "Calendar imports";

// Whether a calendar may be fetched from a URL at all (src/webhook-delivery/url-settings.ts).
export type CalendarImportRouteSettings = OutboundUrlSettings;

export function calendarImportRouteSettings(policy: WebhookEndpointPolicy): CalendarImportRouteSettings {
  return outboundUrlSettings(policy, "The calendar cannot be fetched from this URL");
}

// Owners and admins subscribe a unit to another service's calendar; the webhooks worker
// fetches it and holds the unit on the nights its events cover (docs/api.md, Calendar imports).
export function calendarImportEndpoints(scope: RequestScope, settings: CalendarImportRouteSettings): Endpoint[] {
  const imports = resourceEndpoints(scope, {
    tag, collection: "calendar-imports", schema: calendarImport,
    name: { one: "CalendarImport", many: "CalendarImports" }, noun: { one: "calendar import", many: "calendar imports" },
  });
  return [
    imports.list({ access: "manager", summary: "List the tenant's calendar imports, newest first.", query: listCalendarImportsQuery },
      listCalendarImports),
    imports.create({
      access: "manager", body: createCalendarImportBody, problems: ["unknown-reference", "unprocessable", "already-exists"],
      summary: "Import an iCal feed into a unit: it is fetched at once and then every 15 minutes, and its events hold the unit.",
    }, async (db, body) => {
      checkOutboundUrl(settings, body.url);
      return await insertCalendarImport(db, body);
    }),
    imports.get({ access: "manager", summary: "Read a calendar import: its last fetch and the nights it could not hold." },
      findCalendarImport),
    imports.update({
      access: "manager", body: updateCalendarImportBody, problems: ["unprocessable", "already-exists"],
      summary: "Rename a calendar import or give it a new address, which is fetched at once.",
    }, {
      lock: lockCalendarImport,
      update: (db, id, body) => {
        checkOutboundUrl(settings, body.url);
        return updateCalendarImport(db, id, body);
      },
    }),
    imports.remove({ access: "manager", summary: "Delete a calendar import and the holds it made." }, deleteCalendarImport),
  ];
}
