import type { Endpoint } from "../http/endpoint.ts";
import { checkEndpointUrl, type WebhookEndpointPolicy } from "../webhook-delivery/endpoint.ts";
import { HttpError } from "../http/problem.ts";
import type { RequestScope } from "../http/request-scope.ts";
import { resourceEndpoints } from "../http/resource-endpoints.ts";
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

// Whether a URL may be fetched at all (src/webhook-delivery/endpoint.ts, as for a
// webhook's): the refusal's sentence, or null. The worker checks again at every fetch.
export type CalendarImportRouteSettings = { refuseUrl: (url: string) => string | null };

export function calendarImportRouteSettings(policy: WebhookEndpointPolicy): CalendarImportRouteSettings {
  return {
    refuseUrl: (url) => {
      const checked = checkEndpointUrl(url, policy);
      return checked.ok ? null : `The calendar cannot be fetched from this URL: ${checked.message}.`;
    },
  };
}

function checkUrl(settings: CalendarImportRouteSettings, url: string | undefined) {
  if (url === undefined) return;
  const refused = settings.refuseUrl(url);
  if (refused) throw new HttpError("unprocessable", refused, { errors: [{ path: "url", message: refused }] });
}

// Owners and admins subscribe a unit to another service's calendar; the webhooks worker
// fetches it and holds the unit on the nights its events cover (docs/calendar-imports.md).
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
      checkUrl(settings, body.url);
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
        checkUrl(settings, body.url);
        return updateCalendarImport(db, id, body);
      },
    }),
    imports.remove({ access: "manager", summary: "Delete a calendar import and the holds it made." }, deleteCalendarImport),
  ];
}
