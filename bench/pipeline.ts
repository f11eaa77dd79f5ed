// Item 4: 10,000 notifications across 100 tenants, enqueued as the triggers enqueue
// them (private.enqueue_notification: the row and its pgmq job in one transaction),
// drained by the notifications worker function through the gateway against the
// SendGrid capture server; and pgmq's own ceiling: send, read and delete of as many
// messages in SQL, in batches of the size the worker claims.
import assert from "node:assert/strict";
import type postgres from "postgres";
import type { RunSummary } from "../src/notifications/worker.ts";
import { tenantId } from "./fixtures.ts";

export type PipelineContext = {
  origin: string;
  mailUrl: string;
  serviceRoleKey: string;
  sql: postgres.Sql;
  tenants: { first: number; count: number };
  perTenant: number;
  // The batch the ceiling sends, reads and deletes at a time.
  ceilingBatch: number;
  log: (line: string) => void;
};

export type PipelineResult = {
  notifications: number;
  enqueueSeconds: number;
  drainSeconds: number;
  workerRuns: number;
  notificationsPerSecond: number;
  // Not sent, or not exactly one accepted mail for it, or a worker call that failed.
  errors: number;
  pgmqCeiling: { messages: number; seconds: number; messagesPerSecond: number };
};

const WORKER_PATH = "/functions/v1/notifications-worker";
const CEILING_QUEUE = "bench_ceiling";

async function callWorker(context: PipelineContext): Promise<RunSummary> {
  const response = await fetch(`${context.origin}${WORKER_PATH}`, {
    method: "POST",
    headers: { authorization: `Bearer ${context.serviceRoleKey}` },
  });
  const text = await response.text();
  assert.equal(response.status, 200, `the worker answered ${response.status}: ${text}`);
  return JSON.parse(text) as RunSummary;
}

async function clearCapture(mailUrl: string): Promise<void> {
  const response = await fetch(`${mailUrl}/_capture`, { method: "DELETE" });
  await response.body?.cancel();
  assert.equal(response.status, 204, "the SendGrid capture server forgets its mail");
}

// The SendGrid double reports on every mail it accepts (SendGrid's Event Webhook, to the api
// function): here it reports nothing, so that the drain is the worker's alone and the
// number stays comparable with the runs before delivery reports existed. A clear restores it.
async function quietReports(mailUrl: string): Promise<void> {
  const response = await fetch(`${mailUrl}/_capture/fates`, { method: "POST", body: JSON.stringify({ default: { events: [] } }) });
  await response.body?.cancel();
  assert.equal(response.status, 200, "the SendGrid capture server reports nothing");
}

export async function pipeline(context: PipelineContext): Promise<PipelineResult> {
  const { sql } = context;
  const tenantIds = Array.from({ length: context.tenants.count }, (_, i) => tenantId(context.tenants.first + i));
  const expected = tenantIds.length * context.perTenant;

  // Jobs already queued (a test's retry waiting out its backoff) would be drained with the
  // pipeline's and blur the number: they are made visible and drained first, as the
  // paused schedule would have done.
  await sql`select pgmq.set_vt('notifications', msg_id, 0) from pgmq.q_notifications where vt > clock_timestamp()`;
  for (let run = 0; (await callWorker(context)).read > 0; run++) assert.ok(run < 1000, "earlier jobs drain");
  const [queued] = await sql<{ count: number }[]>`select count(*)::int as count from pgmq.q_notifications`;
  assert.equal(queued?.count, 0, "the notifications queue is empty before the pipeline runs");
  await clearCapture(context.mailUrl);
  await quietReports(context.mailUrl);

  // Interleaved across tenants, as check-ins across many tenants arrive: job i belongs to
  // tenant i mod 100, so no batch of consecutive jobs is one tenant's.
  const enqueueStarted = performance.now();
  const ids = await sql<{ id: string }[]>`
    select private.enqueue_notification(stay.tenant_id, 'checkout_summary', stay.guest_id, stay.id)::text as id
    from (
      select r.tenant_id, r.guest_id, r.id
      from generate_series(1, ${context.perTenant}) k
      cross join unnest(${tenantIds}::uuid[]) with ordinality t(id, position)
      join public.reservations r
        on r.tenant_id = t.id and r.id = ('b5e' || lpad(k::text, 5, '0') || '-0000-4000-8000-' || right(t.id::text, 12))::uuid
      order by k, t.position
    ) stay`;
  const enqueueSeconds = (performance.now() - enqueueStarted) / 1000;
  assert.equal(ids.length, expected, `${expected} notifications enqueued`);

  const drainStarted = performance.now();
  const total: RunSummary = { read: 0, sent: 0, failed: 0, skipped: 0, retried: 0, dropped: 0 };
  let workerRuns = 0;
  let lastWork = drainStarted;
  for (;;) {
    const run = await callWorker(context);
    workerRuns++;
    if (run.read === 0) break;
    lastWork = performance.now();
    for (const key of Object.keys(total) as (keyof RunSummary)[]) total[key] += run[key];
    assert.ok(workerRuns < 10_000, "the worker drains the queue");
  }
  const drainSeconds = (lastWork - drainStarted) / 1000;
  context.log(`  worker: ${JSON.stringify(total)} in ${workerRuns} runs, ${drainSeconds.toFixed(2)} s`);

  // Every notification sent once, and the provider accepted exactly one mail for each.
  const [outcome] = await sql<{ sent: number; other: number }[]>`
    select count(*) filter (where status = 'sent')::int as sent, count(*) filter (where status <> 'sent')::int as other
    from public.notifications where id = any (${ids.map((row) => row.id)}::uuid[])`;
  const response = await fetch(`${context.mailUrl}/_capture/requests`);
  const attempts = await response.json() as { status: number; body: { custom_args?: { notification_id?: string } } }[];
  const accepted = new Map<string, number>();
  for (const attempt of attempts) {
    const id = attempt.body.custom_args?.notification_id;
    if (attempt.status === 202 && id) accepted.set(id, (accepted.get(id) ?? 0) + 1);
  }
  const mailedOnce = ids.filter((row) => accepted.get(row.id) === 1).length;
  const errors = (expected - (outcome?.sent ?? 0)) + (expected - mailedOnce) + total.failed + total.retried + total.dropped;
  await clearCapture(context.mailUrl);

  return {
    notifications: expected,
    enqueueSeconds,
    drainSeconds,
    workerRuns,
    notificationsPerSecond: expected / drainSeconds,
    errors,
    pgmqCeiling: await pgmqCeiling(context, expected),
  };
}

// Send, read and delete `messages` messages of the worker's shape on a queue of its
// own, a batch at a time, each statement its own transaction as the worker's are.
async function pgmqCeiling(context: PipelineContext, messages: number) {
  const { sql } = context;
  const batch = context.ceilingBatch;
  await sql`select pgmq.create(${CEILING_QUEUE})`;
  try {
    await sql`select pgmq.purge_queue(${CEILING_QUEUE})`;
    const message = { notificationId: crypto.randomUUID(), tenantId: tenantId(1) };
    const started = performance.now();
    for (let sent = 0; sent < messages; sent += batch) {
      const payloads = Array.from({ length: Math.min(batch, messages - sent) }, () => message);
      await sql`select pgmq.send_batch(${CEILING_QUEUE}, ${sql.array(payloads.map((p) => JSON.stringify(p)))}::jsonb[])`;
    }
    let done = 0;
    for (;;) {
      const read = await sql<{ msg_id: string }[]>`select msg_id::text from pgmq.read(${CEILING_QUEUE}, 60, ${batch})`;
      if (read.length === 0) break;
      await sql`select pgmq.delete(${CEILING_QUEUE}, ${read.map((row) => row.msg_id)}::bigint[])`;
      done += read.length;
    }
    const seconds = (performance.now() - started) / 1000;
    assert.equal(done, messages, "the ceiling read and deleted every message it sent");
    context.log(`  pgmq ceiling: ${messages} messages sent, read and deleted in ${seconds.toFixed(2)} s`);
    return { messages, seconds, messagesPerSecond: messages / seconds };
  } finally {
    await sql`select pgmq.drop_queue(${CEILING_QUEUE})`;
  }
}
