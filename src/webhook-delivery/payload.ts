// The payload's version: what docs/webhooks.md documents. A change a receiver could trip
// on is a new version.
export const PAYLOAD_VERSION = 1;

export type WebhookEventRow = { event_id: string; type: string; occurred_at: string; data: unknown; tenant_id: string };

// The body a receiver gets: the Standard Webhooks envelope ({type, timestamp, data}) with
// the event's id, the payload's version and the tenant. The same on every attempt.
export function webhookPayload(row: WebhookEventRow) {
  return {
    id: row.event_id,
    type: row.type,
    version: PAYLOAD_VERSION,
    timestamp: row.occurred_at,
    tenantId: row.tenant_id,
    data: row.data,
  };
}

export function webhookBody(row: WebhookEventRow): string {
  return JSON.stringify(webhookPayload(row));
}
