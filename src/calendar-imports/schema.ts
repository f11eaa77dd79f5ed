import { z } from "zod";
import { pageQuery } from "../db/pagination.ts";
import { answeredDate, id, patchOf, text, timestamp } from "../http/schemas.ts";

const url = z.string().min(1).max(2000).meta({
  description: "The feed's address, as the other service gives it (https). Checked when saved and, after its name " +
    "resolves, at every fetch: no private or local address.",
});

export const createCalendarImportBody = z.strictObject({
  unitId: id.meta({ description: "The unit the feed's events hold." }),
  name: text(100).meta({ description: "What the feed is, like \"Airbnb\" or \"Vrbo listing 4412\"." }),
  url,
}).meta({ id: "CalendarImportCreate" });

export const updateCalendarImportBody = patchOf({
  name: text(100),
  url: url.meta({ description: "A new address is fetched at once." }),
}).meta({ id: "CalendarImportUpdate" });

export const calendarImportOutcomes = ["changed", "unchanged", "failed"] as const;
export const conflictReasons = ["stay", "block", "room_type_full"] as const;

export const calendarImport = z.object({
  id,
  propertyId: id,
  unitId: id,
  name: z.string(),
  url: z.string(),
  nextFetchAt: timestamp,
  lastFetchedAt: timestamp.nullable(),
  lastSucceededAt: timestamp.nullable(),
  lastOutcome: z.enum(calendarImportOutcomes).nullable().meta({
    description: "How the last fetch ended: its events changed what is held, it said nothing new, or it failed.",
  }),
  lastErrorCode: z.string().nullable().meta({
    description: "Why the last fetch failed: http-status, too-large, not-a-calendar, timeout, dns-failure, " +
      "address-not-allowed and the other reasons of an outbound request (docs/api.md, Calendar imports).",
  }),
  lastError: z.string().nullable(),
  failures: z.number().int().meta({ description: "Failed fetches in a row; the third tells the owners and admins." }),
  failingSince: timestamp.nullable(),
  events: z.number().int().meta({ description: "Events of the last calendar read that hold nights from today on." }),
  conflicts: z.array(z.object({
    startsOn: answeredDate,
    endsOn: answeredDate,
    reason: z.enum(conflictReasons),
  })).meta({
    description: "Runs of nights the calendar holds that the unit could not be held for: it holds a stay, another block " +
      "covers them, or its room type would have too few rooms for its stays. endsOn is exclusive.",
  }),
  createdBy: id.nullable(),
  createdAt: timestamp,
  updatedAt: timestamp,
}).meta({ id: "CalendarImport" });

export const listCalendarImportsQuery = z.strictObject({
  ...pageQuery,
  propertyId: id.optional(),
  unitId: id.optional(),
});
