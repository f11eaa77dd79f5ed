// SendGrid's Event Webhook events, read as delivery reports. What each event means:
//   processed, open, click, unsubscribe, ...  an event only: no delivery state
//   deferred     the receiving server refused for now; SendGrid tries again (`response`, `attempt`)
//   delivered    the receiving server took it (`response`)
//   bounce       it did not arrive: type `bounce` means the address refused it for good (a
//                hard bounce, which marks the address), type `blocked` that it was refused
//                for another reason (the sender, the content), which does not
//   dropped      SendGrid did not send it (`reason`); "Invalid", "Bounced Address" and "Spam
//                Reporting Address" say the address itself is the cause, and mark it
//   spamreport   the recipient reported it as spam: the address is marked
// The message is matched by the prefix of sg_message_id before its first dot, which is
// the X-Message-Id the send answered; the notification by the custom args every mail
// carries (src/notifications/sendgrid.ts).
import { z } from "zod";
import type { DeliveryState } from "../notifications/schema.ts";
import { clip, type Reading } from "./events.ts";
import { EVENT_NAME, sendGridEvent } from "./schema.ts";

const states: Record<string, DeliveryState> = {
  deferred: "deferred",
  delivered: "delivered",
  bounce: "bounced",
  dropped: "dropped",
  spamreport: "spam_report",
};

// Drop reasons that mean SendGrid will drop every mail to the address.
const undeliverableDrops = new Set(["invalid", "bounced address", "spam reporting address"]);

const uuid = z.uuid();

// Unix seconds the database can hold as a timestamp, from 1970 to the year 5138.
function instant(seconds: number): string | null {
  return Number.isInteger(seconds) && seconds > 0 && seconds < 1e11 ? new Date(seconds * 1000).toISOString() : null;
}

export function readSendGridEvent(value: unknown): Reading {
  const parsed = sendGridEvent.safeParse(value);
  if (!parsed.success) return { kind: "ignored", why: "a field has the wrong type" };
  const raw = parsed.data;
  const { event, sg_event_id: eventId, sg_message_id: messageId } = raw;
  if (!event || !EVENT_NAME.test(event)) return { kind: "ignored", why: "no event name" };
  if (!eventId || eventId.length > 255) return { kind: "ignored", why: "no sg_event_id" };
  const occurredAt = raw.timestamp === undefined ? null : instant(raw.timestamp);
  if (!occurredAt) return { kind: "ignored", why: "no timestamp" };
  if (!uuid.safeParse(raw.notification_id).success || !uuid.safeParse(raw.tenant_id).success) {
    return { kind: "unmatched", why: "no notification_id and tenant_id custom args" };
  }
  const providerMessageId = messageId?.split(".", 1)[0];
  if (!providerMessageId) return { kind: "unmatched", why: "no sg_message_id" };

  const state = states[event] ?? null;
  const blocked = event === "bounce" && raw.type === "blocked";
  const attempt = raw.attempt === undefined ? "" : ` (attempt ${raw.attempt})`;
  const reason = event === "deferred"
    ? clip(raw.response ? `${raw.response}${attempt}` : raw.reason, "reason")
    : event === "delivered"
    ? clip(raw.response, "reason")
    : event === "bounce"
    ? clip(blocked ? `blocked: ${raw.reason ?? raw.response ?? ""}` : raw.reason ?? raw.response, "reason")
    : event === "dropped"
    ? clip(raw.reason, "reason")
    : null;
  const undeliverable = (event === "bounce" && !blocked) || event === "spamreport" ||
    (event === "dropped" && undeliverableDrops.has((raw.reason ?? "").trim().toLowerCase()));
  return {
    kind: "event",
    event: {
      tenant_id: raw.tenant_id!.toLowerCase(),
      notification_id: raw.notification_id!.toLowerCase(),
      provider_message_id: providerMessageId,
      provider_event_id: eventId,
      event,
      delivery_state: state,
      occurred_at: occurredAt,
      reason,
      code: event === "bounce" ? clip(raw.status, "code") : null,
      undeliverable,
    },
  };
}
