import { sql, type Transaction } from "kysely";
import type { z } from "zod";
import { camelSelection } from "../db/columns.ts";
import type { DB } from "../db/database.ts";
import { type Page, paginate } from "../db/pagination.ts";
import type { Reads } from "../db/reads.ts";
import type { listInboxQuery } from "./schema.ts";

const messageColumns = camelSelection(["id", "notification_id", "template_key", "title", "body", "url", "read_at", "created_at"]);

// No query here names the user: the table's policies show and update only the caller's own
// messages in the request's tenant (supabase/migrations/20261126000100_all_channels.sql),
// so another user's message is to these queries what a missing one is.

export function listInboxMessages(db: Reads, filter: z.output<typeof listInboxQuery>, page: Page) {
  let query = db.selectFrom("inbox_messages").select(messageColumns)
    .orderBy("created_at", "desc").orderBy("id", "desc");
  if (filter.unread !== undefined) query = query.where("read_at", filter.unread ? "is" : "is not", null);
  if (filter.templateKey) query = query.where("template_key", "in", filter.templateKey);
  return paginate(query, page, { tenant: ["tenant_id"] });
}

// Answered from the partial index of unread messages (inbox_messages_tenant_user_unread_idx).
export async function countUnread(db: Reads): Promise<number> {
  const row = await db.selectFrom("inbox_messages").select(sql<number>`count(*)`.as("unread"))
    .where("read_at", "is", null).executeTakeFirstOrThrow();
  return row.unread;
}

// A message already read keeps the time it was first read: the table's trigger puts the old
// read_at back, so marking twice is answered with the first mark.
export function markRead(db: Transaction<DB>, id: string) {
  return db.updateTable("inbox_messages").set({ read_at: sql<string>`now()` }).where("id", "=", id)
    .returning(messageColumns).executeTakeFirst();
}

export async function markAllRead(db: Transaction<DB>): Promise<number> {
  const result = await db.updateTable("inbox_messages").set({ read_at: sql<string>`now()` })
    .where("read_at", "is", null).executeTakeFirst();
  return Number(result.numUpdatedRows);
}
