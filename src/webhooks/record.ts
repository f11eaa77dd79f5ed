import { type Kysely, sql } from "kysely";
import type { DB } from "../db/database.ts";
import type { deliveryProviders } from "../notifications/schema.ts";
import type { DeliveryEvent } from "./events.ts";

export type Provider = typeof deliveryProviders[number];

// What private.record_delivery_events made of each event (see its comment).
export type Recorded = { recorded: number; duplicate: number; unmatched: number; early: number };

// One transaction as the webhooks' role, provider_webhook, which may call the recording
// function and nothing else: no table, no other function. The role's statement_timeout
// applies, as for every request role. The events go as one jsonb array.
export async function recordDeliveryEvents(db: Kysely<DB>, provider: Provider, events: DeliveryEvent[]): Promise<Recorded> {
  const counts: Recorded = { recorded: 0, duplicate: 0, unmatched: 0, early: 0 };
  if (events.length === 0) return counts;
  const rows = await db.transaction().execute(async (tx) => {
    await sql`select set_config('statement_timeout', private.role_statement_timeout('provider_webhook'), true),
                     set_config('role', 'provider_webhook', true)`.execute(tx);
    const { rows } = await sql<{ outcome: keyof Recorded; total: number }>`
      select outcome, total::int as total
      from private.record_delivery_events(${provider}, ${JSON.stringify(events)}::text::jsonb)`.execute(tx);
    return rows;
  });
  for (const { outcome, total } of rows) {
    if (outcome in counts) counts[outcome] = total;
  }
  return counts;
}
