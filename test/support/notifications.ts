// The notifications pipeline for tests: the worker function through the gateway, the
// pgmq queue `notifications` seen from the admin connection, and the two provider
// doubles (local/sendgrid-capture, local/sms-capture) with their capture routes.
import assert from "node:assert/strict";
import type postgres from "postgres";
import { type Client, expectStatus, listPage, type Page, readOne } from "./api.ts";
import { stack } from "./stack.ts";
import { createDb } from "../../src/db/database.ts";
import { createPool } from "../../src/db/pool.ts";
import { createSendGridAdapter, type SendGridSettings } from "../../src/notifications/sendgrid.ts";
import { createSmsAdapter, type SmsSettings } from "../../src/notifications/sms.ts";
import { defaultWorkerSettings, runWorker as runWorkerWith, type WorkerSettings } from "../../src/notifications/worker.ts";

const root = new URL("../../", import.meta.url);

function readEnvFile(path: string): Record<string, string> {
  const text = Deno.readTextFileSync(new URL(path, root));
  return Object.fromEntries(
    text.split("\n").filter((line) => line.includes("=")).map((line) => {
      const at = line.indexOf("=");
      return [line.slice(0, at), line.slice(at + 1)];
    }),
  );
}

// A setting scripts/stack.sh gives the stack's processes (NAME=value or NAME="value").
function stackSetting(name: string): string {
  const script = Deno.readTextFileSync(new URL("scripts/stack.sh", root));
  const match = new RegExp(`\\b${name}=(?:"([^"]*)"|(\\S+))`).exec(script);
  assert.ok(match, `scripts/stack.sh sets ${name}`);
  return match[1] ?? match[2]!;
}

const stackEnv = readEnvFile(".stack/stack.env");

export const QUEUE = "notifications";

export const pipeline = {
  workerUrl: `${stack.apiUrl}/functions/v1/notifications-worker`,
  serviceRoleKey: stackEnv.SERVICE_ROLE_KEY!,
  anonKey: stackEnv.ANON_KEY!,
  mailUrl: stack.mailUrl,
  smsUrl: `http://127.0.0.1:${stackSetting("SMS_PORT")}`,
  // What the worker function runs with locally.
  fromEmail: stackSetting("NOTIFICATIONS_FROM_EMAIL"),
  fromName: stackSetting("NOTIFICATIONS_FROM_NAME"),
  // The worker's backoff: base * 2^(attempt - 1) seconds, capped, with jitter.
  retryBaseSeconds: Number(stackSetting("NOTIFICATIONS_RETRY_BASE_SECONDS")),
  retryMaxSeconds: Number(stackSetting("NOTIFICATIONS_RETRY_MAX_SECONDS")),
  sms: {
    accountSid: stackSetting("SMS_ACCOUNT_SID"),
    authToken: stackSetting("SMS_AUTH_TOKEN"),
    fromNumber: stackSetting("SMS_FROM_NUMBER"),
  },
};

// ---------------------------------------------------------------- the API's view

export type NotificationStatus = "pending" | "sent" | "failed" | "skipped";
export type TemplateKey = "checkin_reminder" | "checkout_summary" | "reservation_cancelled" | "access_code_delivery";

export type Notification = {
  id: string;
  tenantId: string;
  recipientId: string | null;
  recipientType: "user" | "guest" | "admin" | "system";
  templateKey: TemplateKey;
  channel: "email" | "sms" | "push" | "in_app";
  subject: string | null;
  body: string;
  status: NotificationStatus;
  statusReason: string | null;
  attempts: number;
  reservationId: string | null;
  accessCodeId: string | null;
  sentAt: string | null;
  createdAt: string;
  updatedAt: string;
};

export type Preference = { templateKey: string; channel: string; enabled: boolean; updatedAt: string };

export const NOTIFICATIONS = "/v1/notifications";
export const NOTIFICATION = "/v1/notifications/{id}";
export const PREFERENCES = "/v1/notifications/preferences";

export const listNotifications = (api: Client, query = "") => listPage<Notification>(api, NOTIFICATIONS, query);

export async function readNotification(api: Client, id: string): Promise<Notification> {
  return (await readOne<Notification>(api, NOTIFICATION, { id })).body;
}

export const listPreferences = (api: Client, query = "") => listPage<Preference>(api, PREFERENCES, query);

// PATCH /v1/notifications/preferences with return=representation: 200 and the pair's row.
export async function setPreference(
  api: Client,
  body: { templateKey: string; channel: string; enabled: boolean },
): Promise<Preference> {
  const response = await api.patch("/notifications/preferences", body, { prefer: "return=representation" });
  return await expectStatus<Preference>("PATCH", PREFERENCES, response, 200);
}

// The tenant's only notification for a reservation and template, through the API.
export async function notificationFor(api: Client, reservationId: string, templateKey: TemplateKey): Promise<Notification> {
  const page: Page<Notification> = await listNotifications(api, `?reservationId=${reservationId}&templateKey=${templateKey}`);
  assert.equal(page.data.length, 1, `one ${templateKey} notification for reservation ${reservationId}: ${JSON.stringify(page.data)}`);
  return page.data[0]!;
}

// ---------------------------------------------------------------- the worker

export type RunSummary = { read: number; sent: number; failed: number; skipped: number; retried: number; dropped: number };

export const idle: RunSummary = { read: 0, sent: 0, failed: 0, skipped: 0, retried: 0, dropped: 0 };

// A summary with these counts and zero for the rest.
export function summary(counts: Partial<RunSummary>): RunSummary {
  return { ...idle, ...counts };
}

// Calls the worker function as the scheduler does: POST with the service credential.
export async function callWorker(headers: Record<string, string> = { authorization: `Bearer ${pipeline.serviceRoleKey}` }, method = "POST") {
  const response = await fetch(pipeline.workerUrl, { method, headers });
  const text = await response.text();
  let body: unknown = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    // Not JSON: `text` says what it was.
  }
  return { status: response.status, headers: response.headers, text, body };
}

// One run of the worker: 200 and its summary.
export async function runWorker(): Promise<RunSummary> {
  const answer = await callWorker();
  assert.equal(answer.status, 200, `the worker answered ${answer.status}: ${answer.text}`);
  assert.equal(answer.headers.get("content-type")?.split(";")[0], "application/json");
  const body = answer.body as RunSummary;
  assert.deepEqual(Object.keys(body).sort(), Object.keys(idle).sort(), answer.text);
  return body;
}

export type LogLine = { level: "warn" | "error"; message: string; fields: Record<string, unknown> | undefined };

// The worker as the edge function runs it, but in this process: the adapters and the
// worker's settings are the stack's (the SendGrid and SMS doubles, the stack's sender
// and account, a 10 s provider timeout, the stack's backoff) but for what `change`
// says, and what it logs is captured. One run, as the admin connection.
export async function runWorkerInProcess(change: {
  email?: Partial<Pick<SendGridSettings, "apiKey" | "fromEmail" | "fromName" | "baseUrl" | "timeoutMs">>;
  sms?: Partial<Pick<SmsSettings, "accountSid" | "authToken" | "fromNumber" | "baseUrl" | "timeoutMs">>;
  settings?: Partial<WorkerSettings>;
} = {}): Promise<{ run: RunSummary; logs: LogLine[] }> {
  const logs: LogLine[] = [];
  const db = createDb(createPool(stack.dbUrl, { max: 2, applicationName: "notifications-test", generatedTypes: true }));
  try {
    const run = await runWorkerWith({
      db,
      adapters: {
        email: createSendGridAdapter({
          apiKey: "SG.local-capture",
          fromEmail: pipeline.fromEmail,
          fromName: pipeline.fromName,
          baseUrl: pipeline.mailUrl,
          timeoutMs: 10_000,
          ...change.email,
          now: Date.now,
        }),
        sms: createSmsAdapter({ ...pipeline.sms, baseUrl: pipeline.smsUrl, timeoutMs: 10_000, ...change.sms, fetch, now: Date.now }),
      },
      settings: {
        ...defaultWorkerSettings,
        baseDelaySeconds: pipeline.retryBaseSeconds,
        maxDelaySeconds: pipeline.retryMaxSeconds,
        ...change.settings,
      },
      random: Math.random,
      logger: {
        warn: (message, fields) => logs.push({ level: "warn", message, fields }),
        error: (message, fields) => logs.push({ level: "error", message, fields }),
      },
    });
    return { run, logs };
  } finally {
    await db.destroy();
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

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// Empties the queue before a scenario: a job left behind by another test (a retry
// waiting for its backoff, a job whose tenant is gone) is made visible and the worker
// runs until it reads nothing, so no leftover consumes a scripted answer or shows up
// in a run's summary. Then both capture servers forget everything.
export async function drainQueue(sql: postgres.Sql): Promise<void> {
  await sql`select pgmq.set_vt(${QUEUE}, msg_id, 0) from pgmq.q_notifications where vt > clock_timestamp()`;
  for (let run = 0; ; run++) {
    assert.ok(run < 100, "the queue did not drain in 100 runs");
    if ((await runWorker()).read === 0) break;
  }
  const [left] = await sql<{ count: number }[]>`select count(*)::int as count from pgmq.q_notifications`;
  assert.equal(left!.count, 0, "the queue is empty after draining");
  await mail.clear();
  await sms.clear();
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

export type ScriptedResponse = { status: number; headers?: Record<string, string>; body?: unknown; delayMs?: number };

function captureServer<A>(baseUrl: string) {
  const get = async <T>(path: string): Promise<T> => {
    const response = await fetch(`${baseUrl}${path}`);
    assert.equal(response.status, 200, path);
    return await response.json() as T;
  };
  return {
    async clear(): Promise<void> {
      const response = await fetch(`${baseUrl}/_capture`, { method: "DELETE" });
      await response.body?.cancel();
      assert.equal(response.status, 204);
    },
    // The accepted messages, oldest first.
    messages: () => get<A[]>("/_capture/messages"),
    // Every attempt with the status it got.
    requests: () => get<A[]>("/_capture/requests"),
    async script(...responses: ScriptedResponse[]): Promise<void> {
      const response = await fetch(`${baseUrl}/_capture/script`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ responses }),
      });
      await response.body?.cancel();
      assert.equal(response.status, 200);
    },
  };
}

export type SentMail = {
  personalizations: { to: { email: string; name?: string }[] }[];
  from: { email: string; name?: string };
  subject: string;
  content: { type: string; value: string }[];
  custom_args?: Record<string, string>;
  categories?: string[];
};

export type MailAttempt = { receivedAt: string; status: number; messageId: string | null; body: SentMail };

export type SmsAttempt = {
  receivedAt: string;
  status: number;
  sid: string | null;
  accountSid: string;
  params: Record<string, string>;
};

export const mail = captureServer<MailAttempt>(pipeline.mailUrl);
export const sms = captureServer<SmsAttempt>(pipeline.smsUrl);

// One mail's parts: the recipient, the subject, the text and HTML content and the custom args.
export function partsOf(sent: SentMail) {
  assert.equal(sent.personalizations.length, 1, "one personalization");
  const to = sent.personalizations[0]!.to.map((address) => address.email);
  const text = sent.content.find((part) => part.type === "text/plain")?.value;
  const html = sent.content.find((part) => part.type === "text/html")?.value;
  assert.ok(text !== undefined && html !== undefined, `a text and an HTML part: ${JSON.stringify(sent.content.map((c) => c.type))}`);
  return { to, subject: sent.subject, text, html, customArgs: sent.custom_args ?? {} };
}
