// The calendar imports' side of the webhooks worker's run: the imports that are due are
// claimed (each with a lease, so that another run passes them by), fetched with the
// outbound requests' safety (src/webhook-delivery/endpoint.ts), read (ical-events.ts) and
// applied by private.apply_calendar_import, which holds the unit and records the outcome.
import type { Logger } from "../logging/logger.ts";
import type { Sql } from "../db/pool.ts";
import type { DocumentGetResult } from "../webhook-delivery/endpoint.ts";
import { heldNights, type HeldNights } from "./ical-events.ts";

export const CALENDAR_IMPORT_USER_AGENT = "pms-calendar-import/1";

export type CalendarImportFetch = (request: { url: string; headers: Record<string, string> }) => Promise<DocumentGetResult>;

export type CalendarImportWorkerDependencies = {
  sql: Sql;
  fetch: CalendarImportFetch;
  logger: Logger;
  settings: { claimSize: number; leaseSeconds: number; inParallel: number };
};

export const defaultCalendarImportSettings = { claimSize: 20, leaseSeconds: 120, inParallel: 4 };

export type CalendarImportRunSummary = { claimed: number; changed: number; unchanged: number; failed: number; gone: number };

type Claimed = {
  tenant_id: string;
  id: string;
  url: string;
  etag: string | null;
  last_modified: string | null;
  timezone: string;
  // The nights that can be held, on the property's clock: [first_night, end_night).
  first_night: string;
  end_night: string;
};

type Fetched =
  | { outcome: "unchanged" }
  | { outcome: "failed"; code: string; message: string }
  | { outcome: "fetched"; etag: string | null; lastModified: string | null; events: HeldNights[] };

export async function runCalendarImports(deps: CalendarImportWorkerDependencies): Promise<CalendarImportRunSummary> {
  const summary: CalendarImportRunSummary = { claimed: 0, changed: 0, unchanged: 0, failed: 0, gone: 0 };
  const claimed = await deps.sql<Claimed[]>`
    select tenant_id, id, url, etag, last_modified, timezone, first_night, end_night
    from private.claim_calendar_imports(${deps.settings.claimSize}, ${deps.settings.leaseSeconds})`;
  summary.claimed = claimed.length;
  const queue = [...claimed];
  const lanes = Array.from({ length: Math.min(deps.settings.inParallel, queue.length) }, async () => {
    for (let next = queue.shift(); next; next = queue.shift()) {
      const fetched = await fetchCalendar(deps, next);
      // A failure to apply leaves the lease to run out: the import is fetched again then.
      try {
        const [row] = await deps.sql<{ outcome: string | null }[]>`
          select private.apply_calendar_import(${next.tenant_id}::uuid, ${next.id}::uuid, ${JSON.stringify(fetched)}::text::jsonb)
            as outcome`;
        const outcome = row?.outcome ?? null;
        if (outcome === "changed" || outcome === "unchanged" || outcome === "failed") summary[outcome]++;
        else summary.gone++;
      } catch (error) {
        deps.logger.warn("a calendar import could not be applied", { calendarImportId: next.id, error: String(error) });
        summary.failed++;
      }
    }
  });
  await Promise.all(lanes);
  return summary;
}

async function fetchCalendar(deps: CalendarImportWorkerDependencies, claimed: Claimed): Promise<Fetched> {
  const headers: Record<string, string> = { accept: "text/calendar, */*;q=0.5" };
  if (claimed.etag) headers["if-none-match"] = claimed.etag;
  if (claimed.last_modified) headers["if-modified-since"] = claimed.last_modified;
  const result = await deps.fetch({ url: claimed.url, headers });
  if (result.outcome !== "response") return { outcome: "failed", code: result.reason, message: result.message };
  if (result.status === 304) return { outcome: "unchanged" };
  const window = { from: claimed.first_night, to: claimed.end_night };
  const read = heldNights(new TextDecoder().decode(result.body), claimed.timezone, window);
  if (!read.ok) return { outcome: "failed", code: "not-a-calendar", message: read.message };
  return {
    outcome: "fetched",
    etag: result.headers.get("etag") ?? null,
    lastModified: result.headers.get("last-modified") ?? null,
    events: read.events,
  };
}
