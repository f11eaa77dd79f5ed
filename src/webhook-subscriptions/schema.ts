import { z } from "zod";
import { pageQuery } from "../db/pagination.ts";
import { id, oneOrMany, patchOf, queryBoolean, text, timestamp } from "../http/schemas.ts";

// The event types a subscription can ask for (private.webhook_event_types(), but for
// webhook.test, which goes only to the subscription a manager tests). docs/webhooks.md
// documents each one's payload.
export const webhookEventTypes = [
  "reservation.created", "reservation.updated", "reservation.checked_in", "reservation.checked_out",
  "reservation.cancelled", "payment.recorded", "access_code.created", "access_code.revoked",
  "task.status_changed", "guest.updated", "availability.changed", "rates.changed",
] as const;

export const deliveredEventTypes = [...webhookEventTypes, "webhook.test"] as const;

export const disabledReasons = ["manual", "gone", "failing"] as const;

const url = z.string().max(2000).meta({
  description: "Where the events are posted: an https URL (on the local stack also http to loopback). No user and " +
    "password in it; its host must not be, nor resolve to, a private, loopback or link-local address.",
  example: "https://channel.example.com/pms/webhooks",
});
const eventTypes = z.array(z.enum(webhookEventTypes)).max(20).meta({
  description: "The event types it receives; empty or left out: every type.",
});
const propertyIds = z.array(id).max(100).meta({
  description: "The properties whose events it receives (a guest's events: guests with a stay at one of them); " +
    "empty or left out: every property.",
});

export const createWebhookSubscriptionBody = z.strictObject({
  url,
  description: text(500).optional(),
  eventTypes: eventTypes.optional(),
  propertyIds: propertyIds.optional(),
  enabled: z.boolean().optional().meta({ description: "false: created disabled, for a test event first. Default true." }),
}).meta({ id: "WebhookSubscriptionCreate" });

export const updateWebhookSubscriptionBody = patchOf({
  url,
  description: text(500).nullable(),
  eventTypes,
  propertyIds,
  enabled: z.boolean().meta({ description: "false disables it (its pending deliveries are cancelled); true enables it again." }),
}).meta({ id: "WebhookSubscriptionUpdate" });

export const webhookSubscription = z.object({
  id,
  url: z.string(),
  description: z.string().nullable(),
  eventTypes: z.array(z.enum(webhookEventTypes)),
  propertyIds: z.array(id),
  enabled: z.boolean(),
  disabledReason: z.enum(disabledReasons).nullable().meta({
    description: "manual: a manager disabled it; gone: its endpoint answered 410 Gone; failing: every delivery failed for a day.",
  }),
  disabledAt: timestamp.nullable(),
  failingSince: timestamp.nullable().meta({ description: "When its deliveries started failing with no success since; null while healthy." }),
  previousSecretExpiresAt: timestamp.nullable().meta({
    description: "Until when the secret a rotation replaced still signs beside the new one; null outside a rotation's overlap.",
  }),
  createdBy: id.nullable(),
  createdAt: timestamp,
  updatedAt: timestamp,
}).meta({ id: "WebhookSubscription" });

export const webhookSubscriptionWithSecret = webhookSubscription.extend({
  secret: z.string().meta({
    description: "The signing secret, whsec_ and base64: shown at creation and at rotation only. The receiver verifies " +
      "webhook-signature with it (Standard Webhooks).",
  }),
}).meta({ id: "WebhookSubscriptionWithSecret" });

export const listWebhookSubscriptionsQuery = z.strictObject({
  ...pageQuery,
  enabled: queryBoolean.optional(),
});

export const rotateSecretBody = z.strictObject({
  overlapHours: z.number().int().min(0).max(168).optional().meta({
    description: "How long the old secret keeps signing beside the new one, 0 to 168 hours. Default 24.",
  }),
}).meta({ id: "WebhookSecretRotation" });

export const deliveryStatuses = ["pending", "succeeded", "failed", "cancelled"] as const;
export const attemptOutcomes = ["succeeded", "retrying", "failed", "gone", "refused"] as const;

export const webhookAttempt = z.object({
  attempt: z.number().int(),
  startedAt: timestamp,
  durationMs: z.number().int(),
  statusCode: z.number().int().nullable().meta({ description: "The endpoint's status; null when it gave none." }),
  outcome: z.enum(attemptOutcomes),
  error: z.string().nullable(),
  responseSnippet: z.string().nullable().meta({ description: "The first kilobyte of the endpoint's response body." }),
  nextAttemptAt: timestamp.nullable(),
}).meta({ id: "WebhookAttempt" });

export const webhookDelivery = z.object({
  id,
  subscriptionId: id,
  eventId: id.meta({ description: "Also the webhook-id header: the same on every attempt and redelivery." }),
  eventType: z.enum(deliveredEventTypes),
  reservationId: id.nullable(),
  status: z.enum(deliveryStatuses),
  attempts: z.number().int(),
  nextAttemptAt: timestamp.nullable(),
  lastAttemptAt: timestamp.nullable(),
  lastStatusCode: z.number().int().nullable(),
  endedAt: timestamp.nullable(),
  createdAt: timestamp,
}).meta({ id: "WebhookDelivery" });

export const webhookDeliveryWithAttempts = webhookDelivery.extend({
  payload: z.record(z.string(), z.unknown()).meta({ description: "The body posted, as the endpoint gets it." }),
  attemptLog: z.array(webhookAttempt).meta({ description: "Every attempt, oldest first." }),
}).meta({ id: "WebhookDeliveryDetail" });

export const listWebhookDeliveriesQuery = z.strictObject({
  ...pageQuery,
  status: oneOrMany(deliveryStatuses).optional(),
  eventType: oneOrMany(deliveredEventTypes).optional(),
});

export const queuedDelivery = z.object({
  deliveryId: id,
}).meta({ id: "WebhookDeliveryQueued" });
