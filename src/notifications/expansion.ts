// The worker's first step before each read of its queue: domain events made into
// notifications. One transaction takes up to a claim's worth of events off their queue
// (private.take_notification_events), with what each check-in's alert to its front desk
// says; the alert is rendered here, once for all the staff it reaches, and the events go
// back with their alerts (private.expand_taken_notification_events), which writes those
// alerts sent, into the staff's inboxes, and every other notification pending with its
// job (supabase/migrations/20261201000100_check_in_alerts_at_expansion.sql). The two
// statements are two round trips of one transaction: should either fail, the events
// stay on their queue and nothing of them is made.
import { z } from "zod";
import { workerTransaction } from "../db/worker-transactions.ts";
import type { Sql } from "../db/pool.ts";
import type { Logger } from "../logging/logger.ts";
import { renderCheckInAlert, type StaffAlert } from "./staff-text.ts";

// Where the reservation and access-code triggers put their domain events.
export const EVENTS_QUEUE = "notification_events";

export type ExpansionDependencies = { sql: Sql; logger: Logger };

export type ExpansionCounts = {
  // Events made into notifications.
  expanded: number;
  // Events that reached nobody (their reservation or access code gone) or were no events.
  dropped: number;
  // Notifications sent as they were made: alerts in their staff's inboxes.
  sent: number;
};

// What the database says a check-in's alert is about (CheckInAlertData but its locale).
const checkInAlertData = z.object({
  guest: z.object({ firstName: z.string(), lastName: z.string() }),
  property: z.object({ name: z.string(), timezone: z.string() }),
  unit: z.object({ name: z.string() }).nullable(),
  reservation: z.object({
    id: z.uuid(), confirmationCode: z.string(), checkIn: z.string(), checkOut: z.string(),
    adults: z.number(), children: z.number(), balance: z.number(), currency: z.string(),
  }),
  checkedInAt: z.string(),
});

type TakenEvent = { msg_id: string; event: Record<string, unknown> | null; check_in_alert: unknown };

// Up to `maxEvents` events, expanded. An error leaves them on their queue for the next
// take; the caller goes on with the jobs already there.
export async function expandEvents(deps: ExpansionDependencies, maxEvents: number): Promise<ExpansionCounts> {
  const none = { expanded: 0, dropped: 0, sent: 0 };
  try {
    const { second } = await workerTransaction(
      deps.sql,
      (tx) => [
        // The count in the text, as the claim's load query names its notifications: a
        // parameter would cost a round trip through the pooler (src/db/worker-transactions.ts).
        tx.unsafe(
          `select msg_id::text, event, check_in_alert from private.take_notification_events(${Math.trunc(maxEvents)}, true)`,
          [],
          { prepare: false },
        ),
      ],
      ([rows], tx) => {
        const taken = rows as TakenEvent[];
        if (taken.length === 0) return [];
        const handed = taken.map((row) => ({ msgId: row.msg_id, event: withAlert(deps, row) }));
        return [tx`select expanded, dropped, sent from private.expand_taken_notification_events(${JSON.stringify(handed)}::text::jsonb)`];
      },
    );
    const [counts] = (second[0] ?? []) as ExpansionCounts[];
    if (counts?.dropped) deps.logger.warn(`${counts.dropped} notification events reached nobody or were malformed`, { queue: EVENTS_QUEUE });
    return counts ?? none;
  } catch (error) {
    deps.logger.error(`notification events could not be expanded; they will be tried again: ${String(error)}`, { queue: EVENTS_QUEUE });
    return none;
  }
}

// The event with its check-in alert, when it has one to render and it renders; otherwise
// as it was taken, and its staff get a job each, which meets the same fault and says so.
function withAlert(deps: ExpansionDependencies, row: TakenEvent): Record<string, unknown> | null {
  if (row.event === null || row.check_in_alert === null) return row.event;
  let alert: StaffAlert;
  try {
    alert = renderCheckInAlert({ locale: "en", ...checkInAlertData.parse(row.check_in_alert) });
  } catch (error) {
    deps.logger.warn(`a check-in alert could not be rendered; its staff get a job each: ${String(error)}`, {
      queue: EVENTS_QUEUE, msgId: row.msg_id,
    });
    return row.event;
  }
  return { ...row.event, alert };
}
