import { z } from "zod";
import { MAX_PAGE_SIZE, pageQuery, queryInteger } from "../db/pagination.ts";
import { id, oneOrMany, timestamp } from "../http/schemas.ts";
import { templateKeys } from "./templates/sources.ts";

// What a notification can be: the guest's templates, the staff's check-in alerts and
// nightly summary, and the system notice of a notification that failed
// (docs/notifications-channels.md).
export const notificationTemplateKeys = [
  ...templateKeys, "check_in_alerts", "nightly_summary", "delivery_failed", "webhook_disabled", "calendar_import_failing",
] as const;
// Every template a preference can switch off, and marketing_emails, a preference the
// operator settings screen shows under which nothing is sent.
export const preferenceTemplateKeys = [...notificationTemplateKeys, "marketing_emails"] as const;
export const channels = ["email", "sms", "push", "in_app"] as const;
export const recipientTypes = ["user", "guest", "admin", "system"] as const;
// `skipped` is ours, beside the three statuses docs/contract.md guarantees: an opt-out or a disabled channel.
export const notificationStatuses = ["pending", "sent", "failed", "skipped"] as const;
// What the provider reported of a sent message (docs/notifications-delivery.md): for email
// delivered, deferred, bounced, dropped, spam_report; for SMS delivered, undelivered, failed.
export const deliveryStates = ["delivered", "deferred", "bounced", "dropped", "spam_report", "undelivered", "failed"] as const;
export type DeliveryState = typeof deliveryStates[number];
export const deliveryProviders = ["sendgrid", "sms"] as const;

export const notification = z.object({
  id,
  tenantId: id,
  recipientId: id.nullable().meta({ description: "The guest or member it is for; null for a system notification." }),
  recipientType: z.enum(recipientTypes).meta({
    description: "guest: a guest; user: a staff member; admin: an owner or admin; system: no human recipient " +
      "(a notice for the tenant's owners and admins, in their inboxes).",
  }),
  templateKey: z.enum(notificationTemplateKeys),
  channel: z.enum(channels),
  subject: z.string().nullable().meta({
    description: "The email's subject, or an inbox or push message's title; null until rendered, and for SMS.",
  }),
  body: z.string().meta({ description: "The rendered plain-text body (for SMS, the text sent); empty until rendered." }),
  status: z.enum(notificationStatuses),
  statusReason: z.string().nullable().meta({ description: "Why it failed or was skipped." }),
  attempts: z.number().int().meta({ description: "Delivery attempts so far." }),
  reservationId: id.nullable(),
  accessCodeId: id.nullable(),
  sentAt: timestamp.nullable(),
  deliveryState: z.enum(deliveryStates).nullable().meta({
    description: "What the provider last reported of the message after accepting it (status sent): delivered, deferred " +
      "(a temporary refusal it retries), bounced, dropped, spam_report for email; delivered, undelivered, failed for SMS. " +
      "Null until it reports. Reports arriving out of order settle on the same state.",
  }),
  deliveryStateAt: timestamp.nullable().meta({ description: "When the provider says that happened." }),
  deliveryReason: z.string().nullable().meta({ description: "The provider's words for it: an SMTP answer, a drop reason." }),
  deliveryCode: z.string().nullable().meta({
    description: "The provider's code for it: an enhanced SMTP status like 5.1.1, the SMS provider's error code like 30003.",
  }),
  createdAt: timestamp,
  updatedAt: timestamp,
}).meta({ id: "Notification" });

export const notificationEvent = z.object({
  id,
  provider: z.enum(deliveryProviders),
  event: z.string().meta({
    description: "The provider's own name for it: SendGrid's processed, deferred, delivered, bounce, dropped, spamreport, " +
      "open, click...; the SMS provider's queued, sent, delivered, undelivered, failed...",
  }),
  deliveryState: z.enum(deliveryStates).nullable().meta({ description: "The delivery state it reports; null for one that reports none (an open, a click)." }),
  occurredAt: timestamp.meta({ description: "When the provider says it happened (for SMS, which gives no time: when it arrived)." }),
  reason: z.string().nullable(),
  code: z.string().nullable(),
  receivedAt: timestamp,
}).meta({ id: "NotificationEvent", description: "One report of the provider about the message, stored once." });

// The 100 newest events come with a notification read by id.
export const MAX_EVENTS_SHOWN = 100;

export const notificationWithEvents = z.object({
  ...notification.shape,
  events: z.array(notificationEvent).meta({ description: `The provider's reports, newest first (the ${MAX_EVENTS_SHOWN} newest).` }),
}).meta({ id: "NotificationWithEvents" });

export const listNotificationsQuery = z.strictObject({
  ...pageQuery,
  status: oneOrMany(notificationStatuses).optional(),
  templateKey: oneOrMany(notificationTemplateKeys).optional(),
  reservationId: id.optional(),
  deliveryState: oneOrMany(deliveryStates).optional(),
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

// At most 8 templates by 4 channels: one page holds every preference.
export const listPreferencesQuery = z.strictObject({
  ...pageQuery,
  limit: queryInteger(1, MAX_PAGE_SIZE, `Items per page, 1 to ${MAX_PAGE_SIZE}; all of them by default.`).default(MAX_PAGE_SIZE),
});
