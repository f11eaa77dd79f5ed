import { type Expression, type Kysely, sql, type Transaction } from "kysely";
import type { z } from "zod";
import { camelSelection } from "../db/columns.ts";
import type { DB } from "../db/database.ts";
import { type Page, paginate } from "../db/pagination.ts";
import type { Reads } from "../db/reads.ts";
import type { FeedEvent } from "./ical.ts";
import type { calendarFeedStatuses, createCalendarFeedBody, listCalendarFeedsQuery, updateCalendarFeedBody } from "./schema.ts";
import type { IssuedFeedToken } from "./token.ts";

type Status = (typeof calendarFeedStatuses)[number];

const status = sql<Status>`case when revoked_at is not null then 'revoked' else 'active' end`;

const columns = [
  ...camelSelection([
    "id", "property_id", "unit_id", "room_type_id", "name", "last_four", "created_by", "created_at", "updated_at", "revoked_at",
  ]),
  status.as("status"),
];

export async function listCalendarFeeds(db: Reads, filter: z.output<typeof listCalendarFeedsQuery>, page: Page) {
  let query = db.selectFrom("calendar_feeds").select(columns).orderBy("created_at", "desc").orderBy("id");
  if (filter.propertyId) query = query.where("property_id", "=", filter.propertyId);
  if (filter.unitId) query = query.where("unit_id", "=", filter.unitId);
  if (filter.roomTypeId) query = query.where("room_type_id", "=", filter.roomTypeId);
  if (filter.status) query = query.where(status as Expression<Status>, "in", filter.status);
  return await paginate(query, page, { tenant: ["tenant_id"], property: "property_id" });
}

export async function findCalendarFeed(db: Reads, id: string) {
  return await db.selectFrom("calendar_feeds").select(columns).where("id", "=", id).executeTakeFirst();
}

export async function lockCalendarFeed(db: Transaction<DB>, id: string) {
  return await db.selectFrom("calendar_feeds").select(columns).where("id", "=", id).forUpdate().executeTakeFirst();
}

// The property comes from the unit or room type (private.calendar_feed_before_write).
export async function insertCalendarFeed(
  db: Transaction<DB>,
  input: z.output<typeof createCalendarFeedBody>,
  issued: IssuedFeedToken,
) {
  return await db.insertInto("calendar_feeds")
    .values({
      // Filled from the unit or room type by the table's trigger.
      property_id: sql<string>`null`,
      unit_id: input.unitId ?? null,
      room_type_id: input.roomTypeId ?? null,
      name: input.name,
      token_hash: sql<string>`decode(${issued.hashHex}, 'hex')`,
      last_four: issued.lastFour,
    })
    .returning(columns).executeTakeFirstOrThrow();
}

export async function updateCalendarFeed(db: Transaction<DB>, id: string, input: z.output<typeof updateCalendarFeedBody>) {
  return await db.updateTable("calendar_feeds").set({ name: input.name }).where("id", "=", id).returning(columns)
    .executeTakeFirst();
}

// Revoking a revoked feed keeps its first time: DELETE is idempotent.
export async function revokeCalendarFeed(db: Transaction<DB>, id: string) {
  return await db.updateTable("calendar_feeds").set({ revoked_at: sql<string>`coalesce(revoked_at, now())` })
    .where("id", "=", id).returning("id").executeTakeFirst();
}

type EventRow = { kind: "feed" | "stay" | "block" | "full"; eventId: string; startsOn: string | null; endsOn: string | null; changedAt: Date };

export type FeedContent = { name: string; events: (Omit<FeedEvent, "summary"> & { kind: "stay" | "block" | "full" })[] };

// A subscriber has no session and no tenant: the feed is one call of the definer function
// that answers for a token and nothing else, as the API's login role, as the API key
// check is.
export async function readFeed(db: Kysely<DB>, tokenHashHex: string): Promise<FeedContent | null> {
  const { rows } = await sql<EventRow>`
    select kind, event_id as "eventId", starts_on::text as "startsOn", ends_on::text as "endsOn", changed_at as "changedAt"
    from private.calendar_feed_events(decode(${tokenHashHex}, 'hex'))`.execute(db);
  const [feed, ...events] = rows;
  if (!feed || feed.kind !== "feed") return null;
  return {
    name: feed.eventId,
    events: events.map((row) => ({
      kind: row.kind as "stay" | "block" | "full",
      uid: `${row.kind}-${row.eventId}@calendar-feed`,
      startsOn: row.startsOn!,
      endsOn: row.endsOn!,
      changedAt: new Date(row.changedAt),
    })),
  };
}
