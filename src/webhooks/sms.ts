// The SMS provider's status callbacks (Twilio's StatusCallback), read as delivery reports.
// A callback is posted for each status a message reaches: queued, sending, sent (events
// only), then delivered, undelivered or failed (delivery states), the last two with the
// provider's ErrorCode. The provider gives no time and no event id: the event is the
// message and its status (a second callback with the same status is the same report),
// and it happened when it arrived. The notification is named in the callback's URL,
// which the worker builds for each message (src/notifications/sms.ts) and the provider
// signs with the rest.
import type { z } from "zod";
import type { DeliveryState } from "../notifications/schema.ts";
import { clip, type Reading } from "./events.ts";
import type { smsCallbackQuery, smsStatusCallback } from "./schema.ts";

const states: Record<string, DeliveryState> = {
  delivered: "delivered",
  undelivered: "undelivered",
  failed: "failed",
};

export function readSmsCallback(
  target: z.output<typeof smsCallbackQuery>,
  callback: z.output<typeof smsStatusCallback>,
  receivedAt: string,
): Reading {
  const status = callback.MessageStatus;
  const state = states[status] ?? null;
  const code = state && state !== "delivered" ? clip(callback.ErrorCode, "code") : null;
  return {
    kind: "event",
    event: {
      tenant_id: target.tenantId.toLowerCase(),
      notification_id: target.notificationId.toLowerCase(),
      provider_message_id: callback.MessageSid,
      provider_event_id: `${callback.MessageSid}:${status}`,
      event: status,
      delivery_state: state,
      occurred_at: receivedAt,
      reason: state && state !== "delivered" ? clip(callback.ErrorMessage, "reason") : null,
      code,
      undeliverable: false,
    },
  };
}
