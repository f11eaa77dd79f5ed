import { sql, type Transaction } from "kysely";
import type { z } from "zod";
import { camelSelection, snakeKeys } from "../db/columns.ts";
import type { DB } from "../db/database.ts";
import { type Page, paginate } from "../db/pagination.ts";
import type { Reads } from "../db/reads.ts";
import { webhookPayload } from "../webhook-delivery/payload.ts";
import type {
  createWebhookSubscriptionBody,
  listWebhookDeliveriesQuery,
  listWebhookSubscriptionsQuery,
  updateWebhookSubscriptionBody,
} from "./schema.ts";

// Every column a manager reads; the secrets are not among them (nor readable by them:
// the migration grants the others only).
const subscriptionColumns = camelSelection([
  "id", "url", "description", "event_types", "property_ids", "enabled", "disabled_reason", "disabled_at", "failing_since",
  "previous_secret_expires_at", "created_by", "created_at", "updated_at",
]);

export function listWebhookSubscriptions(db: Reads, filter: z.output<typeof listWebhookSubscriptionsQuery>, page: Page) {
  let query = db.selectFrom("webhook_subscriptions").select(subscriptionColumns).orderBy("created_at", "desc").orderBy("id");
  if (filter.enabled !== undefined) query = query.where("enabled", "=", filter.enabled);
  return paginate(query, page, { tenant: ["tenant_id"] });
}

export function findWebhookSubscription(db: Reads, id: string) {
  return db.selectFrom("webhook_subscriptions").select(subscriptionColumns).where("id", "=", id).executeTakeFirst();
}

export function lockWebhookSubscription(db: Transaction<DB>, id: string) {
  return db.selectFrom("webhook_subscriptions").select(subscriptionColumns).where("id", "=", id).forUpdate().executeTakeFirst();
}

export function insertWebhookSubscription(db: Transaction<DB>, input: z.output<typeof createWebhookSubscriptionBody>) {
  return db.insertInto("webhook_subscriptions").values(snakeKeys(input)).returning(subscriptionColumns).executeTakeFirstOrThrow();
}

export function updateWebhookSubscription(db: Transaction<DB>, id: string, input: z.output<typeof updateWebhookSubscriptionBody>) {
  return db.updateTable("webhook_subscriptions").set(snakeKeys(input)).where("id", "=", id).returning(subscriptionColumns)
    .executeTakeFirst();
}

export function deleteWebhookSubscription(db: Transaction<DB>, id: string) {
  return db.deleteFrom("webhook_subscriptions").where("id", "=", id).executeTakeFirst();
}

// The secret, through the definer function that alone reads it (a manager's own tenant).
export async function webhookSecretOf(db: Transaction<DB>, id: string): Promise<string | null> {
  const { rows: [row] } = await sql<{ secret: string | null }>`select private.webhook_subscription_secret(${id}) as secret`
    .execute(db);
  return row?.secret ?? null;
}

export async function rotateWebhookSecret(db: Transaction<DB>, id: string, overlapHours: number): Promise<string | null> {
  const { rows: [row] } = await sql<{ secret: string | null }>`
    select private.rotate_webhook_secret(${id}, make_interval(hours => ${overlapHours})) as secret`.execute(db);
  return row?.secret ?? null;
}

export async function sendWebhookTest(db: Transaction<DB>, id: string): Promise<string | null> {
  const { rows: [row] } = await sql<{ delivery: string | null }>`select private.send_webhook_test(${id}) as delivery`.execute(db);
  return row?.delivery ?? null;
}

export async function redeliverWebhook(db: Transaction<DB>, id: string): Promise<string | null> {
  const { rows: [row] } = await sql<{ delivery: string | null }>`select private.redeliver_webhook(${id}) as delivery`.execute(db);
  return row?.delivery ?? null;
}

// Not aliased: the pagination helper takes queries over the schema's own table names.
const deliveryColumns = [
  "webhook_deliveries.id", "webhook_deliveries.subscription_id as subscriptionId", "webhook_deliveries.event_id as eventId",
  "webhook_deliveries.reservation_id as reservationId", "webhook_deliveries.status", "webhook_deliveries.attempts",
  "webhook_deliveries.next_attempt_at as nextAttemptAt", "webhook_deliveries.last_attempt_at as lastAttemptAt",
  "webhook_deliveries.last_status_code as lastStatusCode", "webhook_deliveries.ended_at as endedAt",
  "webhook_deliveries.created_at as createdAt", "webhook_events.type as eventType",
] as const;

function deliveries(db: Reads) {
  return db.selectFrom("webhook_deliveries").innerJoin("webhook_events", (join) =>
    join.onRef("webhook_events.tenant_id", "=", "webhook_deliveries.tenant_id")
      .onRef("webhook_events.id", "=", "webhook_deliveries.event_id"));
}

// A subscription's deliveries, newest first.
export function listWebhookDeliveries(
  db: Reads,
  subscriptionId: string,
  filter: z.output<typeof listWebhookDeliveriesQuery>,
  page: Page,
) {
  let query = deliveries(db).select(deliveryColumns).where("webhook_deliveries.subscription_id", "=", subscriptionId)
    .orderBy("webhook_deliveries.created_at", "desc").orderBy("webhook_deliveries.id");
  if (filter.status) query = query.where("webhook_deliveries.status", "in", filter.status);
  if (filter.eventType) query = query.where("webhook_events.type", "in", filter.eventType);
  return paginate(query, page, { tenant: ["webhook_deliveries.tenant_id", "webhook_events.tenant_id"] });
}

// One delivery with the body it posts and every attempt.
export async function findWebhookDelivery(db: Reads, id: string) {
  const row = await deliveries(db)
    .select([...deliveryColumns, "webhook_events.data", "webhook_events.occurred_at as occurredAt",
      "webhook_deliveries.tenant_id as tenantId"])
    .where("webhook_deliveries.id", "=", id).executeTakeFirst();
  if (!row) return undefined;
  const attemptLog = await db.selectFrom("webhook_attempts")
    .select(camelSelection([
      "attempt", "started_at", "duration_ms", "status_code", "outcome", "error", "response_snippet", "next_attempt_at",
    ]))
    .where("delivery_id", "=", id).orderBy("attempt").execute();
  const { data, occurredAt, tenantId, ...delivery } = row;
  return {
    ...delivery,
    payload: webhookPayload({ event_id: row.eventId, type: row.eventType, occurred_at: occurredAt, data, tenant_id: tenantId }),
    attemptLog,
  };
}
