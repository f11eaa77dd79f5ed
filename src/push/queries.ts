import { sql, type Transaction } from "kysely";
import { camelSelection } from "../db/columns.ts";
import type { DB } from "../db/database.ts";
import { type Page, paginate } from "../db/pagination.ts";
import type { Reads } from "../db/reads.ts";
import { withoutPadding } from "./keys.ts";
import type { PushSubscriptionRegistration } from "./schema.ts";

const subscriptionColumns = camelSelection([
  "id", "endpoint", "expires_at", "user_agent", "last_accepted_at", "created_at", "updated_at",
]);

export type PushSubscriptionRow = {
  id: string;
  endpoint: string;
  expiresAt: string | null;
  userAgent: string | null;
  lastAcceptedAt: string | null;
  createdAt: string;
  updatedAt: string;
};

// The table's policies show and remove only the caller's own subscriptions in the request's
// tenant, so no query here names the user: another member's is to them what a missing one is.

export function listPushSubscriptions(db: Reads, _filter: unknown, page: Page) {
  const query = db.selectFrom("push_subscriptions").select(subscriptionColumns)
    .orderBy("created_at", "desc").orderBy("id", "desc");
  return paginate(query, page, { tenant: ["tenant_id"] });
}

export function findPushSubscription(db: Reads, id: string) {
  return db.selectFrom("push_subscriptions").select(subscriptionColumns).where("id", "=", id).executeTakeFirst();
}

export function deletePushSubscription(db: Transaction<DB>, id: string) {
  return db.deleteFrom("push_subscriptions").where("id", "=", id).executeTakeFirst();
}

// Through private.register_push_subscription, the one way a member writes the table: the
// endpoint's row may be another member's (the browser's previous user), which the caller can
// neither see nor update, and it becomes the caller's. The keys are kept without padding, as
// browsers write them.
export async function registerPushSubscription(
  db: Transaction<DB>,
  browser: PushSubscriptionRegistration,
  userAgent: string | null,
): Promise<{ subscription: PushSubscriptionRow; created: boolean }> {
  const expiresAt = typeof browser.expirationTime === "number" ? new Date(browser.expirationTime).toISOString() : null;
  const { rows: [subscription] } = await sql<PushSubscriptionRow>`
    select s.id, s.endpoint, s.expires_at as "expiresAt", s.user_agent as "userAgent",
           s.last_accepted_at as "lastAcceptedAt", s.created_at as "createdAt", s.updated_at as "updatedAt"
    from private.register_push_subscription(${browser.endpoint}::text, ${withoutPadding(browser.keys.p256dh)}::text,
      ${withoutPadding(browser.keys.auth)}::text, ${expiresAt}::timestamptz, ${userAgent}::text) as s`.execute(db);
  if (!subscription) throw new Error("private.register_push_subscription returned no row");
  // A new row's created_at and updated_at are both the transaction's now(); an existing
  // row's update sets updated_at to this transaction's now(), which no earlier
  // transaction's created_at equals.
  return { subscription, created: subscription.createdAt === subscription.updatedAt };
}
