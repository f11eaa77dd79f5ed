// One provider report in the shape private.record_delivery_events takes (snake_case, as
// its jsonb_to_recordset names the fields), whichever provider sent it. The database
// decides what it does to the notification and the guest; this module and its two
// readers only say what the provider meant.
import type { DeliveryState } from "../notifications/schema.ts";

export type DeliveryEvent = {
  tenant_id: string;
  notification_id: string;
  // The id the provider gave the message when it accepted it: SendGrid's X-Message-Id, the
  // SMS provider's message SID.
  provider_message_id: string;
  provider_event_id: string;
  // The provider's own name for it.
  event: string;
  delivery_state: DeliveryState | null;
  // RFC 3339.
  occurred_at: string;
  reason: string | null;
  code: string | null;
  // The provider says mail to the address cannot arrive: the guest's address is marked.
  undeliverable: boolean;
};

// What a webhook makes of one of the provider's events: one to record; one about no
// message this service sent (no custom args, an SMS URL not of ours); or one it cannot read.
export type Reading =
  | { kind: "event"; event: DeliveryEvent }
  | { kind: "unmatched"; why: string }
  | { kind: "ignored"; why: string };

// The columns' limits (supabase/migrations/*_delivery_reports.sql): a provider may explain
// at any length.
const MAX_REASON = 2000;
const MAX_CODE = 100;

export function clip(text: string | null | undefined, max: "reason" | "code"): string | null {
  const limit = max === "reason" ? MAX_REASON : MAX_CODE;
  const value = text?.trim();
  if (!value) return null;
  return value.length <= limit ? value : `${value.slice(0, limit - 1)}…`;
}
