import { z } from "zod";
import { accessCode } from "../access-codes/schema.ts";
import { guest } from "../guests/schema.ts";
import { answeredDate, id, timestamp } from "../http/schemas.ts";
import { payment } from "../payments/schema.ts";
import { reservation } from "../reservations/schema.ts";
import { task } from "../tasks/schema.ts";
import { PAYLOAD_VERSION } from "../webhook-delivery/payload.ts";
import type { deliveredEventTypes } from "./schema.ts";

type EventType = (typeof deliveredEventTypes)[number];

const changedFields = z.array(z.string()).meta({ description: "The fields that changed, as the API names them, sorted." });

// Each event's `data`: the resources as the API shows them right after the change.
const eventData: Record<EventType, { summary: string; data: z.ZodObject }> = {
  "reservation.created": { summary: "A reservation was created.", data: z.object({ reservation }) },
  "reservation.updated": {
    summary: "A reservation's fields changed (not its paid amount, which is payment.recorded's, nor a check-in, check-out or cancellation).",
    data: z.object({ reservation, changedFields }),
  },
  "reservation.checked_in": { summary: "A guest checked in.", data: z.object({ reservation }) },
  "reservation.checked_out": { summary: "A guest checked out.", data: z.object({ reservation }) },
  "reservation.cancelled": { summary: "A reservation was cancelled.", data: z.object({ reservation }) },
  "payment.recorded": {
    summary: "A payment was recorded against a reservation.",
    data: z.object({
      payment,
      reservation: z.object({
        id, totalAmount: z.number().int(), amountPaid: z.number().int(), balance: z.number().int(), currency: z.string(),
      }).meta({ description: "The reservation's amounts after the payment." }),
    }),
  },
  "access_code.created": { summary: "A door access code was issued (with the code itself).", data: z.object({ accessCode }) },
  "access_code.revoked": { summary: "A door access code was revoked.", data: z.object({ accessCode }) },
  "task.status_changed": {
    summary: "A housekeeping or maintenance task changed status.",
    data: z.object({ task, previousStatus: z.string() }),
  },
  "guest.updated": { summary: "A guest's fields changed.", data: z.object({ guest, changedFields }) },
  "availability.changed": {
    summary: "A room type's rooms left changed on some nights (a stay booked, moved or ended, a block, a unit in or out of " +
      "service): one event per transaction and room type. Read the nights again with GET /v1/external/properties/{id}/ari.",
    data: z.object({
      propertyId: id,
      roomTypeId: id,
      from: answeredDate.nullable().meta({ description: "The first night changed; null with to: every night." }),
      to: answeredDate.nullable().meta({ description: "The last night changed, included." }),
    }),
  },
  "rates.changed": {
    summary: "A rate plan's prices or restrictions changed on some days (its calendar, its defaults, or its base plan's): " +
      "one event per transaction and plan, however many days.",
    data: z.object({
      propertyId: id,
      ratePlanId: id,
      from: answeredDate.nullable().meta({ description: "The first day changed; null with to: every day." }),
      to: answeredDate.nullable().meta({ description: "The last day changed, included." }),
    }),
  },
  "webhook.test": {
    summary: "A manager's test of one subscription (POST /v1/webhook-subscriptions/{id}/test).",
    data: z.object({ subscriptionId: id }),
  },
};

// The body of one event type's request: the Standard Webhooks envelope.
export function webhookEventSchema(type: EventType) {
  return z.object({
    id: id.meta({ description: "The event's id; also the webhook-id header, the same on every attempt and redelivery." }),
    type: z.literal(type),
    version: z.literal(PAYLOAD_VERSION),
    timestamp: timestamp.meta({ description: "When the change happened." }),
    tenantId: id,
    data: eventData[type].data,
  });
}

// What the OpenAPI document's `webhooks` section lists: every event a subscription receives.
export const outboundWebhooks = (Object.keys(eventData) as EventType[]).map((type) => ({
  name: type,
  summary: eventData[type].summary,
  schema: webhookEventSchema(type),
}));
