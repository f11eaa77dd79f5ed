import { z } from "zod";
import { MAX_PAGE_SIZE, pageQuery, queryInteger } from "../db/pagination.ts";
import { id, oneOrMany, timestamp } from "../http/schemas.ts";
import { templateKeys } from "./templates/sources.ts";

// The templates events send, and the names the operator settings screen uses.
export const preferenceTemplateKeys = [...templateKeys, "check_in_alerts", "nightly_summary", "marketing_emails"] as const;
export const channels = ["email", "sms", "push", "in_app"] as const;
export const recipientTypes = ["user", "guest", "admin", "system"] as const;
// `skipped` is ours, beside the three statuses docs/contract.md guarantees: an opt-out or a disabled channel.
export const notificationStatuses = ["pending", "sent", "failed", "skipped"] as const;

export const notification = z.object({
  id,
  tenantId: id,
  recipientId: id.nullable(),
  recipientType: z.enum(recipientTypes),
  templateKey: z.enum(templateKeys),
  channel: z.enum(channels),
  subject: z.string().nullable().meta({ description: "Null until the notification is rendered." }),
  body: z.string().meta({ description: "The rendered plain-text body; empty until rendered." }),
  status: z.enum(notificationStatuses),
  statusReason: z.string().nullable().meta({ description: "Why it failed or was skipped." }),
  attempts: z.number().int().meta({ description: "Delivery attempts so far." }),
  reservationId: id.nullable(),
  accessCodeId: id.nullable(),
  sentAt: timestamp.nullable(),
  createdAt: timestamp,
  updatedAt: timestamp,
}).meta({ id: "Notification" });

export const listNotificationsQuery = z.strictObject({
  ...pageQuery,
  status: oneOrMany(notificationStatuses).optional(),
  templateKey: oneOrMany(templateKeys).optional(),
  reservationId: id.optional(),
});

export const notificationPreference = z.object({
  templateKey: z.enum(preferenceTemplateKeys),
  channel: z.enum(channels),
  enabled: z.boolean().meta({ description: "false opts the tenant out; a pair without a row is enabled." }),
  updatedAt: timestamp,
}).meta({ id: "NotificationPreference" });

export const setPreferenceBody = z.strictObject({
  templateKey: z.enum(preferenceTemplateKeys),
  channel: z.enum(channels),
  enabled: z.boolean(),
}).meta({ id: "NotificationPreferenceSet" });

// At most 7 templates by 4 channels: one page holds every preference.
export const listPreferencesQuery = z.strictObject({
  ...pageQuery,
  limit: queryInteger(1, MAX_PAGE_SIZE, `Items per page, 1 to ${MAX_PAGE_SIZE}; all of them by default.`).default(MAX_PAGE_SIZE),
});
