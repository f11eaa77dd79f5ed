// Part 10: how long a check-in's notifications take to reach their providers while the
// workers run on their deployed schedule. Check-ins go through the API (POST
// /v1/reservations/{id}/check-in) at a steady rate, each fired at its own moment whether or
// not the ones before have been answered, across the bench tenants on confirmed stays
// set aside for this part (bench/fixtures.ts); the schedule (scripts/stack.sh's scheduler,
// the local pg_cron) calls the notifications worker as configured, and nothing else does.
//
// Where the times come from, all from this machine's one clock:
// - the check-in: the notification's created_at, now() of the check-in's own transaction,
//   which the trigger's insert takes. It is when that transaction began, a few
//   milliseconds before its commit, so the latency counted from it is at most that much
//   too long; counted from the client's 2xx instead (after the commit) it is too short by
//   the answer's way back. Both are kept; the first is the one reported.
// - the provider's acceptance: when the SendGrid or SMS double received the request it
//   accepted (its recorded receivedAt; it answers at once).
// - in-app, which has no provider: the notification's sent_at, now() of the worker's
//   transaction that recorded the claim and wrote the inbox message.
import assert from "node:assert/strict";
import type postgres from "postgres";
import { callWorkerFunction } from "./drain.ts";
import { LATENCY_CONFIRMED_PER_TENANT, RESERVATIONS_PER_TENANT, benchStaff, reservationId, tenantId } from "./fixtures.ts";
import { clearCapture, mailAccepted, prepareTenants, smsAccepted } from "./pipeline.ts";
import { V1_PATH } from "./reads.ts";

export type LatencyContext = {
  origin: string;
  token: string;
  mailUrl: string;
  smsUrl: string;
  serviceRoleKey: string;
  sql: postgres.Sql;
  // The bench tenants the check-ins go to, in turn.
  tenants: { first: number; last: number };
  checkInsPerSecond: number;
  seconds: number;
  // The workers' schedule on or off (scripts/stack.sh scheduler on|off).
  schedule: (on: boolean) => Promise<void>;
  // How often the schedule starts a worker's run, as configured (for the report).
  workerEverySeconds: number;
  log: (line: string) => void;
};

export type LatencyStats = { count: number; p50Ms: number; p99Ms: number; maxMs: number };

export type Channel = "email" | "sms" | "in_app";
export const channels: Channel[] = ["email", "sms", "in_app"];

export type ChannelLatency = {
  // Notifications the check-ins made on the channel.
  notifications: number;
  // Of them, sent and accepted exactly once by the provider (email, SMS), or in the inbox
  // of the member they name (in-app).
  delivered: number;
  // From the check-in's transaction to the provider's acceptance (email, SMS) or to the
  // notification's sent_at (in-app): what the report gives.
  fromTransaction: LatencyStats;
  // The same from the client's 2xx, after the commit: the latency lies between the two.
  fromResponse: LatencyStats;
  // From the check-in's transaction to sent_at, when the worker recorded the outcome.
  toRecordedSent: LatencyStats;
};

// One run of the worker as its notifications show it: those whose sent_at fall together,
// apart from the next run's by the schedule's wait. Seconds from the first check-in.
export type WorkerRun = { firstSentS: number; lastSentS: number; notifications: number };

export type NotificationLatencyResult = {
  checkIns: number;
  checkInsPerSecond: number;
  // From the first check-in sent to the last.
  sendingSeconds: number;
  // How late the latest check-in left against its moment (the load generator's own lag).
  latestSendMs: number;
  checkInAnswers: { ok: number; errors: number; p50Ms: number; p99Ms: number };
  workerEverySeconds: number;
  // From the last check-in's answer until no notification of the run was pending.
  settledSeconds: number;
  byChannel: Record<Channel, ChannelLatency>;
  workerRuns: WorkerRun[];
  // Check-ins not answered 2xx, notifications missing or not delivered.
  errors: number;
};

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

// The guest's email and SMS, and each staff member in-app (prepareTenants).
const NOTIFICATIONS_PER_CHECK_IN = 2 + benchStaff.length;

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

function stats(values: number[]): LatencyStats {
  const sorted = [...values].sort((a, b) => a - b);
  return { count: sorted.length, p50Ms: percentile(sorted, 50), p99Ms: percentile(sorted, 99), maxMs: sorted.at(-1) ?? Number.NaN };
}

type CheckIn = { tenant: string; reservation: string };
type Answer = CheckIn & { status: number; answeredAt: number; tookMs: number };

// Check-in i goes to tenant first + i mod count, on its reservation 1000 - i div count:
// from the last confirmed stay of each tenant down, inside the block set aside for this part.
function plannedCheckIns(context: LatencyContext, total: number): CheckIn[] {
  const count = context.tenants.last - context.tenants.first + 1;
  assert.ok(Math.ceil(total / count) <= LATENCY_CONFIRMED_PER_TENANT,
    `${total} check-ins need more than the ${LATENCY_CONFIRMED_PER_TENANT} stays set aside in each of ${count} tenants`);
  return Array.from({ length: total }, (_, i) => {
    const n = context.tenants.first + (i % count);
    return { tenant: tenantId(n), reservation: reservationId(n, RESERVATIONS_PER_TENANT - Math.floor(i / count)) };
  });
}

async function checkIn(context: LatencyContext, stay: CheckIn): Promise<Answer> {
  const sent = performance.now();
  let status = 0;
  try {
    const response = await fetch(`${context.origin}${V1_PATH}/reservations/${stay.reservation}/check-in`, {
      method: "POST",
      headers: { authorization: `Bearer ${context.token}`, "x-tenant-id": stay.tenant },
    });
    await response.body?.cancel();
    status = response.status;
  } catch {
    status = 0; // refused or broken: an error like any answer but a 2xx
  }
  return { ...stay, status, answeredAt: Date.now(), tookMs: performance.now() - sent };
}

// When each notification was accepted by a capture server, by the notification id it
// carries: the SMS double's accepted requests, the SendGrid double's accepted mails (one per
// personalization of a request, with the request's time).
async function acceptances(
  captureUrl: string,
  path: "/_capture/requests" | "/_capture/messages",
  accepted: (attempt: Record<string, unknown>) => string | null,
) {
  const response = await fetch(`${captureUrl}${path}`);
  const attempts = await response.json() as Record<string, unknown>[];
  const times = new Map<string, number[]>();
  for (const attempt of attempts) {
    const id = accepted(attempt);
    if (id) times.set(id, [...(times.get(id) ?? []), Date.parse(String(attempt.receivedAt))]);
  }
  return times;
}

// A run settles a claim every few milliseconds while there is work, so a gap of half the
// schedule's period between two sent_at is a new run; runs that follow the queue back to
// back, with work all along, show as one.
function workerRuns(rows: Row[], everySeconds: number): WorkerRun[] {
  const firstCheckIn = Math.min(...rows.map((row) => row.created_ms));
  const sent = rows.flatMap((row) => row.sent_ms === null ? [] : [row.sent_ms]).sort((a, b) => a - b);
  const runs: WorkerRun[] = [];
  let previous = Number.NEGATIVE_INFINITY;
  for (const at of sent) {
    const offset = (at - firstCheckIn) / 1000;
    if (at - previous > (everySeconds / 2) * 1000) runs.push({ firstSentS: offset, lastSentS: offset, notifications: 0 });
    const run = runs.at(-1)!;
    run.lastSentS = offset;
    run.notifications++;
    previous = at;
  }
  return runs;
}

type Row = { id: string; channel: Channel; status: string; tenant: string; reservation: string; in_inbox: boolean; created_ms: number; sent_ms: number | null };

export async function notificationLatency(context: LatencyContext): Promise<NotificationLatencyResult> {
  const { sql } = context;
  const total = context.checkInsPerSecond * context.seconds;
  const planned = plannedCheckIns(context, total);
  const tenantIds = Array.from({ length: context.tenants.last - context.tenants.first + 1 }, (_, i) => tenantId(context.tenants.first + i));
  await prepareTenants(sql, tenantIds);
  const pairs = { tenants: planned.map((stay) => stay.tenant), reservations: planned.map((stay) => stay.reservation) };
  const [stays] = await sql<{ confirmed: number }[]>`
    select count(*)::int as confirmed from public.reservations r
    join unnest(${pairs.tenants}::uuid[], ${pairs.reservations}::uuid[]) c(tenant_id, id) on r.tenant_id = c.tenant_id and r.id = c.id
    where r.status = 'confirmed'`;
  assert.equal(stays?.confirmed, total, `the ${total} stays to check in are confirmed and untouched`);

  // Jobs already queued would be drained with the run's and delay them: they go first,
  // with the schedule still paused, as the pipeline's part does.
  await sql`select pgmq.set_vt('notifications', msg_id, 0) from pgmq.q_notifications where vt > clock_timestamp()`;
  await sql`select pgmq.set_vt('notification_events', msg_id, 0) from pgmq.q_notification_events where vt > clock_timestamp()`;
  for (let run = 0; ; run++) {
    assert.ok(run < 1000, "earlier jobs drain");
    const drained = await callWorkerFunction<{ read: number; events: number; dropped: number }>(
      context.origin, "notifications-worker", context.serviceRoleKey);
    if (drained.read === 0 && drained.events === 0 && drained.dropped === 0) break;
  }
  // Forgetting what they got also restores the doubles' delivery reports, as deployed.
  for (const url of [context.mailUrl, context.smsUrl]) await clearCapture(url);
  // Preparing the tenants rewrote every guest of 999 of them: the checkpoint that much WAL
  // calls for is taken now, so that it does not fall among the check-ins with its writes.
  await sql`checkpoint`;

  const expected = total * NOTIFICATIONS_PER_CHECK_IN;
  const intervalMs = 1000 / context.checkInsPerSecond;
  let answers: Answer[] = [];
  let latestSendMs = 0;
  let sendingSeconds = 0;
  let settledSeconds = Number.NaN;
  await context.schedule(true);
  try {
    // The scheduler's first call goes out as it starts; the check-ins then meet it wherever
    // its cycle happens to be, as on a hosted project.
    await sleep(2000);
    context.log(`  ${total} check-ins at ${context.checkInsPerSecond} /s, the workers called every ${context.workerEverySeconds} s`);
    const started = performance.now();
    const inFlight: Promise<Answer>[] = [];
    for (const [i, stay] of planned.entries()) {
      const due = started + i * intervalMs;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
      latestSendMs = Math.max(latestSendMs, performance.now() - due);
      inFlight.push(checkIn(context, stay));
    }
    sendingSeconds = (performance.now() - started) / 1000;
    answers = await Promise.all(inFlight);
    const answered = performance.now();

    // Until every notification of the run is out of `pending`, or several of the schedule's
    // cycles (each a wait and a run of at most the worker's budget) have gone by.
    const deadline = answered + 6 * (context.workerEverySeconds + 10) * 1000;
    for (;;) {
      const [progress] = await sql<{ made: number; pending: number }[]>`
        select count(*)::int as made, count(*) filter (where n.status = 'pending')::int as pending
        from public.notifications n
        join unnest(${pairs.tenants}::uuid[], ${pairs.reservations}::uuid[]) c(tenant_id, reservation_id)
          on n.tenant_id = c.tenant_id and n.reservation_id = c.reservation_id`;
      if (progress && progress.made >= expected && progress.pending === 0) {
        settledSeconds = (performance.now() - answered) / 1000;
        break;
      }
      if (performance.now() > deadline) {
        context.log(`  gave up waiting: ${progress?.pending} of ${progress?.made} notifications still pending`);
        break;
      }
      await sleep(500);
    }
  } finally {
    await context.schedule(false);
  }

  const rows = await sql<Row[]>`
    select n.id::text, n.channel, n.status, n.tenant_id::text as tenant, n.reservation_id::text as reservation,
           exists (select from public.inbox_messages m
                   where m.tenant_id = n.tenant_id and m.notification_id = n.id and m.user_id = n.recipient_id) as in_inbox,
           (extract(epoch from n.created_at) * 1000)::float8 as created_ms,
           (extract(epoch from n.sent_at) * 1000)::float8 as sent_ms
    from public.notifications n
    join unnest(${pairs.tenants}::uuid[], ${pairs.reservations}::uuid[]) c(tenant_id, reservation_id)
      on n.tenant_id = c.tenant_id and n.reservation_id = c.reservation_id`;
  const accepted = {
    email: await acceptances(context.mailUrl, "/_capture/messages", mailAccepted),
    sms: await acceptances(context.smsUrl, "/_capture/requests", smsAccepted),
  };
  const answeredAt = new Map(answers.map((answer) => [`${answer.tenant}/${answer.reservation}`, answer.answeredAt]));

  const byChannel = {} as Record<Channel, ChannelLatency>;
  for (const channel of channels) {
    const mine = rows.filter((row) => row.channel === channel);
    const fromTransaction: number[] = [];
    const fromResponse: number[] = [];
    const toRecordedSent: number[] = [];
    let delivered = 0;
    for (const row of mine) {
      if (row.status !== "sent" || row.sent_ms === null) continue;
      const times = channel === "in_app" ? (row.in_inbox ? [row.sent_ms] : []) : accepted[channel].get(row.id) ?? [];
      if (times.length !== 1) continue;
      delivered++;
      fromTransaction.push(times[0]! - row.created_ms);
      const answer = answeredAt.get(`${row.tenant}/${row.reservation}`);
      if (answer !== undefined) fromResponse.push(times[0]! - answer);
      toRecordedSent.push(row.sent_ms - row.created_ms);
    }
    byChannel[channel] = {
      notifications: mine.length,
      delivered,
      fromTransaction: stats(fromTransaction),
      fromResponse: stats(fromResponse),
      toRecordedSent: stats(toRecordedSent),
    };
    const s = byChannel[channel].fromTransaction;
    context.log(`  ${channel}: ${delivered} of ${mine.length} delivered; p50 ${(s.p50Ms / 1000).toFixed(2)} s, ` +
      `p99 ${(s.p99Ms / 1000).toFixed(2)} s, max ${(s.maxMs / 1000).toFixed(2)} s`);
  }
  for (const url of [context.mailUrl, context.smsUrl]) await clearCapture(url);

  const ok = answers.filter((answer) => answer.status >= 200 && answer.status < 300);
  const took = ok.map((answer) => answer.tookMs).sort((a, b) => a - b);
  const delivered = channels.reduce((sum, channel) => sum + byChannel[channel].delivered, 0);
  const errors = (answers.length - ok.length) + (expected - delivered);
  context.log(`  check-ins: ${ok.length} of ${answers.length} answered 2xx in ${sendingSeconds.toFixed(1)} s; ` +
    `all notifications out of pending ${Number.isNaN(settledSeconds) ? "never" : `${settledSeconds.toFixed(1)} s after the last answer`}`);
  return {
    checkIns: total,
    checkInsPerSecond: context.checkInsPerSecond,
    sendingSeconds,
    latestSendMs,
    checkInAnswers: { ok: ok.length, errors: answers.length - ok.length, p50Ms: percentile(took, 50), p99Ms: percentile(took, 99) },
    workerEverySeconds: context.workerEverySeconds,
    settledSeconds,
    byChannel,
    workerRuns: workerRuns(rows, context.workerEverySeconds),
    errors,
  };
}
