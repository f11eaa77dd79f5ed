// The notifications worker: drains the pgmq queue `notifications`. Each job is done
// in the job's tenant under the background_worker role, so RLS applies to every
// read and write (contract step 1); the provider is called between two short
// transactions, never inside one.
import { type RawBuilder, sql as raw, type Transaction } from "kysely";
import type { Kysely } from "kysely";
import { z } from "zod";
import type { DB } from "../db/database.ts";
import type { ChannelAdapter, Delivery } from "./delivery.ts";
import { isTemplateKey, renderTemplate, type TemplateData, type TemplateKey } from "./render.ts";

export const QUEUE = "notifications";

export type WorkerSettings = {
  // Jobs one run takes at most.
  batchSize: number;
  // How long a claimed job stays invisible: longer than one job can take. Jobs are
  // claimed one at a time, so a slow batch never outlives its jobs' timeouts.
  visibilityTimeoutSeconds: number;
  // Deliveries tried before a transient failure becomes `failed`.
  maxAttempts: number;
  baseDelaySeconds: number;
  maxDelaySeconds: number;
};

export const defaultWorkerSettings: WorkerSettings = {
  batchSize: 50,
  visibilityTimeoutSeconds: 60,
  maxAttempts: 6,
  baseDelaySeconds: 30,
  maxDelaySeconds: 3600,
};

export type WorkerDependencies = {
  db: Kysely<DB>;
  adapters: { email: ChannelAdapter; sms: ChannelAdapter };
  settings: WorkerSettings;
  random: () => number;
  logger: {
    warn(message: string, fields?: Record<string, unknown>): void;
    error(message: string, fields?: Record<string, unknown>): void;
  };
};

export type RunSummary = { read: number; sent: number; failed: number; skipped: number; retried: number; dropped: number };

const jobMessage = z.object({ notificationId: z.uuid(), tenantId: z.uuid() });

type Job = { msgId: string; readCount: number; message: unknown };

type Outcome = keyof Omit<RunSummary, "read">;

// The status_reason column's limit; a provider may explain at any length.
const MAX_REASON_LENGTH = 2000;

function reasonOf(text: string): string {
  return text.length <= MAX_REASON_LENGTH ? text : `${text.slice(0, MAX_REASON_LENGTH - 1)}…`;
}

// Exponential, capped, with jitter so that a burst of failures does not retry in step;
// never sooner than the provider's Retry-After, which the cap does not shorten.
function retryDelaySeconds(attempt: number, retryAfter: number | null, settings: WorkerSettings, random: () => number) {
  const exponential = Math.min(settings.maxDelaySeconds, settings.baseDelaySeconds * 2 ** Math.max(0, attempt - 1));
  const jittered = Math.ceil(exponential * (0.5 + random() / 2));
  return Math.max(Math.min(settings.maxDelaySeconds, jittered), retryAfter ?? 0);
}

export async function runWorker(deps: WorkerDependencies): Promise<RunSummary> {
  const { settings } = deps;
  const summary: RunSummary = { read: 0, sent: 0, failed: 0, skipped: 0, retried: 0, dropped: 0 };
  while (summary.read < settings.batchSize) {
    const claimed = await raw<{ msg_id: string; read_ct: number; message: unknown }>`
      select msg_id::text, read_ct, message from pgmq.read(${QUEUE}, ${settings.visibilityTimeoutSeconds}, 1)
    `.execute(deps.db);
    const row = claimed.rows[0];
    if (!row) break;
    summary.read++;
    const job = { msgId: row.msg_id, readCount: row.read_ct, message: row.message };
    try {
      summary[await processJob(deps, job)]++;
    } catch (error) {
      // One job's fault must not stop the others; this one comes back when its timeout ends.
      deps.logger.error(`notification job errored; it will be tried again: ${String(error)}`, { msgId: job.msgId });
    }
  }
  return summary;
}

type Loaded =
  | { kind: "drop"; why: string }
  | { kind: "done"; outcome: "skipped" | "failed"; reason: string }
  | { kind: "deliver"; channel: "email" | "sms"; to: string; templateKey: TemplateKey; data: TemplateData };

async function processJob(deps: WorkerDependencies, job: Job): Promise<Outcome> {
  const parsed = jobMessage.safeParse(job.message);
  if (!parsed.success) {
    deps.logger.error("notification job is malformed; archived", { msgId: job.msgId, message: job.message });
    await raw`select pgmq.archive(${QUEUE}, ${job.msgId}::bigint)`.execute(deps.db);
    return "dropped";
  }
  const { notificationId, tenantId } = parsed.data;
  const fields = { notificationId, tenantId, msgId: job.msgId };

  // Whatever is settled before a provider call commits with the job's deletion here;
  // a notification still to be delivered rolls the deletion back and keeps its job.
  const loaded = await inTenant(deps.db, tenantId, deleteJob(job), async (trx): Promise<Loaded> => {
    const loaded = await load(trx, notificationId);
    if (loaded.kind === "drop") return loaded;
    if (loaded.kind === "done") {
      await settle(trx, notificationId, { status: loaded.outcome, status_reason: reasonOf(loaded.reason) });
      return loaded;
    }
    const { disabledReason } = deps.adapters[loaded.channel];
    if (!disabledReason) return loaded;
    deps.logger.warn(disabledReason, fields);
    await settle(trx, notificationId, { status: "skipped", status_reason: disabledReason });
    return { kind: "done", outcome: "skipped", reason: disabledReason };
  }, (loaded) => loaded.kind !== "deliver");
  if (loaded.kind === "drop") {
    deps.logger.warn(`notification job dropped: ${loaded.why}`, fields);
    return "dropped";
  }
  if (loaded.kind === "done") {
    if (loaded.outcome === "failed") deps.logger.error(`notification failed: ${loaded.reason}`, fields);
    return loaded.outcome;
  }

  const adapter = deps.adapters[loaded.channel];
  const rendered = renderTemplate(loaded.templateKey, loaded.data);
  const attempt = job.readCount;
  const content = { subject: rendered.subject, body: rendered.text, attempts: attempt, recipient_address: loaded.to };

  let delivery: Delivery;
  try {
    delivery = await adapter.send({ notificationId, tenantId, templateKey: loaded.templateKey, to: loaded.to, ...rendered });
  } catch (error) {
    delivery = { outcome: "transient", reason: `the adapter threw: ${String(error)}`, retryAfterSeconds: null };
  }

  if (delivery.outcome === "accepted") {
    await inTenant(deps.db, tenantId, deleteJob(job), (trx) =>
      settle(trx, notificationId, {
        ...content, status: "sent", status_reason: null, provider_message_id: delivery.providerMessageId, sent: true,
      }));
    return "sent";
  }
  if (delivery.outcome === "permanent" || attempt >= deps.settings.maxAttempts) {
    const reason = reasonOf(delivery.outcome === "permanent" ? delivery.reason : `gave up after ${attempt} attempts: ${delivery.reason}`);
    await inTenant(deps.db, tenantId, deleteJob(job), (trx) =>
      settle(trx, notificationId, { ...content, status: "failed", status_reason: reason }));
    deps.logger.error(`notification failed: ${reason}`, fields);
    return "failed";
  }
  const delay = retryDelaySeconds(attempt, delivery.retryAfterSeconds, deps.settings, deps.random);
  // set_vt returns a set: as an `exists` it is one value, and the settings after it apply
  // whether or not it still found the job.
  const postpone = raw`exists (select from pgmq.set_vt(${QUEUE}, ${job.msgId}::bigint, ${delay}::integer))`;
  await inTenant(deps.db, tenantId, postpone, async (trx) => {
    await trx.updateTable("notifications").set({ ...content, status_reason: reasonOf(delivery.reason) })
      .where("id", "=", notificationId).where("status", "=", "pending").execute();
  });
  deps.logger.warn(`notification delivery will be retried in ${delay}s: ${delivery.reason}`, { ...fields, attempt });
  return "retried";
}

function deleteJob(job: Job): RawBuilder<unknown> {
  return raw`pgmq.delete(${QUEUE}, ${job.msgId}::bigint)`;
}

// One transaction as the worker role in the job's tenant, which commits unless `commits`
// says otherwise. The queue belongs to the connection's own role, not to background_worker:
// `queueCall` runs first in the statement that switches the role, as a select list runs
// left to right, so the job changes in the same transaction as the notification.
async function inTenant<T>(
  db: Kysely<DB>,
  tenantId: string,
  queueCall: RawBuilder<unknown>,
  work: (db: Transaction<DB>) => Promise<T>,
  commits: (result: T) => boolean = () => true,
): Promise<T> {
  const trx = await db.startTransaction().execute();
  try {
    await raw`
      select ${queueCall}, set_config('app.tenant_id', ${tenantId}, true), set_config('role', 'background_worker', true)
    `.execute(trx);
    const result = await work(trx);
    await (commits(result) ? trx.commit() : trx.rollback()).execute();
    return result;
  } catch (error) {
    // A rollback that failed has released the connection already.
    if (!trx.isRolledBack) await trx.rollback().execute();
    throw error;
  }
}

// Only a pending notification takes an outcome: it is marked sent only once, and the
// outcome commits with the job's deletion, so a crash before the commit leaves the job
// to come back.
async function settle(
  db: Transaction<DB>,
  notificationId: string,
  change: {
    status: "sent" | "failed" | "skipped";
    status_reason: string | null;
    subject?: string;
    body?: string;
    attempts?: number;
    recipient_address?: string;
    provider_message_id?: string | null;
    sent?: boolean;
  },
) {
  const { sent, ...columns } = change;
  await db.updateTable("notifications")
    .set({ ...columns, sent_at: sent ? raw<string>`now()` : null })
    .where("id", "=", notificationId).where("status", "=", "pending").execute();
}

// A left join reads its columns as nullable. These are NOT NULL in their tables (balance
// is generated from two NOT NULL columns), so any of them null means the joined row is
// not there, and all of them present narrows their types.
const stayColumns = [
  "first_name", "last_name", "locale", "property_name", "timezone", "check_in_time", "check_out_time",
  "confirmation_code", "check_in", "check_out", "adults", "children", "total_amount", "amount_paid", "balance", "currency",
] as const;
const accessCodeColumns = ["code", "valid_from", "valid_until", "code_status"] as const;

function present<Row, Column extends keyof Row>(
  row: Row,
  columns: readonly Column[],
): row is Row & { [C in Column]: Exclude<Row[C], null> } {
  return columns.every((column) => row[column] !== null);
}

// Everything one notification needs, read under RLS in its tenant in one query.
async function load(db: Transaction<DB>, notificationId: string): Promise<Loaded> {
  const row = await db.selectFrom("notifications as n")
    .leftJoin("notification_preferences as np", (join) =>
      join.onRef("np.tenant_id", "=", "n.tenant_id").onRef("np.template_key", "=", "n.template_key")
        .onRef("np.channel", "=", "n.channel"))
    .leftJoin("reservations as r", (join) => join.onRef("r.tenant_id", "=", "n.tenant_id").onRef("r.id", "=", "n.reservation_id"))
    .leftJoin("guests as g", (join) => join.onRef("g.tenant_id", "=", "r.tenant_id").onRef("g.id", "=", "r.guest_id"))
    .leftJoin("properties as p", (join) => join.onRef("p.tenant_id", "=", "r.tenant_id").onRef("p.id", "=", "r.property_id"))
    .leftJoin("units as u", (join) => join.onRef("u.tenant_id", "=", "r.tenant_id").onRef("u.id", "=", "r.unit_id"))
    .leftJoin("access_codes as c", (join) => join.onRef("c.tenant_id", "=", "n.tenant_id").onRef("c.id", "=", "n.access_code_id"))
    .select([
      "n.template_key", "n.channel", "n.status", "np.enabled",
      "g.first_name", "g.last_name", "g.email", "g.phone", "g.locale",
      "p.name as property_name", "p.timezone", "p.address_line1", "p.city", "p.phone as property_phone",
      "p.email as property_email", "p.check_in_time", "p.check_out_time",
      "u.name as unit_name",
      "r.confirmation_code", "r.check_in", "r.check_out", "r.adults", "r.children", "r.total_amount", "r.amount_paid",
      "r.balance", "r.currency", "r.cancellation_reason",
      "c.code", "c.valid_from", "c.valid_until", "c.status as code_status",
    ])
    .where("n.id", "=", notificationId).executeTakeFirst();
  if (!row) return { kind: "drop", why: "the notification is not in its tenant any more" };
  if (row.status !== "pending") return { kind: "drop", why: `the notification is already ${row.status}` };
  const { template_key: templateKey, channel } = row;
  // The table's check allows only these keys.
  if (!isTemplateKey(templateKey)) throw new Error(`notification ${notificationId} has no template ${templateKey}`);

  // Contract step 2: a stored enabled=false skips; no row means enabled.
  if (row.enabled === false) {
    return { kind: "done", outcome: "skipped", reason: `the tenant opted out of ${templateKey} by ${channel}` };
  }
  if (channel !== "email" && channel !== "sms") {
    return { kind: "done", outcome: "skipped", reason: `no provider delivers the ${channel} channel` };
  }
  if (!present(row, stayColumns)) return { kind: "done", outcome: "failed", reason: "its reservation no longer exists" };

  const to = channel === "email" ? row.email : row.phone;
  if (!to) {
    return { kind: "done", outcome: "failed", reason: `the guest has no ${channel === "email" ? "email address" : "phone number"}` };
  }

  let accessCode: TemplateData["accessCode"];
  if (templateKey === "access_code_delivery") {
    if (!present(row, accessCodeColumns)) return { kind: "done", outcome: "failed", reason: "its access code no longer exists" };
    if (row.code_status !== "active") return { kind: "done", outcome: "skipped", reason: "the access code was revoked before delivery" };
    accessCode = { code: row.code, validFrom: row.valid_from, validUntil: row.valid_until };
  }

  return {
    kind: "deliver",
    channel,
    to,
    templateKey,
    data: {
      locale: row.locale,
      guest: { firstName: row.first_name, lastName: row.last_name },
      property: {
        name: row.property_name, timezone: row.timezone, addressLine1: row.address_line1, city: row.city,
        phone: row.property_phone, email: row.property_email, checkInTime: row.check_in_time, checkOutTime: row.check_out_time,
      },
      unit: row.unit_name === null ? null : { name: row.unit_name },
      reservation: {
        confirmationCode: row.confirmation_code, checkIn: row.check_in, checkOut: row.check_out,
        adults: row.adults, children: row.children, totalAmount: row.total_amount, amountPaid: row.amount_paid,
        balance: row.balance, currency: row.currency, cancellationReason: row.cancellation_reason,
      },
      accessCode,
    },
  };
}
