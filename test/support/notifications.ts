// The notifications pipeline for tests: the worker function through the gateway, the
// pgmq queue `notifications` seen from the admin connection, and the two provider
// doubles (local/sendgrid-capture, local/sms-capture) with their capture routes.
import assert from "node:assert/strict";
import { isDeepStrictEqual } from "node:util";
import type postgres from "postgres";
import { type Client, expectStatus, listPage, type Page, readOne, type Schemas } from "./api.ts";
import { createStay, type Stay, stepReservation } from "./domain.ts";
import { adminSql } from "./session.ts";
import { functionsDatabase, stack } from "./stack.ts";
import { type Fate, type ReportPost, type ScriptedResponse, sleep } from "../../local/capture.ts";
import { createPool } from "../../src/db/pool.ts";
import { createSendGridAdapter, type SendGridSettings } from "../../src/notifications/sendgrid.ts";
import { createSmsAdapter, type SmsSettings } from "../../src/notifications/sms.ts";
import { pushService, stackPushSender } from "./push.ts";
import {
  defaultWorkerSettings,
  QUEUE,
  type RunSummary,
  runWorker as runWorkerWith,
  type WorkerSettings,
} from "../../src/notifications/worker.ts";

export { type Fate, QUEUE, type ReportPost, type RunSummary, sleep };

export const workerUrl = () => `${stack.apiUrl}/functions/v1/notifications-worker`;

// ---------------------------------------------------------------- the API's view

export type Notification = Schemas["Notification"];
// A notification read by id: with its provider's reports, newest first.
export type NotificationWithEvents = Schemas["NotificationWithEvents"];
export type NotificationEvent = Schemas["NotificationEvent"];
export type NotificationStatus = Notification["status"];
export type TemplateKey = Notification["templateKey"];
export type Preference = Schemas["NotificationPreference"];

export const NOTIFICATIONS = "/v1/notifications";
export const NOTIFICATION = "/v1/notifications/{id}";
export const PREFERENCES = "/v1/notifications/preferences";

export const listNotifications = (api: Client, query = "") => listPage<Notification>(api, NOTIFICATIONS, query);

export async function readNotification(api: Client, id: string): Promise<NotificationWithEvents> {
  return (await readOne<NotificationWithEvents>(api, NOTIFICATION, { id })).body;
}

export const listPreferences = (api: Client, query = "") => listPage<Preference>(api, PREFERENCES, query);

// PATCH /v1/notifications/preferences with return=representation: 200 and the pair's row.
export async function setPreference(api: Client, body: Schemas["NotificationPreferenceSet"]): Promise<Preference> {
  const response = await api.patch("/notifications/preferences", body, { prefer: "return=representation" });
  return await expectStatus<Preference>("PATCH", PREFERENCES, response, 200);
}

// The domain events on their queue made into notifications, as the worker does before it
// claims jobs (private.expand_notification_events), without delivering any: what a test
// reads next are the pending notifications of what it did. How many events were made into
// notifications.
export async function expandEvents(): Promise<number> {
  const sql = adminSql();
  try {
    let expanded = 0;
    for (;;) {
      const [taken] = await sql<{ expanded: number; dropped: number }[]>`
        select expanded, dropped from private.expand_notification_events(1000)`;
      expanded += taken!.expanded;
      if (taken!.expanded + taken!.dropped === 0) return expanded;
    }
  } finally {
    await sql.end();
  }
}

// The tenant's only notification for a reservation and template, through the API, once
// the events before it are notifications.
export async function notificationFor(api: Client, reservationId: string, templateKey: TemplateKey): Promise<Notification> {
  await expandEvents();
  const page: Page<Notification> = await listNotifications(api, `?reservationId=${reservationId}&templateKey=${templateKey}`);
  assert.equal(page.data.length, 1, `one ${templateKey} notification for reservation ${reservationId}: ${JSON.stringify(page.data)}`);
  return page.data[0]!;
}

// A confirmed stay, checked in: its checkin_reminder is pending.
export async function checkedIn(api: Client): Promise<{ stay: Stay; pending: Notification }> {
  const stay = await createStay(api, { status: "confirmed" });
  await stepReservation(api, stay.reservation.id, "check-in");
  const pending = await notificationFor(api, stay.reservation.id, "checkin_reminder");
  assert.equal(pending.status, "pending");
  return { stay, pending };
}

// A notification that ended failed left one system notice (`delivery_failed`, nobody's
// but the tenant's), which the next run lands in the owners' inboxes, pointing at it; then
// nothing is left to run. `owner` is an owner's client in the tenant.
export async function expectFailureNoticed(owner: Client, failedId: string): Promise<void> {
  const notices = (await listNotifications(owner, "?templateKey=delivery_failed")).data;
  assert.equal(notices.length, 1, `one system notice: ${JSON.stringify(notices)}`);
  assert.deepEqual([notices[0]!.recipientType, notices[0]!.recipientId, notices[0]!.channel], ["system", null, "in_app"]);
  await deliverNotice(notices[0]!);
  const inbox = await listPage<Schemas["InboxMessage"]>(owner, "/v1/inbox", "?templateKey=delivery_failed");
  assert.deepEqual(inbox.data.map((message) => [message.notificationId, message.url]), [[notices[0]!.id, `/notifications/${failedId}`]]);
  assert.deepEqual(await runWorker(), summary({}), "and nothing more");
}

// A failure's notice, delivered by the next run unless the run that failed the
// notification took it already (see expectRunWithFailures).
export async function deliverNotice(notice: Notification): Promise<void> {
  if (notice.status === "sent") return;
  assert.equal(notice.status, "pending", `the notice is pending or sent: ${JSON.stringify(notice)}`);
  assert.deepEqual(await runWorker(), summary({ read: 1, sent: 1 }), "the notice is delivered");
}

// ---------------------------------------------------------------- the worker

export const idle: RunSummary = {
  events: 0, read: 0, sent: 0, failed: 0, skipped: 0, retried: 0, dropped: 0, unconfirmed: 0, postponed: 0,
};

// A summary with these counts and zero for the rest.
export function summary(counts: Partial<RunSummary>): RunSummary {
  return { ...idle, ...counts };
}

// A run in which notifications failed. Each failure's settlement sends a system notice's
// job; a claim working beside the failing one reads the queue again, and takes that job
// in the same run when its read comes after the failure was recorded. So a run that
// failed N notifications may also have read and sent up to N notices, as the timing of
// its claims had it; the next run sends those it left.
export function expectRunWithFailures(run: RunSummary, expected: Partial<RunSummary>, message = "the run"): void {
  const exact = summary(expected);
  const withNotices = Array.from({ length: exact.failed + 1 }, (_, notices) => ({ ...exact, read: exact.read + notices, sent: exact.sent + notices }));
  assert.ok(
    withNotices.some((candidate) => isDeepStrictEqual(candidate, run)),
    `${message}: ${JSON.stringify(run)}, expected ${JSON.stringify(exact)} with up to ${exact.failed} failure notices`,
  );
}

// Calls the worker function as the scheduler does: POST with the service credential.
export async function callWorker(
  headers: Record<string, string> = { authorization: `Bearer ${stack.serviceRoleKey}` },
  method = "POST",
  requestBody?: string,
) {
  const response = await fetch(workerUrl(), { method, headers, body: requestBody });
  const text = await response.text();
  let body: unknown = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    // Not JSON: `text` says what it was.
  }
  return { status: response.status, headers: response.headers, text, body };
}

// One run of the worker: 200 and its summary. The providers' doubles report on each
// message they accepted a moment later, as the providers do (delivered, by default); the
// run returns once those reports are posted and answered, so what a test reads next is
// what the stack settles on.
export async function runWorker(): Promise<RunSummary> {
  const answer = await callWorker();
  assert.equal(answer.status, 200, `the worker answered ${answer.status}: ${answer.text}`);
  assert.equal(answer.headers.get("content-type")?.split(";")[0], "application/json");
  const body = answer.body as RunSummary;
  assert.deepEqual(Object.keys(body).sort(), Object.keys(idle).sort(), answer.text);
  if (body.sent > 0) await reportsSettled();
  return body;
}

// Waits until neither double has reports still to post about a message it accepted.
export async function reportsSettled(timeoutMs = 20_000): Promise<void> {
  const started = performance.now();
  for (const double of [mail, sms]) {
    while ((await double.pendingReports()) > 0) {
      assert.ok(performance.now() - started < timeoutMs, `the doubles posted their reports within ${timeoutMs} ms`);
      await sleep(25);
    }
  }
}

export type LogLine = { level: "warn" | "error"; message: string; fields: Record<string, unknown> | undefined };

// The worker as the edge function runs it, but in this process: the adapters and the
// worker's settings are the stack's (the SendGrid and SMS doubles, the stack's sender
// and account, a 10 s provider timeout, the stack's backoff) but for what `change`
// says, and what it logs is captured. One run, as the admin connection.
export async function runWorkerInProcess(change: {
  email?: Partial<Pick<SendGridSettings, "apiKey" | "fromEmail" | "fromName" | "baseUrl" | "timeoutMs">>;
  sms?: Partial<Pick<SmsSettings, "accountSid" | "authToken" | "fromNumber" | "baseUrl" | "statusCallbackUrl" | "timeoutMs">>;
  settings?: Partial<WorkerSettings>;
  // Whether the run follows the queue until its budget is spent, as the schedule's do.
  follow?: boolean;
} = {}): Promise<{ run: RunSummary; logs: LogLine[] }> {
  const logs: LogLine[] = [];
  const settings = stack.notifications;
  // Through the pooler, as the worker function connects.
  const database = functionsDatabase();
  const sql = createPool(database.url, { max: 2, applicationName: "notifications-test", generatedTypes: true, mode: database.mode });
  try {
    const run = await runWorkerWith({
      sql,
      adapters: {
        email: createSendGridAdapter({
          apiKey: settings.sendGridApiKey,
          fromEmail: settings.fromEmail,
          fromName: settings.fromName,
          baseUrl: stack.mailUrl,
          timeoutMs: 10_000,
          ...change.email,
          now: Date.now,
        }),
        sms: createSmsAdapter({
          ...settings.sms, baseUrl: stack.smsUrl, statusCallbackUrl: `${stack.apiUrl}/functions/v1/api/v1/webhooks/sms`,
          timeoutMs: 10_000, ...change.sms, fetch, now: Date.now,
        }),
        push: stackPushSender(),
      },
      settings: {
        ...defaultWorkerSettings,
        baseDelaySeconds: settings.retryBaseSeconds,
        maxDelaySeconds: settings.retryMaxSeconds,
        ...change.settings,
      },
      random: Math.random,
      now: Date.now,
      logger: {
        warn: (message, fields) => logs.push({ level: "warn", message, fields }),
        error: (message, fields) => logs.push({ level: "error", message, fields }),
      },
    }, { follow: change.follow ?? false });
    if (run.sent > 0) await reportsSettled();
    return { run, logs };
  } finally {
    await sql.end();
  }
}

// Runs the worker every `everyMs` until a run reads something (a job became visible
// again); the summary of that run and how long it took to come.
export async function runWorkerUntilRead(timeoutMs: number, everyMs = 100): Promise<{ run: RunSummary; waitedMs: number }> {
  const started = performance.now();
  for (;;) {
    const run = await runWorker();
    const waitedMs = performance.now() - started;
    if (run.read > 0) return { run, waitedMs };
    assert.ok(waitedMs < timeoutMs, `no job became visible within ${timeoutMs} ms`);
    await sleep(everyMs);
  }
}

// Empties the queue before a scenario: a job left behind by another test (a retry
// waiting for its backoff, a job whose tenant is gone) is made visible and the worker
// runs until it reads nothing (each run expands the events waiting first), so no leftover consumes a scripted answer or shows up
// in a run's summary. Then the capture servers forget everything.
export async function drainQueue(sql: postgres.Sql): Promise<void> {
  await sql`select pgmq.set_vt(${QUEUE}, msg_id, 0) from pgmq.q_notifications where vt > clock_timestamp()`;
  for (let run = 0; ; run++) {
    assert.ok(run < 100, "the queue did not drain in 100 runs");
    if ((await runWorker()).read === 0) break;
  }
  const [left] = await sql<{ count: number; events: number }[]>`
    select (select count(*)::int from pgmq.q_notifications) as count, (select count(*)::int from pgmq.q_notification_events) as events`;
  assert.deepEqual([left!.count, left!.events], [0, 0], "the queue and its events' queue are empty after draining");
  await mail.clear();
  await sms.clear();
  await pushService.clear();
}

// The domain events on their queue about one reservation, oldest first.
export type DomainEvent = { tenantId: string; templateKey: string; reservationId: string; accessCodeId: string | null };

export async function eventsFor(sql: postgres.Sql, reservationId: string): Promise<DomainEvent[]> {
  const rows = await sql<{ message: DomainEvent }[]>`
    select message from pgmq.q_notification_events where message ->> 'reservationId' = ${reservationId} order by msg_id`;
  return rows.map((row) => row.message);
}

// The queue's jobs for one notification, as the admin connection sees them.
export type Job = { msgId: string; readCount: number; secondsLeft: number; message: { notificationId: string; tenantId: string } };

export async function jobsFor(sql: postgres.Sql, notificationId: string): Promise<Job[]> {
  const rows = await sql<{ msg_id: string; read_ct: number; seconds_left: number; message: Job["message"] }[]>`
    select msg_id::text, read_ct,
           extract(epoch from vt - clock_timestamp())::float8 as seconds_left, message
    from pgmq.q_notifications
    where message ->> 'notificationId' = ${notificationId}
    order by msg_id`;
  return rows.map((row) => ({ msgId: row.msg_id, readCount: row.read_ct, secondsLeft: row.seconds_left, message: row.message }));
}

// Makes a job visible now, as if its backoff had passed.
export async function expireBackoff(sql: postgres.Sql, msgId: string): Promise<void> {
  await sql`select pgmq.set_vt(${QUEUE}, ${msgId}::bigint, 0)`;
}

// What the worker keeps that the API does not show.
export async function deliveryColumns(sql: postgres.Sql, id: string) {
  const [row] = await sql<{ recipient_address: string | null; provider_message_id: string | null }[]>`
    select recipient_address, provider_message_id from public.notifications where id = ${id}`;
  assert.ok(row, `notification ${id} exists`);
  return row;
}

// ---------------------------------------------------------------- the provider doubles

// `baseUrlOf` is asked at each call, so importing this module reads no stack setting.
function captureServer<A>(baseUrlOf: () => string) {
  const get = async <T>(path: string): Promise<T> => {
    const response = await fetch(`${baseUrlOf()}${path}`);
    assert.equal(response.status, 200, path);
    return await response.json() as T;
  };
  const post = async <T>(path: string, body: unknown): Promise<T> => {
    const response = await fetch(`${baseUrlOf()}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    assert.equal(response.status, 200, text);
    return JSON.parse(text) as T;
  };
  return {
    async clear(): Promise<void> {
      const response = await fetch(`${baseUrlOf()}/_capture`, { method: "DELETE" });
      await response.body?.cancel();
      assert.equal(response.status, 204);
    },
    // The accepted messages, oldest first.
    messages: () => get<A[]>("/_capture/messages"),
    // Every attempt with the status it got.
    requests: () => get<A[]>("/_capture/requests"),
    // Queues answers for the next attempts; how many are queued now.
    script: (...responses: ScriptedResponse[]) => post<{ pending: number }>("/_capture/script", { responses }),
    // Queues what becomes of the next accepted messages: the events the double reports
    // about each, and how it posts them.
    fates: (...fates: Fate[]) => post<{ pending: number }>("/_capture/fates", { fates }),
    // Every report the double posted, oldest first, with the answers each got.
    reports: () => get<ReportPost[]>("/_capture/reports"),
    // Accepted messages whose reports are not all posted yet.
    pendingReports: async () => (await get<{ pending: number }>("/_capture/pending-reports")).pending,
    // Waits until the double has made `count` report posts and is done with each (a 2xx,
    // or out of attempts); those posts.
    async reportsDone(count: number, timeoutMs = 15_000): Promise<ReportPost[]> {
      const started = performance.now();
      for (;;) {
        const posts = await get<ReportPost[]>("/_capture/reports");
        if (posts.length >= count && posts.every((post) => post.done)) {
          assert.equal(posts.length, count, `exactly ${count} report posts: ${JSON.stringify(posts)}`);
          return posts;
        }
        assert.ok(performance.now() - started < timeoutMs, `${count} report posts within ${timeoutMs} ms: ${JSON.stringify(posts)}`);
        await sleep(50);
      }
    },
  };
}

// A request to SendGrid as sent (GET /_capture/requests), or one mail of it as its
// recipient gets it (GET /_capture/messages: one personalization, its substitutions made,
// its subject and custom_args).
export type SentMail = {
  personalizations: {
    to: { email: string; name?: string }[];
    subject?: string;
    substitutions?: Record<string, string>;
    custom_args?: Record<string, string>;
  }[];
  from: { email: string; name?: string };
  subject?: string;
  content: { type: string; value: string }[];
  custom_args?: Record<string, string>;
  categories?: string[];
};

// `personalization`: a mail's place among its request's personalizations.
export type MailAttempt = { receivedAt: string; status: number; messageId: string | null; body: SentMail; personalization?: number };

export type SmsAttempt = {
  receivedAt: string;
  status: number;
  sid: string | null;
  accountSid: string;
  params: Record<string, string>;
};

export const mail = {
  ...captureServer<MailAttempt>(() => stack.mailUrl),
  // Every request naming one of these recipients is refused from now on, with SendGrid's
  // 400 for an address it does not take, until the capture is cleared.
  async refuse(...addresses: string[]): Promise<void> {
    const response = await fetch(`${stack.mailUrl}/_capture/refuse`, { method: "POST", body: JSON.stringify({ addresses }) });
    assert.equal(response.status, 200, await response.text());
  },
};

// The notifications a request to SendGrid carries, one per personalization: each one's
// custom args over the message's.
export function notificationIdsIn(request: SentMail): string[] {
  return request.personalizations.map((p) => p.custom_args?.notification_id ?? request.custom_args?.notification_id ?? "");
}
export const sms = captureServer<SmsAttempt>(() => stack.smsUrl);

// One mail's parts: the recipient, the subject, the text and HTML content and the custom args.
export function partsOf(sent: SentMail) {
  assert.equal(sent.personalizations.length, 1, "one personalization");
  const to = sent.personalizations[0]!.to.map((address) => address.email);
  const text = sent.content.find((part) => part.type === "text/plain")?.value;
  const html = sent.content.find((part) => part.type === "text/html")?.value;
  assert.ok(text !== undefined && html !== undefined, `a text and an HTML part: ${JSON.stringify(sent.content.map((c) => c.type))}`);
  return { to, subject: sent.personalizations[0]!.subject ?? sent.subject ?? "", text, html, customArgs: sent.custom_args ?? {} };
}
