import { z } from "zod";
import { pageQuery } from "../db/pagination.ts";
import { id, oneOrMany, queryBoolean, timestamp } from "../http/schemas.ts";

// The templates an in_app notification delivers to inboxes (inbox_messages_template_key_check):
// a check-in's alert to every member, and a failed delivery's or a disabled webhook
// subscription's notice to owners and admins.
export const inboxTemplateKeys = ["check_in_alerts", "delivery_failed", "webhook_disabled", "calendar_import_failing"] as const;

export const inboxMessage = z.object({
  id,
  notificationId: id.meta({ description: "The in_app notification that delivered it." }),
  templateKey: z.enum(inboxTemplateKeys),
  title: z.string(),
  body: z.string().meta({ description: "Plain text." }),
  url: z.string().nullable().meta({
    description: "Where in a client app the message leads, a path such as /reservations/<id>; null when it leads nowhere.",
  }),
  readAt: timestamp.nullable().meta({ description: "When the caller first marked it read; null while unread." }),
  createdAt: timestamp,
}).meta({ id: "InboxMessage", description: "One message of the caller's inbox in the tenant." });

export const listInboxQuery = z.strictObject({
  ...pageQuery,
  unread: queryBoolean.optional().meta({ description: "true: only unread messages; false: only read ones." }),
  templateKey: oneOrMany(inboxTemplateKeys).optional(),
});

export const inboxUnreadCount = z.object({
  unread: z.number().int().meta({ description: "The caller's unread messages in the tenant." }),
}).meta({ id: "InboxUnreadCount" });

export const inboxMarkedRead = z.object({
  marked: z.number().int().meta({ description: "How many unread messages this call marked read (0 when none were)." }),
}).meta({ id: "InboxMarkedRead" });
