// Item 4: check-ins across 100 tenants enqueued as the check-in trigger enqueues them
// (private.enqueue_notification_event: one event each on notification_events), each
// reaching the guest by email and by SMS (the tenant opted in, the guest has a number)
// and the tenant's three staff members in-app; drained by the notifications worker
// function through the gateway, which makes the events notifications and sends them,
// against the SendGrid and Twilio capture servers; and
// pgmq's own ceiling: send, read and delete of as many messages in SQL, in batches of the
// size the worker claims.
import assert from "node:assert/strict";
import type postgres from "postgres";
import type { RunSummary } from "../src/notifications/worker.ts";
import { stack } from "../test/support/stack.ts";
import { callWorkerAt, callWorkerFunction, drainByCalls, forgetRuntimeUse, type RuntimeUse, runtimeUse } from "./drain.ts";
import { benchStaff, tenantId } from "./fixtures.ts";
import { type Before, benchPort, type Instance, startFunction, stopAll, untilServing } from "./instances.ts";

export type PipelineContext = {
  origin: string;
  mailUrl: string;
  smsUrl: string;
  serviceRoleKey: string;
  // Where the function's local Edge Runtime answers for itself (stack.functionPorts).
  runtimePort: number;
  sql: postgres.Sql;
  tenants: { first: number; count: number };
  // Check-ins per tenant; each makes NOTIFICATIONS_PER_CHECK_IN notifications.
  checkInsPerTenant: number;
  // The batch the ceiling sends, reads and deletes at a time.
  ceilingBatch: number;
  log: (line: string) => void;
};

export type PipelineResult = {
  checkIns: number;
  notifications: number;
  // Of the notifications, how many each channel carried.
  byChannel: { email: number; sms: number; in_app: number };
  enqueueSeconds: number;
  drainSeconds: number;
  workerRuns: number;
  notificationsPerSecond: number;
  // The drain's runs as the local Edge Runtime counted them.
  runtime: RuntimeUse;
  // Not sent, or not delivered exactly once on its channel, a worker call that failed, or a
  // worker the runtime killed.
  errors: number;
  pgmqCeiling: { messages: number; seconds: number; messagesPerSecond: number };
};

// The guest by email and SMS, and three staff members in-app.
const NOTIFICATIONS_PER_CHECK_IN = 2 + benchStaff.length;
const CEILING_QUEUE = "bench_ceiling";

const callWorker = (context: PipelineContext) =>
  callWorkerFunction<RunSummary>(context.origin, "notifications-worker", context.serviceRoleKey);

export async function clearCapture(captureUrl: string): Promise<void> {
  const response = await fetch(`${captureUrl}/_capture`, { method: "DELETE" });
  await response.body?.cancel();
  assert.equal(response.status, 204, `the capture server at ${captureUrl} forgets its messages`);
}

// The SendGrid and Twilio doubles report on every message they accept (SendGrid's Event
// Webhook, Twilio's status callbacks, to the api function): here they report nothing, so
// that the drain is the worker's alone and the number stays comparable with the runs
// before delivery reports existed. A clear restores them.
async function quietReports(captureUrl: string): Promise<void> {
  const response = await fetch(`${captureUrl}/_capture/fates`, { method: "POST", body: JSON.stringify({ default: { events: [] } }) });
  await response.body?.cancel();
  assert.equal(response.status, 200, `the capture server at ${captureUrl} reports nothing`);
}

// How many accepted messages each notification got from a capture server, keyed by the
// notification's id as the message carries it. Every attempt's record on the SMS double (an
// accepted one is one message); on the SendGrid double, its accepted mails, one per
// personalization of a request.
async function acceptedPerNotification(
  captureUrl: string,
  path: "/_capture/requests" | "/_capture/messages",
  accepted: (attempt: Record<string, unknown>) => string | null,
): Promise<Map<string, number>> {
  const response = await fetch(`${captureUrl}${path}`);
  const attempts = await response.json() as Record<string, unknown>[];
  const counts = new Map<string, number>();
  for (const attempt of attempts) {
    const id = accepted(attempt);
    if (id) counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return counts;
}

// One accepted mail on the SendGrid double: a personalization of an accepted request.
export const mailAccepted = (mail: Record<string, unknown>) => {
  const body = mail.body as { custom_args?: { notification_id?: string } } | undefined;
  return mail.status === 202 ? body?.custom_args?.notification_id ?? null : null;
};

// Twilio's request carries the notification in its StatusCallback URL (src/notifications/sms.ts).
export const smsAccepted = (attempt: Record<string, unknown>) => {
  const callback = (attempt.params as Record<string, string> | undefined)?.StatusCallback;
  return attempt.status === 201 && callback ? new URL(callback).searchParams.get("notificationId") : null;
};

// What the check-ins need in the pipeline's tenants (and the notification latency part's):
// the tenant opted in to the check-in message by SMS, every guest has a mobile number, and
// three staff members (made through Auth by bench/run.ts) belong to each tenant. Dropping
// the tenants takes it all away.
export async function prepareTenants(sql: postgres.Sql, tenantIds: string[]): Promise<void> {
  await sql`
    insert into public.notification_preferences (tenant_id, template_key, channel, enabled)
    select t.id, 'checkin_reminder', 'sms', true from unnest(${tenantIds}::uuid[]) t(id)
    on conflict on constraint notification_preferences_pkey do update set enabled = true`;
  await sql`
    update public.guests set phone = '+1555' || lpad((abs(hashtext(id::text)) % 10000000)::text, 7, '0')
    where tenant_id = any (${tenantIds}::uuid[])`;
  await sql`
    insert into public.tenant_memberships (tenant_id, user_id, role)
    select t.id, s.id, 'staff' from unnest(${tenantIds}::uuid[]) t(id) cross join unnest(${benchStaff.map((s) => s.userId)}::uuid[]) s(id)
    on conflict on constraint tenant_memberships_pkey do nothing`;
}

// The pipeline's load: its tenants' ids, and each check-in's stay once enqueued.
type Load = { tenantIds: string[]; checkIns: number; expected: number };

function pipelineLoad(context: PipelineContext): Load {
  const tenantIds = Array.from({ length: context.tenants.count }, (_, i) => tenantId(context.tenants.first + i));
  const checkIns = tenantIds.length * context.checkInsPerTenant;
  return { tenantIds, checkIns, expected: checkIns * NOTIFICATIONS_PER_CHECK_IN };
}

// Jobs already queued (a test's retry waiting out its backoff) would be drained with the
// pipeline's and blur the number: they are made visible and drained first, as the paused
// schedule would have done. The providers' doubles start empty and report nothing.
async function emptyQueues(context: PipelineContext, callWorker: () => Promise<RunSummary>): Promise<void> {
  const { sql } = context;
  await sql`select pgmq.set_vt('notifications', msg_id, 0) from pgmq.q_notifications where vt > clock_timestamp()`;
  await sql`select pgmq.set_vt('notification_events', msg_id, 0) from pgmq.q_notification_events where vt > clock_timestamp()`;
  for (let run = 0; ; run++) {
    assert.ok(run < 1000, "earlier jobs drain");
    const drained = await callWorker();
    if (drained.read === 0 && drained.events === 0 && drained.dropped === 0) break;
  }
  const [queued] = await sql<{ count: number }[]>`
    select (select count(*)::int from pgmq.q_notifications) + (select count(*)::int from pgmq.q_notification_events) as count`;
  assert.equal(queued?.count, 0, "the notifications queue and its events' queue are empty before the pipeline runs");
  for (const url of [context.mailUrl, context.smsUrl]) {
    await clearCapture(url);
    await quietReports(url);
  }
}

// Interleaved across tenants, as check-ins across many tenants arrive: check-in i belongs
// to tenant i mod 100, so a claim of consecutive jobs holds several tenants' check-ins.
// Answers the stays checked in.
async function enqueueCheckIns(context: PipelineContext, load: Load): Promise<{ stays: string[]; enqueueSeconds: number }> {
  const started = performance.now();
  const rows = await context.sql<{ id: string }[]>`
    select stay.id::text, private.enqueue_notification_event(stay.tenant_id, 'checkin_reminder', stay.id, null)
    from (
      select r.tenant_id, r.id
      from generate_series(1, ${context.checkInsPerTenant}) k
      cross join unnest(${load.tenantIds}::uuid[]) with ordinality t(id, position)
      join public.reservations r
        on r.tenant_id = t.id and r.id = ('b5e' || lpad(k::text, 5, '0') || '-0000-4000-8000-' || right(t.id::text, 12))::uuid
      order by k, t.position
    ) stay`;
  const enqueueSeconds = (performance.now() - started) / 1000;
  assert.equal(rows.length, load.checkIns, `${load.checkIns} check-ins made ${load.checkIns} events`);
  return { stays: rows.map((row) => row.id), enqueueSeconds };
}

// Every notification sent once: each email and SMS accepted exactly once by its provider,
// each in-app one in the inbox of the member it names. Answers how many were, and how
// many each channel carried; the doubles forget what they took.
async function deliveredOnce(
  context: PipelineContext,
  load: Load,
  stays: string[],
): Promise<{ delivered: number; byChannel: PipelineResult["byChannel"] }> {
  const { sql } = context;
  const rows = await sql<{ id: string; channel: keyof PipelineResult["byChannel"]; status: string; in_inbox: boolean }[]>`
    select n.id::text, n.channel, n.status,
           exists (select from public.inbox_messages m
                   where m.tenant_id = n.tenant_id and m.notification_id = n.id and m.user_id = n.recipient_id) as in_inbox
    from public.notifications n
    where n.reservation_id = any (${stays}::uuid[]) and n.template_key in ('checkin_reminder', 'check_in_alerts')`;
  assert.equal(rows.length, load.expected, `${load.checkIns} check-ins made ${load.expected} notifications`);
  const mailed = await acceptedPerNotification(context.mailUrl, "/_capture/messages", mailAccepted);
  const texted = await acceptedPerNotification(context.smsUrl, "/_capture/requests", smsAccepted);
  const byChannel = { email: 0, sms: 0, in_app: 0 };
  let delivered = 0;
  for (const row of rows) {
    byChannel[row.channel] = (byChannel[row.channel] ?? 0) + 1;
    const once = row.channel === "email" ? mailed.get(row.id) === 1 : row.channel === "sms" ? texted.get(row.id) === 1 : row.in_inbox;
    if (row.status === "sent" && once) delivered++;
  }
  context.log(`  delivered: ${delivered} of ${load.expected} (${JSON.stringify(byChannel)})`);
  assert.deepEqual(
    byChannel,
    { email: load.checkIns, sms: load.checkIns, in_app: load.checkIns * benchStaff.length },
    "each check-in reached every channel",
  );
  for (const url of [context.mailUrl, context.smsUrl]) await clearCapture(url);
  return { delivered, byChannel };
}

const noRuns = (): RunSummary => ({
  events: 0, read: 0, sent: 0, failed: 0, skipped: 0, retried: 0, dropped: 0, unconfirmed: 0, postponed: 0,
});

// What a drain did that is not a single clean send of each notification.
const drainErrors = (total: RunSummary) => total.failed + total.retried + total.dropped + total.unconfirmed + total.postponed;

export async function pipeline(context: PipelineContext): Promise<PipelineResult> {
  const load = pipelineLoad(context);
  await prepareTenants(context.sql, load.tenantIds);
  await emptyQueues(context, () => callWorker(context));
  const { stays, enqueueSeconds } = await enqueueCheckIns(context, load);

  await forgetRuntimeUse(context.runtimePort);
  const { total, workerRuns, drainSeconds } = await drainByCalls(() => callWorker(context), noRuns());
  const runtime = await runtimeUse(context.runtimePort);
  context.log(`  worker: ${JSON.stringify(total)} in ${workerRuns} runs, ${drainSeconds.toFixed(2)} s`);
  context.log(`  runtime: ${JSON.stringify(runtime)}`);
  assert.equal(total.events, load.checkIns, "every event was made into its notifications");
  const { delivered, byChannel } = await deliveredOnce(context, load, stays);

  return {
    checkIns: load.checkIns,
    notifications: load.expected,
    byChannel,
    enqueueSeconds,
    drainSeconds,
    workerRuns,
    notificationsPerSecond: load.expected / drainSeconds,
    runtime,
    errors: (load.expected - delivered) + drainErrors(total) + runtime.killed,
    pgmqCeiling: await pgmqCeiling(context, load.expected),
  };
}

// One drain of the side-by-side comparison.
export type BesideDrain = { drainSeconds: number; workerRuns: number; notificationsPerSecond: number; errors: number };
export type PipelineBeside = { revision: string; rounds: number; after: BesideDrain[]; before: BesideDrain[] };

// The worker's settings as the stack's functions run it, the database through the pooler.
function workerSettings(context: PipelineContext): Record<string, string> {
  const { notifications } = stack;
  return {
    SUPABASE_URL: stack.apiUrl,
    SUPABASE_DB_URL: stack.dbUrl,
    DATABASE_URL: stack.poolerUrl,
    DATABASE_POOL_MODE: "transaction",
    SUPABASE_SERVICE_ROLE_KEY: context.serviceRoleKey,
    SENDGRID_API_URL: context.mailUrl,
    SENDGRID_API_KEY: notifications.sendGridApiKey,
    NOTIFICATIONS_FROM_EMAIL: notifications.fromEmail,
    NOTIFICATIONS_FROM_NAME: notifications.fromName,
    SMS_API_URL: context.smsUrl,
    SMS_ACCOUNT_SID: notifications.sms.accountSid,
    SMS_AUTH_TOKEN: notifications.sms.authToken,
    SMS_FROM_NUMBER: notifications.sms.fromNumber,
    NOTIFICATIONS_RETRY_BASE_SECONDS: String(notifications.retryBaseSeconds),
    NOTIFICATIONS_RETRY_MAX_SECONDS: String(notifications.retryMaxSeconds),
  };
}

// The same pipeline drained by this tree's notifications worker and by an earlier
// revision's, side by side in one run: each a process the bench starts (bench/instances.ts),
// both through the pooler, outside the local Edge Runtime, so the code is all that differs.
// In each round both drain the same 10,000 notifications, one after the other, the first
// place alternating; the drain before's notifications are deleted before each load. The
// earlier revision runs against this tree's database: what is compared is the worker's
// own code, its SQL functions being this tree's.
export async function pipelineBeside(context: PipelineContext, before: Before, rounds: number): Promise<PipelineBeside> {
  const load = pipelineLoad(context);
  const env = workerSettings(context);
  const instances = [
    startFunction({ label: "after", name: "notifications-worker", port: benchPort(0), env }),
    startFunction({ label: "before", name: "notifications-worker", port: benchPort(1), env, root: before.root }),
  ];
  const call = (instance: Instance) => () => callWorkerAt<RunSummary>(`${instance.origin}/notifications-worker`, context.serviceRoleKey);
  const result: PipelineBeside = { revision: before.revision, rounds, after: [], before: [] };
  try {
    // Without the service credential a worker answers 401: it is serving.
    await Promise.all(instances.map((instance) => untilServing(instance, "/", 401)));
    await prepareTenants(context.sql, load.tenantIds);
    // Round 0 warms both up (their connections, the compiled code) and is not counted.
    for (let round = 0; round <= rounds; round++) {
      for (const instance of round % 2 === 0 ? instances : [...instances].reverse()) {
        await emptyQueues(context, call(instance));
        // The check-ins' notifications of the drain before, so that these are counted alone.
        await context.sql`
          delete from public.notifications
          where tenant_id = any (${load.tenantIds}::uuid[]) and template_key in ('checkin_reminder', 'check_in_alerts')`;
        const { stays } = await enqueueCheckIns(context, load);
        const { total, workerRuns, drainSeconds } = await drainByCalls(call(instance), noRuns());
        assert.equal(total.events, load.checkIns, "every event was made into its notifications");
        const { delivered } = await deliveredOnce(context, load, stays);
        const drain = {
          drainSeconds,
          workerRuns,
          notificationsPerSecond: load.expected / drainSeconds,
          errors: (load.expected - delivered) + drainErrors(total),
        };
        context.log(`  round ${round}, ${instance.label}: ${load.expected} in ${drainSeconds.toFixed(2)} s, ${workerRuns} calls`);
        if (round > 0) result[instance.label as "after" | "before"].push(drain);
      }
    }
    return result;
  } finally {
    await stopAll(instances);
  }
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
