// The webhooks worker: drains the pgmq queue `webhooks` a claim at a time, as the
// notifications worker drains its own. A claim's deliveries are loaded in one
// transaction, each in its own tenant under background_worker (RLS applies to every read
// and write); each is posted to its endpoint, signed, outside any transaction; one call of
// private.settle_webhook_claim then records every attempt and every delivery's and
// subscription's new state with the jobs' deletion or postponement.
import { z } from "zod";
import type { Database } from "../db/database.types.ts";
import { type ClaimedJob, type ClaimSettings, drainInClaims, type RunMode } from "../queue/claims.ts";
import type { Sql } from "../db/pool.ts";
import { uuidLiteral, workerTransaction } from "../db/worker-transactions.ts";
import type { Logger } from "../logging/logger.ts";
import { webhookBody } from "./payload.ts";
import { retryAfterSeconds, retryDelaySeconds } from "./schedule.ts";

export const WEBHOOKS_QUEUE = "webhooks";

export type WebhookWorkerSettings = ClaimSettings & {
  // How long a delivery waits, at least, for the same stay's earlier delivery to the same
  // subscription to end before it is looked at again.
  orderWaitSeconds: number;
  // A subscription whose deliveries have all failed for this long is disabled.
  failingDisablesAfterMs: number;
  // How long a claim holds a delivery it posts: longer than an attempt can last (the
  // post's timeout and a margin), so that no second attempt starts while one may be
  // under way, even when a run stops before it settles.
  attemptLeaseSeconds: number;
};

export const defaultWebhookWorkerSettings: WebhookWorkerSettings = {
  batchSize: 1000,
  runBudgetMs: 8000,
  claimSize: 50,
  claimsInFlight: 2,
  visibilityTimeoutSeconds: 60,
  followPollMs: 250,
  orderWaitSeconds: 5,
  failingDisablesAfterMs: 24 * 3600 * 1000,
  attemptLeaseSeconds: 30,
};

// One signed POST to an endpoint, and what came of it (src/webhook-delivery/endpoint.ts).
export type WebhookRequest = { url: string; headers: Record<string, string>; body: string };
export type PostResult =
  | { outcome: "response"; status: number; snippet: string; retryAfter: string | null; durationMs: number }
  // Never sent: the URL or an address it resolves to is not allowed.
  | { outcome: "refused"; message: string; durationMs: number }
  // Sent or not, no answer: DNS, connection, timeout.
  | { outcome: "network-error"; message: string; durationMs: number };

export type WebhookWorkerDependencies = {
  sql: Sql;
  post: (request: WebhookRequest) => Promise<PostResult>;
  // The Standard Webhooks headers for a message signed with each of the secrets.
  sign: (messageId: string, timestamp: Date, body: string, secrets: string[]) => Record<string, string>;
  settings: WebhookWorkerSettings;
  random: () => number;
  // Milliseconds since the epoch.
  now: () => number;
  logger: Logger;
};

export type WebhookRunSummary = {
  read: number;
  succeeded: number;
  retrying: number;
  failed: number;
  // Not posted: the subscription was disabled or removed, or the delivery had ended.
  cancelled: number;
  // Not posted yet: an earlier delivery of the same stay to the same endpoint is pending.
  waiting: number;
  // Not posted now: an attempt of the same delivery may be under way elsewhere.
  inFlight: number;
  dropped: number;
};

const jobMessage = z.object({ tenantId: z.uuid(), deliveryId: z.uuid() });

type Job = ClaimedJob;
type TenantJob = Job & { tenantId: string; deliveryId: string };

type AttemptRecord = {
  deliveryId: string;
  attempt: number;
  startedAt: string;
  durationMs: number;
  statusCode: number | null;
  outcome: "succeeded" | "retrying" | "failed" | "gone" | "refused";
  error: string | null;
  responseSnippet: string | null;
  nextAttemptAt: string | null;
};
type DeliveryChange = {
  id: string;
  status: "pending" | "succeeded" | "failed" | "cancelled";
  attempts?: number;
  nextAttemptAt: string | null;
  lastAttemptAt?: string;
  lastStatusCode?: number | null;
};
type SubscriptionChange = { id: string; healthy: boolean; failingSince: string | null; disable: "gone" | "failing" | null };

// What becomes of one job once its claim commits.
type Settled = {
  job: TenantJob;
  summary: keyof Omit<WebhookRunSummary, "read">;
  // Deleted, or back on the queue after this many seconds.
  postponeSeconds: number | null;
  attempt?: AttemptRecord;
  delivery?: DeliveryChange;
  subscription?: SubscriptionChange;
  // The lease this claim took on the delivery, given back whatever the outcome.
  lease?: { id: string; startedAt: string };
};

const ERROR_LENGTH = 1000;
const clip = (text: string) => text.length <= ERROR_LENGTH ? text : `${text.slice(0, ERROR_LENGTH - 1)}…`;

export async function runWebhookWorker(
  deps: WebhookWorkerDependencies,
  mode: RunMode = { follow: false },
): Promise<WebhookRunSummary> {
  const summary: WebhookRunSummary = {
    read: 0, succeeded: 0, retrying: 0, failed: 0, cancelled: 0, waiting: 0, inFlight: 0, dropped: 0,
  };
  await drainInClaims({ ...deps, mode }, WEBHOOKS_QUEUE, summary, (jobs) => processClaim(deps, jobs));
  return summary;
}

async function processClaim(deps: WebhookWorkerDependencies, jobs: Job[]) {
  const valid: TenantJob[] = [];
  const malformed: Job[] = [];
  for (const job of jobs) {
    const parsed = jobMessage.safeParse(job.message);
    if (parsed.success) valid.push({ ...job, ...parsed.data });
    else malformed.push(job);
  }
  const outcomes: Settled["summary"][] = [];
  if (malformed.length > 0) {
    await deps.sql`select pgmq.archive(${WEBHOOKS_QUEUE}, ${malformed.map((job) => job.msgId)}::bigint[])`;
    for (const job of malformed) {
      deps.logger.error("webhook job is malformed; archived", { msgId: job.msgId, message: job.message });
      outcomes.push("dropped");
    }
  }
  if (valid.length === 0) return outcomes;

  const loaded = await loadClaim(deps, valid);
  const settled = await Promise.all(valid.map(async (job) => {
    const row = loaded.get(job);
    const result = await decide(deps, job, row);
    return row !== undefined && row !== "duplicate" && row.attempt_fresh && row.attempt_started_at !== null
      ? { ...result, lease: { id: row.id, startedAt: row.attempt_started_at } }
      : result;
  }));
  await settleClaim(deps, settled);
  return [...outcomes, ...settled.map((result) => result.summary)];
}

// The whole claim in one call of private.load_webhook_claims, one round trip: each tenant's
// deliveries read under RLS as background_worker in that tenant's context, with their
// events and subscriptions, and a lease taken on each it may post (attempt_fresh) when it is
// pending and no other attempt holds it (none started, or the last one started longer ago
// than a lease); else the other attempt's start. The deliveries and their tenants are named
// in the call's text (src/db/worker-transactions.ts). A second job for a delivery already in the
// claim is dropped, so no claim posts one delivery twice.
async function loadClaim(deps: WebhookWorkerDependencies, jobs: TenantJob[]) {
  const loaded = new Map<TenantJob, LoadedRow | "duplicate">();
  const seen = new Set<string>();
  const unique: TenantJob[] = [];
  for (const job of jobs) {
    const key = `${job.tenantId}/${job.deliveryId}`;
    if (seen.has(key)) {
      loaded.set(job, "duplicate");
      continue;
    }
    seen.add(key);
    unique.push(job);
  }
  if (unique.length === 0) return loaded;
  const { first: [rows] } = await workerTransaction(deps.sql, (tx) => [
    // Never prepared: its text names the claim's deliveries, so it differs every time.
    tx.unsafe<LoadedRow[]>(loadQuery(unique, deps.settings.attemptLeaseSeconds), [], { prepare: false }),
  ]);
  const found = new Map((rows as LoadedRow[]).map((row) => [`${row.tenant_id}/${row.id}`, row]));
  for (const job of unique) {
    const row = found.get(`${job.tenantId}/${job.deliveryId}`);
    if (row) loaded.set(job, row);
  }
  return loaded;
}

const loadQuery = (jobs: readonly TenantJob[], leaseSeconds: number) =>
  `select * from private.load_webhook_claims(array[${jobs.map((job) => uuidLiteral(job.tenantId)).join(", ")}]::uuid[], ` +
  `array[${jobs.map((job) => uuidLiteral(job.deliveryId)).join(", ")}]::uuid[], ${Math.max(1, Math.floor(leaseSeconds))})`;

type Row<Table extends keyof Database["public"]["Tables"]> = Database["public"]["Tables"][Table]["Row"];

// A row of private.load_webhook_claims: the delivery's, its event's and its subscription's columns.
type LoadedRow =
  & Pick<Row<"webhook_deliveries">, "tenant_id" | "id" | "status" | "attempts" | "subscription_id" | "attempt_started_at">
  & { attempt_fresh: boolean; event_id: string; earlier_pending_until: string | null }
  & Pick<Row<"webhook_events">, "type" | "data" | "occurred_at">
  & Pick<Row<"webhook_subscriptions">, "url" | "enabled" | "secret" | "previous_secret" | "previous_secret_expires_at" | "failing_since">;

async function decide(deps: WebhookWorkerDependencies, job: TenantJob, loaded: LoadedRow | "duplicate" | undefined): Promise<Settled> {
  if (loaded === "duplicate") return { job, summary: "dropped", postponeSeconds: null };
  // Gone with its subscription (deleted), or not this tenant's: nothing to post.
  if (loaded === undefined) return { job, summary: "cancelled", postponeSeconds: null };
  if (loaded.status !== "pending") return { job, summary: "cancelled", postponeSeconds: null };
  const nowMs = deps.now();
  if (!loaded.attempt_fresh) {
    // Another claim's attempt may be under way: looked at again once its lease has ended.
    const leaseEnds = Date.parse(loaded.attempt_started_at ?? new Date(nowMs).toISOString()) + deps.settings.attemptLeaseSeconds * 1000;
    return { job, summary: "inFlight", postponeSeconds: Math.max(1, Math.ceil((leaseEnds - nowMs) / 1000) + 1) };
  }
  if (!loaded.enabled) {
    return {
      job, summary: "cancelled", postponeSeconds: null,
      delivery: { id: loaded.id, status: "cancelled", nextAttemptAt: null },
    };
  }
  if (loaded.earlier_pending_until !== null) {
    const until = Date.parse(loaded.earlier_pending_until);
    const wait = Math.max(deps.settings.orderWaitSeconds, Math.ceil((until - nowMs) / 1000) + 1);
    return { job, summary: "waiting", postponeSeconds: wait };
  }

  const attempt = loaded.attempts + 1;
  const startedAt = new Date(nowMs);
  const secrets = [loaded.secret];
  if (loaded.previous_secret && loaded.previous_secret_expires_at && Date.parse(loaded.previous_secret_expires_at) > nowMs) {
    secrets.push(loaded.previous_secret);
  }
  const body = webhookBody(loaded);
  let result: PostResult;
  try {
    result = await deps.post({ url: loaded.url, headers: deps.sign(loaded.event_id, startedAt, body, secrets), body });
  } catch (error) {
    result = { outcome: "network-error", message: `the sender threw: ${String(error)}`, durationMs: deps.now() - nowMs };
  }

  const base = { deliveryId: loaded.id, attempt, startedAt: startedAt.toISOString(), durationMs: Math.round(result.durationMs) };
  const statusCode = result.outcome === "response" ? result.status : null;
  const snippet = result.outcome === "response" ? result.snippet : null;
  const delivered = { id: loaded.id, attempts: attempt, lastAttemptAt: startedAt.toISOString(), lastStatusCode: statusCode };

  if (result.outcome === "response" && result.status >= 200 && result.status < 300) {
    return {
      job, summary: "succeeded", postponeSeconds: null,
      attempt: { ...base, statusCode, outcome: "succeeded", error: null, responseSnippet: snippet, nextAttemptAt: null },
      delivery: { ...delivered, status: "succeeded", nextAttemptAt: null },
      subscription: { id: loaded.subscription_id, healthy: true, failingSince: null, disable: null },
    };
  }
  if (result.outcome === "response" && result.status === 410) {
    return {
      job, summary: "failed", postponeSeconds: null,
      attempt: { ...base, statusCode, outcome: "gone", error: "the endpoint answered 410 Gone", responseSnippet: snippet, nextAttemptAt: null },
      delivery: { ...delivered, status: "failed", nextAttemptAt: null },
      subscription: { id: loaded.subscription_id, healthy: false, failingSince: startedAt.toISOString(), disable: "gone" },
    };
  }

  const error = result.outcome === "response" ? `the endpoint answered ${result.status}` : clip(result.message);
  const failingSince = loaded.failing_since ?? startedAt.toISOString();
  const failingForTooLong = nowMs - Date.parse(failingSince) >= deps.settings.failingDisablesAfterMs;
  const scheduled = retryDelaySeconds(attempt, deps.random);
  const askedFor = result.outcome === "response" ? retryAfterSeconds(result.retryAfter, nowMs) : null;
  const delay = scheduled === null || failingForTooLong ? null : Math.max(scheduled, askedFor ?? 0);
  const subscription: SubscriptionChange = {
    id: loaded.subscription_id, healthy: false, failingSince, disable: failingForTooLong ? "failing" : null,
  };
  const outcome = result.outcome === "refused" ? "refused" : delay === null ? "failed" : "retrying";
  if (delay === null) {
    deps.logger.warn(`webhook delivery failed after ${attempt} attempts: ${error}`, {
      deliveryId: loaded.id, tenantId: job.tenantId, subscriptionId: loaded.subscription_id,
    });
    return {
      job, summary: "failed", postponeSeconds: null,
      attempt: { ...base, statusCode, outcome: outcome === "refused" ? "refused" : "failed", error, responseSnippet: snippet, nextAttemptAt: null },
      delivery: { ...delivered, status: "failed", nextAttemptAt: null },
      subscription,
    };
  }
  const nextAttemptAt = new Date(nowMs + delay * 1000).toISOString();
  return {
    job, summary: "retrying", postponeSeconds: delay,
    attempt: { ...base, statusCode, outcome, error, responseSnippet: snippet, nextAttemptAt },
    delivery: { ...delivered, status: "pending", nextAttemptAt },
    subscription,
  };
}

// One change per subscription from all of a claim's deliveries to it: a 410 disables it
// whatever else happened; any success makes it healthy (the endpoint answers); else the earliest failure is when it began failing,
// and any reason to disable it stands.
function mergeSubscriptionChanges(changes: SubscriptionChange[]): SubscriptionChange[] {
  const merged = new Map<string, SubscriptionChange>();
  for (const change of changes) {
    const seen = merged.get(change.id);
    if (!seen) {
      merged.set(change.id, change);
    } else if (seen.disable === "gone" || change.disable === "gone") {
      // 410 Gone is the endpoint's own word that it wants nothing more.
      merged.set(change.id, { id: change.id, healthy: false, failingSince: seen.failingSince ?? change.failingSince, disable: "gone" });
    } else if (seen.healthy || change.healthy) {
      merged.set(change.id, { id: change.id, healthy: true, failingSince: null, disable: null });
    } else {
      const earliest = [seen.failingSince, change.failingSince].filter((at): at is string => at !== null).sort()[0] ?? null;
      merged.set(change.id, { id: change.id, healthy: false, failingSince: earliest, disable: seen.disable ?? change.disable });
    }
  }
  return [...merged.values()];
}

// The whole claim in one call (private.settle_webhook_claim says what it does).
async function settleClaim(deps: WebhookWorkerDependencies, settled: Settled[]): Promise<void> {
  const byTenant = new Map<string, Settled[]>();
  for (const result of settled) {
    const group = byTenant.get(result.job.tenantId);
    if (group) group.push(result);
    else byTenant.set(result.job.tenantId, [result]);
  }
  const claim = {
    finished: settled.filter((result) => result.postponeSeconds === null).map((result) => result.job.msgId),
    postponed: settled.filter((result) => result.postponeSeconds !== null)
      .map((result) => ({ msgId: result.job.msgId, delaySeconds: result.postponeSeconds })),
    tenants: [...byTenant].map(([tenantId, group]) => ({
      tenantId,
      attempts: group.flatMap((result) => result.attempt ? [result.attempt] : []),
      deliveries: group.flatMap((result) => result.delivery ? [result.delivery] : []),
      subscriptions: mergeSubscriptionChanges(group.flatMap((result) => result.subscription ? [result.subscription] : [])),
      released: group.flatMap((result) => result.lease ? [result.lease] : []),
    })),
  };
  await workerTransaction(deps.sql, (tx) => [
    tx`select private.settle_webhook_claim(${JSON.stringify(claim)}::text::jsonb)`,
  ]);
}
