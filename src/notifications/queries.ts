import type { Transaction } from "kysely";
import type { z } from "zod";
import { camelSelection } from "../db/columns.ts";
import type { DB } from "../db/database.ts";
import { type Page, paginate } from "../db/pagination.ts";
import type { Reads } from "../db/reads.ts";
import { type listNotificationsQuery, MAX_EVENTS_SHOWN, type setPreferenceBody } from "./schema.ts";

const notificationColumns = camelSelection([
  "id", "tenant_id", "recipient_id", "recipient_type", "template_key", "channel", "subject", "body", "status",
  "status_reason", "attempts", "reservation_id", "access_code_id", "sent_at", "delivery_state", "delivery_state_at",
  "delivery_reason", "delivery_code", "created_at", "updated_at",
]);

const eventColumns = camelSelection(["id", "provider", "event", "delivery_state", "occurred_at", "reason", "code"]);

const preferenceColumns = camelSelection(["template_key", "channel", "enabled", "updated_at"]);

// RLS limits every query to the request's tenant: a caller sees only its own tenant's notifications.
export function listNotifications(db: Reads, filter: z.output<typeof listNotificationsQuery>, page: Page) {
  let query = db.selectFrom("notifications").select(notificationColumns)
    .orderBy("created_at", "desc").orderBy("id", "desc");
  if (filter.status) query = query.where("status", "in", filter.status);
  if (filter.templateKey) query = query.where("template_key", "in", filter.templateKey);
  if (filter.reservationId) query = query.where("reservation_id", "=", filter.reservationId);
  if (filter.deliveryState) query = query.where("delivery_state", "in", filter.deliveryState);
  return paginate(query, page, { tenant: ["tenant_id"] });
}

// The notification with its newest events, newest first: two statements, sent together.
export async function findNotificationWithEvents(db: Reads, id: string) {
  const [found, events] = await Promise.all([
    db.selectFrom("notifications").select(notificationColumns).where("id", "=", id).executeTakeFirst(),
    db.selectFrom("notification_events").select([...eventColumns, "created_at as receivedAt"])
      .where("notification_id", "=", id)
      .orderBy("occurred_at", "desc").orderBy("created_at", "desc").orderBy("id", "desc")
      .limit(MAX_EVENTS_SHOWN)
      .execute(),
  ]);
  return found && { ...found, events };
}

export function listPreferences(db: Reads, page: Page) {
  const query = db.selectFrom("notification_preferences").select(preferenceColumns)
    .orderBy("template_key").orderBy("channel");
  return paginate(query, page, { tenant: ["tenant_id"] });
}

// One row per (templateKey, channel) in the tenant: created when the pair has none, else updated.
export function upsertPreference(db: Transaction<DB>, input: z.output<typeof setPreferenceBody>) {
  return db.insertInto("notification_preferences")
    .values({ template_key: input.templateKey, channel: input.channel, enabled: input.enabled })
    .onConflict((conflict) => conflict.columns(["tenant_id", "template_key", "channel"]).doUpdateSet({ enabled: input.enabled }))
    .returning(preferenceColumns)
    .executeTakeFirstOrThrow();
}
