// The notifications worker: drains the pgmq queue `notifications` a claim at a time.
// A claim is up to `claimSize` jobs read together and worked on at once: one
// transaction loads every job's notification, each in its own tenant under the
// background_worker role, so RLS applies to every read and write (the job's tenant is
// set before anything is read: docs/contract.md, Delivery processing);
// the provider calls run concurrently, outside any transaction; one transaction then
// records every outcome with its job's deletion (or postponement).
import { z } from "zod";
import type { Database } from "../db/database.types.ts";
import { uuidLiteral, workerTransaction } from "../db/worker-transactions.ts";
import { expandEvents } from "./expansion.ts";
import { type ClaimedJob, type ClaimSettings, drainInClaims, type RunMode } from "../queue/claims.ts";
import type { Sql } from "../db/pool.ts";
import { type ChannelAdapter, type Delivery, type EmailAdapter, withSendsInFlight } from "./delivery.ts";
import { deliverEmails, type PreparedEmail } from "./email-batch.ts";
import { personalizeEmail } from "./personalize.ts";
import type { PushResult, PushSender, PushSubscriptionKeys } from "./push.ts";
import {
  type EmailTemplateKey,
  fillEmailTemplate,
  type GuestTemplateKey,
  isGuestTemplateKey,
  type TemplateData,
  templateValues,
  type TemplateValues,
} from "./render.ts";
import { renderSms } from "./sms-text.ts";
import { type NightlySummaryData, nightlySummaryValues } from "./summary.ts";
import {
  pushPayload,
  renderCalendarImportFailingNotice,
  renderCheckInAlert,
  renderDeliveryFailedNotice,
  renderWebhookDisabledNotice,
} from "./staff-text.ts";
import type { Logger } from "../logging/logger.ts";

export const QUEUE = "notifications";

export type WorkerSettings = ClaimSettings & {
  // Deliveries tried before a transient failure becomes `failed`.
  maxAttempts: number;
  // SMS requests under way at once, across a run's claims: the SMS provider refuses an
  // account's requests beyond its concurrency limit with 429, so a claim's texts wait
  // their turn rather than go out all at once.
  smsInFlight: number;
  baseDelaySeconds: number;
  maxDelaySeconds: number;
  // A claim's sends that have not started this long after it was loaded are not made:
  // their jobs come back for another claim. Well inside the visibility timeout with the
  // provider's timeout and the settlement after it, so that no claim outlives its jobs.
  sendStartWindowMs: number;
  // How long a send whose outcome nobody recorded (its answer lost, its run ended) waits
  // for the provider's report before it is sent again; a door code's message waits for an
  // operator instead. Looked at again every unconfirmedRecheckSeconds meanwhile.
  unconfirmedWaitSeconds: number;
  unconfirmedRecheckSeconds: number;
};

export const defaultWorkerSettings: WorkerSettings = {
  batchSize: 1000,
  runBudgetMs: 8000,
  claimSize: 300,
  claimsInFlight: 2,
  visibilityTimeoutSeconds: 60,
  followPollMs: 250,
  maxAttempts: 6,
  smsInFlight: 20,
  baseDelaySeconds: 30,
  maxDelaySeconds: 3600,
  sendStartWindowMs: 30_000,
  unconfirmedWaitSeconds: 900,
  unconfirmedRecheckSeconds: 30,
};

export type WorkerDependencies = {
  // The database. A claim's statements, one pair per tenant, are pipelined on one
  // connection in one round trip, which only the driver does: Kysely runs a
  // transaction's statements one after another.
  sql: Sql;
  adapters: { email: EmailAdapter; sms: ChannelAdapter; push: PushSender };
  settings: WorkerSettings;
  random: () => number;
  // Milliseconds, for the run's budget.
  now: () => number;
  logger: Logger;
};

// `events`: domain events made into notifications; `sent` also counts the check-in alerts
// written into their staff's inboxes as their events were made; `dropped` also counts the
// events that reached nobody (their reservation or access code gone) or were not events.
// `unconfirmed`: sends whose outcome is not known yet, waiting for their provider's report;
// `postponed`: sends not made because their turn came too late for their claim.
export type RunSummary = {
  events: number; read: number; sent: number; failed: number; skipped: number; retried: number; dropped: number;
  unconfirmed: number; postponed: number;
};

const jobMessage = z.object({ notificationId: z.uuid(), tenantId: z.uuid() });

type Job = ClaimedJob;

// A job whose message names a notification in a tenant, and, once loaded, where its send stands.
type TenantJob = Job & { notificationId: string; tenantId: string; send: SendState };

// A notification's send as the claim's load left it: `fresh` when the load marked it as
// under way for this claim (its attempts counted); `startedAt` the mark's instant, this
// claim's or an earlier one's whose outcome nobody recorded; `reported` when a provider's
// report has named it since.
// `resentAfterWait`: the load marks the send afresh once the unconfirmed wait has passed
// (every message but a door code's).
type SendState = { fresh: boolean; attempts: number; startedAt: string | null; reported: string | null; resentAfterWait: boolean };
const NOT_SENDING: SendState = { fresh: false, attempts: 0, startedAt: null, reported: null, resentAfterWait: false };

type Outcome = keyof Omit<RunSummary, "read">;

// The status_reason column's limit; a provider may explain at any length.
const MAX_REASON_LENGTH = 2000;

function reasonOf(text: string): string {
  return text.length <= MAX_REASON_LENGTH ? text : `${text.slice(0, MAX_REASON_LENGTH - 1)}…`;
}

// Exponential, capped, with jitter so that a burst of failures does not retry in step;
// never sooner than the provider's Retry-After, which the cap does not shorten.
export function retryDelaySeconds(attempt: number, retryAfter: number | null, settings: WorkerSettings, random: () => number) {
  const exponential = Math.min(settings.maxDelaySeconds, settings.baseDelaySeconds * 2 ** Math.max(0, attempt - 1));
  const jittered = Math.ceil(exponential * (0.5 + random() / 2));
  return Math.max(Math.min(settings.maxDelaySeconds, jittered), retryAfter ?? 0);
}

// The longest a provider takes to answer before the adapters give up on it.
export const PROVIDER_TIMEOUT_MS = 10_000;

// A send is marked when its claim is loaded and may start up to sendStartWindowMs later,
// then wait up to the provider's timeout: a wait for its report shorter than that would
// send again what is still under way.
export function unconfirmedWaitProblem(settings: WorkerSettings): string | null {
  const least = Math.ceil((settings.sendStartWindowMs + PROVIDER_TIMEOUT_MS) / 1000) + 10;
  return settings.unconfirmedWaitSeconds >= least
    ? null
    : `the unconfirmed wait (${settings.unconfirmedWaitSeconds}s) must be at least ${least}s: a claim's sends may start ` +
      `${settings.sendStartWindowMs / 1000}s after it was loaded and take ${PROVIDER_TIMEOUT_MS / 1000}s to be answered`;
}

export async function runWorker(deps: WorkerDependencies, mode: RunMode = { follow: false }): Promise<RunSummary> {
  const misconfigured = unconfirmedWaitProblem(deps.settings);
  if (misconfigured) throw new Error(misconfigured);
  const summary: RunSummary = {
    events: 0, read: 0, sent: 0, failed: 0, skipped: 0, retried: 0, dropped: 0, unconfirmed: 0, postponed: 0,
  };
  const sms = withSendsInFlight(deps.adapters.sms, deps.settings.smsInFlight, deps.now);
  const run = { ...deps, adapters: { ...deps.adapters, sms } };
  const beforeRead = () => expandEventsInto(run, summary);
  await drainInClaims({ ...run, mode, beforeRead }, QUEUE, summary, (jobs) => processClaim(run, jobs));
  return summary;
}

// Up to a claim's worth of domain events made into notifications (expansion.ts), in a
// transaction of their own, so that the jobs they leave are there for the read that
// follows. An error leaves the events on their queue for the next read; the jobs
// already there still go.
async function expandEventsInto(deps: WorkerDependencies, summary: RunSummary): Promise<void> {
  const counts = await expandEvents(deps, deps.settings.claimSize);
  summary.events += counts.expanded;
  summary.dropped += counts.dropped;
  summary.sent += counts.sent;
}

// A message for an inbox or a browser: what staff read.
type Alert = { title: string; body: string; url: string };

type Loaded =
  | { kind: "drop"; why: string }
  | { kind: "done"; outcome: "skipped" | "failed"; reason: string }
  // Through a provider: the rendering waits until the provider is known to be enabled. An
  // email's values, which it is rendered from both alone and for a batch's shared body.
  | { kind: "email"; to: string; templateKey: EmailTemplateKey; values: () => TemplateValues }
  | { kind: "sms"; to: string; templateKey: GuestTemplateKey; render: () => { text: string } }
  // Into the inboxes of these members, in the job's tenant.
  | { kind: "inbox"; userIds: string[]; templateKey: "check_in_alerts" | "delivery_failed" | "webhook_disabled" | "calendar_import_failing"; render: () => Alert }
  // To every browser the member subscribed in the tenant.
  | { kind: "push"; subscriptions: PushSubscriptionRow[]; templateKey: string; render: () => Alert };

type PushSubscriptionRow = PushSubscriptionKeys & { id: string };

// An in_app notification's messages, written with its outcome.
type InboxDelivery = { notificationId: string; userId: string; templateKey: string } & Alert;

// What becomes of a job once its claim commits. `attempted`: a provider was asked, so the
// attempt its load counted stands; without it the count is given back.
type Settled =
  // Its notification takes this change, and the job is deleted; with it, what the
  // channel leaves behind in the tenant (inbox messages, push subscriptions' fates).
  | {
    job: TenantJob; outcome: "sent" | "failed" | "skipped"; change: NotificationChange; log?: () => void; effects?: Effects;
    attempted?: boolean;
  }
  // The job goes; the notification is not this job's to change.
  | { job: TenantJob; outcome: "dropped"; why: string }
  // The notification keeps waiting; the job comes back after `delaySeconds`. Retried: a
  // send that failed; unconfirmed: a send whose outcome waits for the provider's report;
  // postponed: a send not made.
  | {
    job: TenantJob; outcome: "retried" | "unconfirmed" | "postponed"; change?: NotificationChange; delaySeconds: number;
    log?: () => void; effects?: Effects; attempted?: boolean;
  }
  // Something went wrong before an outcome: the job comes back after its timeout, its
  // notification's mark given back when it has one (change).
  | { job: TenantJob; outcome: null; log: () => void; change?: NotificationChange };

type Effects = {
  inbox?: InboxDelivery[];
  // Subscriptions whose push service took the message, and those it says are gone.
  pushAccepted?: string[];
  pushGone?: string[];
};

type NotificationChange = {
  status: "pending" | "sent" | "failed" | "skipped";
  status_reason: string | null;
  subject?: string;
  body?: string;
  attempts?: number;
  recipient_address?: string;
  provider_message_id?: string | null;
  // A pending notification keeps its send's mark with an outcome not known yet; any other
  // change clears it.
  send_started_at?: string | null;
};

async function processClaim(deps: WorkerDependencies, jobs: Job[]): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  const valid: TenantJob[] = [];
  const malformed: Job[] = [];
  for (const job of jobs) {
    const parsed = jobMessage.safeParse(job.message);
    if (parsed.success) valid.push({ ...job, ...parsed.data, send: NOT_SENDING });
    else malformed.push(job);
  }
  if (malformed.length > 0) {
    await deps.sql`select pgmq.archive(${QUEUE}, ${malformed.map((job) => job.msgId)}::bigint[])`;
    for (const job of malformed) {
      deps.logger.error("notification job is malformed; archived", { msgId: job.msgId, message: job.message });
      outcomes.push("dropped");
    }
  }
  if (valid.length === 0) return outcomes;

  const loaded = await loadClaim(deps, valid);
  // A send that has not started by then is not made (the claim must end well inside its
  // jobs' visibility timeout).
  const startBy = deps.now() + deps.settings.sendStartWindowMs;
  // Every email of the claim is rendered first, then they go out together, in as few
  // requests as SendGrid allows (email-batch.ts), beside the other channels' deliveries.
  const decisions = new Map<TenantJob, Promise<Settled>>();
  const emails: EmailToSend[] = [];
  for (const job of valid) {
    const item = loaded.get(job) ?? new Error(`job ${job.msgId} was not loaded`);
    const unrecorded = item instanceof Error ? null : settleUnrecordedSend(deps, job, item);
    if (unrecorded) {
      decisions.set(job, Promise.resolve(unrecorded));
    } else if (!(item instanceof Error) && item.kind === "email" && !deps.adapters.email.disabledReason) {
      const prepared = prepareEmail(deps, job, item);
      if ("prepared" in prepared) emails.push(prepared);
      else decisions.set(job, Promise.resolve(prepared));
    } else {
      decisions.set(job, decide(deps, job, item, startBy));
    }
  }
  const sent = sendEmails(deps, emails);
  for (const email of emails) decisions.set(email.job, sent.then((settled) => settled.get(email.job)!));
  const settled = (await Promise.all(valid.map((job) => decisions.get(job)!))).map(withAttemptGivenBack);
  await settleClaim(deps, settled);
  for (const result of settled) {
    if (result.outcome === "dropped") {
      deps.logger.warn(`notification job dropped: ${result.why}`, fieldsOf(result.job));
    } else {
      result.log?.();
    }
    if (result.outcome !== null) outcomes.push(result.outcome);
  }
  return outcomes;
}

// The attempt the load counted for a send it marked, given back when no provider was asked
// after all (an opt-out, a disabled channel, a render that failed, a send postponed), and
// the mark with it.
function withAttemptGivenBack(result: Settled): Settled {
  const { send } = result.job;
  if (!send.fresh || result.outcome === "dropped" || ("attempted" in result && result.attempted)) return result;
  const change: NotificationChange = result.change ?? { status: "pending", status_reason: null };
  return { ...result, change: { ...change, attempts: send.attempts - 1, send_started_at: null } };
}

function fieldsOf(job: TenantJob) {
  return { notificationId: job.notificationId, tenantId: job.tenantId, msgId: job.msgId };
}

function erroredJob(deps: WorkerDependencies, job: TenantJob, error: unknown): Settled {
  return {
    job,
    outcome: null,
    // One job's fault must not stop the others; this one comes back when its timeout ends.
    log: () => deps.logger.error(`notification job errored; it will be tried again: ${String(error)}`, { msgId: job.msgId }),
  };
}

// A notification whose send an earlier claim marked and nobody settled: its provider's
// report settles it as sent (the message rendered again for the record); without a report
// it waits, looked at again now and then, until the unconfirmed wait has passed, after which
// the load has marked it afresh (and it goes again) unless it is a door code's message,
// which fails for an operator to decide on. Null: not such a notification.
function settleUnrecordedSend(deps: WorkerDependencies, job: TenantJob, loaded: Loaded): Settled | null {
  const { send } = job;
  if (send.fresh || send.startedAt === null || loaded.kind === "drop") return null;
  const fields = fieldsOf(job);
  const content = contentOf(loaded);
  if (send.reported !== null) {
    return {
      job, outcome: "sent",
      change: { ...content, status: "sent", status_reason: null, attempts: send.attempts, provider_message_id: send.reported },
      log: () => deps.logger.warn("notification sent: its provider's report confirmed a send whose answer was not recorded", fields),
    };
  }
  const waitedMs = deps.now() - Date.parse(send.startedAt);
  const leftSeconds = Math.ceil((deps.settings.unconfirmedWaitSeconds * 1000 - waitedMs) / 1000);
  if (leftSeconds > 0) {
    return { job, outcome: "unconfirmed", delaySeconds: Math.min(deps.settings.unconfirmedRecheckSeconds, leftSeconds) };
  }
  // The wait ended between the load's clock and this one: the next load sends it again.
  if (send.resentAfterWait) return { job, outcome: "unconfirmed", delaySeconds: 1 };
  const reason = reasonOf(
    `its send at ${send.startedAt} got no answer and its provider has not reported on it: it may have reached the guest. ` +
      "It is not sent again on its own, as a second door code message could mislead; retry it with " +
      "private.retry_notification once you know it did not arrive",
  );
  return {
    job, outcome: "failed", attempted: true,
    change: { ...content, status: "failed", status_reason: reason, attempts: send.attempts },
    log: () => deps.logger.error(`notification failed: ${reason}`, fields),
  };
}

// What a notification says, for its record, whatever became of its send; nothing when it
// cannot be rendered now.
function contentOf(loaded: Loaded): Omit<NotificationChange, "status" | "status_reason"> {
  try {
    if (loaded.kind === "email") {
      const rendered = fillEmailTemplate(loaded.templateKey, loaded.values());
      return { subject: rendered.subject, body: rendered.text, recipient_address: loaded.to };
    }
    if (loaded.kind === "sms") return { body: loaded.render().text, recipient_address: loaded.to };
    if (loaded.kind === "push") {
      const alert = loaded.render();
      return { subject: alert.title, body: alert.body };
    }
  } catch {
    // The record keeps what it had.
  }
  return {};
}

// An email rendered and ready, waiting for the claim's other emails to go out with them.
type EmailToSend = {
  job: TenantJob;
  attempt: number;
  content: Omit<NotificationChange, "status" | "status_reason">;
  prepared: PreparedEmail;
};

// The email as it goes on its own (what the notification keeps), and with a body it can
// share with others of its template and shape, when it can (personalize.ts).
function prepareEmail(deps: WorkerDependencies, job: TenantJob, loaded: Extract<Loaded, { kind: "email" }>): EmailToSend | Settled {
  try {
    const values = loaded.values();
    const rendered = fillEmailTemplate(loaded.templateKey, values);
    const shared = personalizeEmail(loaded.templateKey, values);
    const attempt = job.send.attempts;
    return {
      job,
      attempt,
      content: { subject: rendered.subject, body: rendered.text, attempts: attempt, recipient_address: loaded.to },
      prepared: {
        message: { notificationId: job.notificationId, tenantId: job.tenantId, templateKey: loaded.templateKey, to: loaded.to, ...rendered },
        personalized: "unfit" in shared ? null : shared,
      },
    };
  } catch (error) {
    return erroredJob(deps, job, error);
  }
}

// The claim's emails through the provider, each to its outcome.
async function sendEmails(deps: WorkerDependencies, emails: EmailToSend[]): Promise<Map<TenantJob, Settled>> {
  const settled = new Map<TenantJob, Settled>();
  if (emails.length === 0) return settled;
  let deliveries: Delivery[];
  try {
    deliveries = await deliverEmails(deps.adapters.email, emails.map((email) => email.prepared));
  } catch (error) {
    // Whether anything went out is not known.
    deliveries = emails.map(() => ({ outcome: "unknown", reason: `the email sender threw: ${String(error)}` }));
  }
  emails.forEach((email, index) => {
    settled.set(email.job, settleDelivery(deps, email.job, email.attempt, email.content, deliveries[index]!));
  });
  return settled;
}

// A job's way from its loaded notification to an outcome, the provider call included; an
// email's, only when email is disabled (an email that can go is prepareEmail's).
async function decide(deps: WorkerDependencies, job: TenantJob, loaded: Loaded | Error, startBy: number): Promise<Settled> {
  const fields = fieldsOf(job);
  const errored = (error: unknown): Settled => erroredJob(deps, job, error);
  if (loaded instanceof Error) return errored(loaded);
  if (loaded.kind === "drop") return { job, outcome: "dropped", why: loaded.why };
  if (loaded.kind === "done") {
    const { outcome, reason } = loaded;
    return {
      job,
      outcome,
      change: { status: outcome, status_reason: reasonOf(reason) },
      log: outcome === "failed" ? () => deps.logger.error(`notification failed: ${reason}`, fields) : undefined,
    };
  }
  const attempt = job.send.attempts;
  if (loaded.kind === "inbox") {
    let alert: Alert;
    try {
      alert = loaded.render();
    } catch (error) {
      return errored(error);
    }
    // Landing in the inbox is the delivery: no provider, nothing to retry.
    return {
      job,
      outcome: "sent",
      change: { status: "sent", status_reason: null, subject: alert.title, body: alert.body, attempts: job.readCount },
      effects: {
        inbox: loaded.userIds.map((userId) => ({ notificationId: job.notificationId, userId, templateKey: loaded.templateKey, ...alert })),
      },
    };
  }
  if (loaded.kind === "push") return await decidePush(deps, job, loaded, errored);

  if (loaded.kind === "email") {
    return skippedAsDisabled(deps, job, deps.adapters.email.disabledReason ?? "email is disabled");
  }
  const adapter = deps.adapters.sms;
  if (adapter.disabledReason) return skippedAsDisabled(deps, job, adapter.disabledReason);

  let rendered: { subject: string; html: string; text: string };
  try {
    // An SMS has its own short text and no subject or HTML.
    rendered = { subject: "", html: "", ...loaded.render() };
  } catch (error) {
    return errored(error);
  }
  const content = { body: rendered.text, attempts: attempt, recipient_address: loaded.to };

  let delivery: Delivery;
  try {
    delivery = await adapter.send({
      notificationId: job.notificationId, tenantId: job.tenantId, templateKey: loaded.templateKey, to: loaded.to, ...rendered,
    }, { startBy });
  } catch (error) {
    delivery = { outcome: "unknown", reason: `the adapter threw: ${String(error)}` };
  }
  return settleDelivery(deps, job, attempt, content, delivery);
}

// A channel whose settings are missing sends nothing: each of its notifications is
// skipped with the reason, which is also logged as a warning.
function skippedAsDisabled(deps: WorkerDependencies, job: TenantJob, disabledReason: string): Settled {
  return {
    job,
    outcome: "skipped",
    change: { status: "skipped", status_reason: disabledReason },
    log: () => deps.logger.warn(disabledReason, fieldsOf(job)),
  };
}

// A provider's answer as the notification's change: accepted is sent; permanent, or
// transient once the attempts are spent, is failed; transient otherwise comes back later;
// no answer at all waits for the provider's report; a send never made comes back soon.
function settleDelivery(
  deps: WorkerDependencies,
  job: TenantJob,
  attempt: number,
  content: Omit<NotificationChange, "status" | "status_reason">,
  delivery: Delivery,
  effects?: Effects,
): Settled {
  const fields = fieldsOf(job);
  if (delivery.outcome === "postponed") {
    return { job, outcome: "postponed", delaySeconds: 1, effects };
  }
  if (delivery.outcome === "accepted") {
    return {
      job,
      outcome: "sent",
      attempted: true,
      change: { ...content, status: "sent", status_reason: null, provider_message_id: delivery.providerMessageId },
      effects,
    };
  }
  if (delivery.outcome === "unknown") {
    const wait = deps.settings.unconfirmedWaitSeconds;
    const reason = reasonOf(`${delivery.reason}; the provider may have taken it: its report is awaited up to ${wait}s before it is sent again`);
    return {
      job,
      outcome: "unconfirmed",
      attempted: true,
      change: { ...content, status: "pending", status_reason: reason, send_started_at: job.send.startedAt },
      delaySeconds: Math.min(deps.settings.unconfirmedRecheckSeconds, wait),
      log: () => deps.logger.warn(`notification send unconfirmed: ${reason}`, { ...fields, attempt }),
      effects,
    };
  }
  if (delivery.outcome === "permanent" || attempt >= deps.settings.maxAttempts) {
    const reason = reasonOf(delivery.outcome === "permanent" ? delivery.reason : `gave up after ${attempt} attempts: ${delivery.reason}`);
    return {
      job,
      outcome: "failed",
      attempted: true,
      change: { ...content, status: "failed", status_reason: reason },
      log: () => deps.logger.error(`notification failed: ${reason}`, fields),
      effects,
    };
  }
  const delaySeconds = retryDelaySeconds(attempt, delivery.retryAfterSeconds, deps.settings, deps.random);
  const { reason } = delivery;
  return {
    job,
    outcome: "retried",
    attempted: true,
    change: { ...content, status: "pending", status_reason: reasonOf(reason) },
    delaySeconds,
    log: () => deps.logger.warn(`notification delivery will be retried in ${delaySeconds}s: ${reason}`, { ...fields, attempt }),
    effects,
  };
}

// One push notification goes to every browser its member subscribed in the tenant, side
// by side. Any browser taking it makes it sent: a retry would show it twice on those that
// took it. A subscription its push service calls gone (404, 410) is removed with the
// outcome. With none taking it: a transient refusal anywhere retries (to the ones left),
// no answer from one that may have taken it waits as any unconfirmed send does, else a
// permanent refusal fails it, and with every subscription gone it is skipped. The message's
// topic is its notification, so that a push service still holding an earlier copy replaces it.
async function decidePush(
  deps: WorkerDependencies,
  job: TenantJob,
  loaded: Extract<Loaded, { kind: "push" }>,
  errored: (error: unknown) => Settled,
): Promise<Settled> {
  const fields = fieldsOf(job);
  if (deps.adapters.push.disabledReason) return skippedAsDisabled(deps, job, deps.adapters.push.disabledReason);
  let payload: string;
  let alert: Alert;
  try {
    alert = loaded.render();
    payload = pushPayload(alert, { notificationId: job.notificationId, tenantId: job.tenantId, templateKey: loaded.templateKey });
  } catch (error) {
    return errored(error);
  }
  const topic = job.notificationId.replaceAll("-", "");
  const results = await Promise.all(loaded.subscriptions.map(async (subscription): Promise<[PushSubscriptionRow, PushResult]> => {
    try {
      return [subscription, await deps.adapters.push.send(subscription, payload, { urgency: "high", topic })];
    } catch (error) {
      return [subscription, { outcome: "unknown", reason: `the push sender threw: ${String(error)}` }];
    }
  }));
  const accepted = results.filter(([, result]) => result.outcome === "accepted").map(([subscription]) => subscription.id);
  const gone = results.filter(([, result]) => result.outcome === "gone");
  const effects: Effects = { pushAccepted: accepted, pushGone: gone.map(([subscription]) => subscription.id) };
  const attempt = job.send.attempts;
  const content = { subject: alert.title, body: alert.body, attempts: attempt };
  const reasons = results.flatMap(([, result]) => "reason" in result ? [result.reason] : []);
  if (accepted.length > 0) {
    return settleDelivery(deps, job, attempt, content, { outcome: "accepted", providerMessageId: null }, effects);
  }
  const transient = results.map(([, result]) => result).filter((result) => result.outcome === "transient");
  if (transient.length > 0) {
    const retryAfter = Math.max(...transient.map((result) => result.retryAfterSeconds ?? 0));
    const delivery: Delivery = { outcome: "transient", reason: reasons.join("; "), retryAfterSeconds: retryAfter || null };
    return settleDelivery(deps, job, attempt, content, delivery, effects);
  }
  if (results.some(([, result]) => result.outcome === "unknown")) {
    return settleDelivery(deps, job, attempt, content, { outcome: "unknown", reason: reasons.join("; ") }, effects);
  }
  if (gone.length === results.length) {
    const reason = `every push subscription of the member is gone (${gone.map(([, result]) => "status" in result ? result.status : "").join(", ")}); removed`;
    return {
      job, outcome: "skipped", attempted: true, change: { ...content, status: "skipped", status_reason: reasonOf(reason) }, effects,
      log: () => deps.logger.warn(`push notification skipped: ${reason}`, fields),
    };
  }
  return settleDelivery(deps, job, attempt, content, { outcome: "permanent", reason: reasons.join("; ") }, effects);
}

// The claim's jobs by tenant, in the order they were claimed.
function byTenant<T extends { job: TenantJob } | TenantJob>(items: T[]): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const tenantId = "job" in item ? item.job.tenantId : item.tenantId;
    const group = groups.get(tenantId);
    if (group) group.push(item);
    else groups.set(tenantId, [item]);
  }
  return groups;
}

// One transaction for the whole claim: one call that reads each tenant's notifications in
// that tenant's worker context, and marks those the claim will send as under way
// (loadQuery). A second job for a notification already in the claim is dropped, so no
// claim can send one notification twice. "The same" is the same notification in the same
// tenant: a job that names it under another tenant is another job (its tenant's context
// will not find the notification), and must not stand in for the real one. The earliest
// message wins, whatever order pgmq returns. Message ids are bigints sent as text: shorter
// is smaller. Each job learns where its notification's send stands (job.send).
function compareMsgIds(a: string, b: string): number {
  return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
}

async function loadClaim(deps: WorkerDependencies, jobs: TenantJob[]): Promise<Map<TenantJob, Loaded | Error>> {
  const loaded = new Map<TenantJob, Loaded | Error>();
  const first = new Map<string, TenantJob>();
  const inOrder = [...jobs].sort((a, b) => compareMsgIds(a.msgId, b.msgId));
  const claimed = inOrder.filter((job) => {
    const key = `${job.tenantId}/${job.notificationId}`;
    const earlier = first.get(key);
    if (earlier === undefined) {
      first.set(key, job);
      return true;
    }
    loaded.set(job, { kind: "drop", why: `job ${earlier.msgId} of the same claim carries the notification` });
    return false;
  });
  const { first: [rows] } = await workerTransaction(deps.sql, (tx) => [
    // Never prepared: its text names the claim's notifications, so it differs every time.
    tx.unsafe<LoadedRow[]>(loadQuery(claimed, deps.settings.unconfirmedWaitSeconds), [], { prepare: false }),
  ]);
  const found = new Map((rows as LoadedRow[]).map((row) => [`${row.tenant_id}/${row.id}`, row]));
  for (const job of claimed) {
    const row = found.get(`${job.tenantId}/${job.notificationId}`);
    if (row) {
      job.send = {
        fresh: row.send_fresh,
        attempts: row.attempts,
        startedAt: row.send_started_at,
        reported: row.provider_message_id,
        resentAfterWait: row.template_key !== "access_code_delivery",
      };
    }
    try {
      loaded.set(job, interpret(row, job.notificationId));
    } catch (error) {
      loaded.set(job, error instanceof Error ? error : new Error(String(error)));
    }
  }
  return loaded;
}

// One transaction records the claim, in one call of private.settle_notification_claim:
// first the queue (finished jobs deleted, the others postponed), then per tenant, in its
// worker context, its notifications' changes and what their channels left behind (inbox
// messages once per notification and member, push subscriptions' last acceptance, and the
// removal of the ones their push service says are gone). A crash before the commit leaves
// every job to come back and every notification as it was, its send marked as under way,
// so a notification is marked sent only once and sent again only as settleUnrecordedSend says.
async function settleClaim(deps: WorkerDependencies, settled: Settled[]): Promise<void> {
  const later = (result: Settled): result is Extract<Settled, { delaySeconds: number }> => "delaySeconds" in result;
  const finished = settled.filter((result) => result.outcome !== null && !later(result));
  const postponed = settled.filter(later);
  const changes = settled.filter((result): result is Settled & { change: NotificationChange } =>
    "change" in result && result.change !== undefined
  );
  if (finished.length === 0 && postponed.length === 0 && changes.length === 0) return;
  const claim = {
    finished: finished.map((result) => result.job.msgId),
    retried: postponed.map((result) => ({ msgId: result.job.msgId, delaySeconds: result.delaySeconds })),
    tenants: [...byTenant(changes)].map(([tenantId, group]) => {
      const effects = group.flatMap((result) => "effects" in result && result.effects ? [result.effects] : []);
      return {
        tenantId,
        changes: group.map((result) => ({ id: result.job.notificationId, ...result.change })),
        inbox: effects.flatMap((effect) => effect.inbox ?? []),
        pushAccepted: effects.flatMap((effect) => effect.pushAccepted ?? []),
        pushGone: effects.flatMap((effect) => effect.pushGone ?? []),
      };
    }),
  };
  await workerTransaction(deps.sql, (tx) => [
    tx`select private.settle_notification_claim(${JSON.stringify(claim)}::text::jsonb)`,
  ]);
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

// Everything the notifications need, read under RLS in their tenants in one call of
// private.load_notification_claims, which reads each tenant's as background_worker in that
// tenant's context through private.load_notification_claim, whose plan is kept for the
// connection (supabase/migrations/20261201000300_load_a_claim_in_one_call.sql); the
// notifications and their tenants are named in the call's text (see
// src/db/worker-transactions.ts). A left join reads its columns as nullable, so every column
// but the notification's own may be null here.
const loadQuery = (jobs: readonly TenantJob[], unconfirmedWaitSeconds: number) =>
  `select * from private.load_notification_claims(array[${jobs.map((job) => uuidLiteral(job.tenantId)).join(", ")}]::uuid[], ` +
  `array[${jobs.map((job) => uuidLiteral(job.notificationId)).join(", ")}]::uuid[], ${Math.max(0, Math.floor(unconfirmedWaitSeconds))})`;

type Row<Table extends keyof Database["public"]["Tables"]> = Database["public"]["Tables"][Table]["Row"];
type Nullable<T> = { [K in keyof T]: T[K] | null };

// The function's columns, typed from the tables they come from.
type LoadedRow =
  & Pick<Row<"notifications">, "tenant_id" | "id" | "template_key" | "channel" | "status" | "recipient_id" | "recipient_type" | "recipient_address" | "context" | "created_at" | "attempts" | "send_started_at" | "provider_message_id">
  & { send_fresh: boolean }
  & Nullable<Pick<Row<"notification_preferences">, "enabled">>
  & Nullable<Pick<Row<"reservations">,
    | "checked_in_at" | "confirmation_code" | "check_in" | "check_out" | "adults" | "children" | "total_amount" | "amount_paid"
    | "balance" | "currency" | "cancellation_reason">>
  & { reservation_id: string | null; guest_id: string | null }
  & Nullable<Pick<Row<"guests">, "first_name" | "last_name" | "email" | "phone" | "locale" | "email_undeliverable_at" | "email_undeliverable_reason">>
  & Nullable<Pick<Row<"properties">, "timezone" | "address_line1" | "city" | "check_in_time" | "check_out_time">>
  & { property_name: string | null; property_phone: string | null; property_email: string | null; unit_name: string | null }
  & Nullable<Pick<Row<"access_codes">, "code" | "valid_from" | "valid_until">>
  & { code_status: string | null; member_role: string | null; manager_ids: string[] | null; push_subscriptions: PushSubscriptionRow[] | null };

// The figures private.enqueue_nightly_summaries fixed for the night, and what a system
// notice is about, as the database wrote them.
const nightlySummaryContext: z.ZodType<NightlySummaryData> = z.object({
  tenantName: z.string(),
  businessDate: z.string(),
  properties: z.array(z.object({
    name: z.string(), timezone: z.string(), date: z.string(),
    arrivals: z.number(), arrivalsCheckedIn: z.number(), departures: z.number(), departuresCheckedOut: z.number(),
    inHouse: z.number(),
    unpaid: z.array(z.object({ currency: z.string(), reservations: z.number(), balance: z.number() })),
    openTasks: z.number(), openTasksOverdue: z.number(),
  })),
});
const deliveryFailedContext = z.object({
  failedNotificationId: z.uuid(), templateKey: z.string(), channel: z.string(), recipientType: z.string(),
  recipientId: z.uuid().nullable(), reason: z.string(),
});

// What private.notify_webhook_disabled wrote about the subscription it disabled.
const webhookDisabledContext = z.object({
  subscriptionId: z.uuid(), url: z.string(), reason: z.enum(["gone", "failing"]),
  failingSince: z.string().nullable(), disabledAt: z.string().nullable(),
});

// What private.notify_calendar_import_failing wrote about the import.
const calendarImportFailingContext = z.object({
  calendarImportId: z.uuid(), name: z.string(), url: z.string(), failures: z.number(), error: z.string().nullable(),
});

type ManagerNoticeKey = Extract<Loaded, { kind: "inbox" }>["templateKey"];

// A notice into the inboxes of the tenant's owners and admins; skipped when it has none.
function toManagers(row: LoadedRow, templateKey: ManagerNoticeKey, render: () => Alert): Loaded {
  const userIds = row.manager_ids ?? [];
  if (userIds.length === 0) return { kind: "done", outcome: "skipped", reason: "the tenant has no owner or admin to tell" };
  return { kind: "inbox", userIds, templateKey, render };
}

// What one notification's row (or its absence) asks of the worker.
function interpret(row: LoadedRow | undefined, notificationId: string): Loaded {
  if (!row) return { kind: "drop", why: "the notification is not in its tenant any more" };
  if (row.status !== "pending") return { kind: "drop", why: `the notification is already ${row.status}` };
  const { template_key: templateKey, channel } = row;

  // The tenant's preference for the pair: a stored enabled=false skips the delivery; no row means enabled.
  if (row.enabled === false) {
    return { kind: "done", outcome: "skipped", reason: `the tenant opted out of ${templateKey} by ${channel}` };
  }
  if (templateKey === "nightly_summary" && channel === "email") {
    const figures = nightlySummaryContext.parse(row.context);
    if (!row.recipient_address) return { kind: "done", outcome: "failed", reason: "the member has no email address" };
    if (row.member_role === null) return { kind: "done", outcome: "skipped", reason: "the recipient is no longer a member of the tenant" };
    return { kind: "email", to: row.recipient_address, templateKey, values: () => nightlySummaryValues(figures) };
  }
  if (templateKey === "delivery_failed" && channel === "in_app") {
    const notice = deliveryFailedContext.parse(row.context);
    const guestNamed = notice.recipientType === "guest" && row.first_name !== null && row.guest_id === notice.recipientId;
    return toManagers(row, templateKey, () =>
      renderDeliveryFailedNotice({
        templateKey: notice.templateKey, channel: notice.channel, recipientType: notice.recipientType,
        recipientLabel: guestNamed ? `${row.first_name} ${row.last_name ?? ""}`.trim() : null,
        reason: notice.reason, notificationId: notice.failedNotificationId,
      }));
  }
  if (templateKey === "webhook_disabled" && channel === "in_app") {
    const notice = webhookDisabledContext.parse(row.context);
    return toManagers(row, templateKey, () => renderWebhookDisabledNotice(notice));
  }
  if (templateKey === "calendar_import_failing" && channel === "in_app") {
    const notice = calendarImportFailingContext.parse(row.context);
    return toManagers(row, templateKey, () => renderCalendarImportFailingNotice(notice));
  }
  if (templateKey === "check_in_alerts" && (channel === "in_app" || channel === "push")) {
    if (row.recipient_id === null || row.member_role === null) {
      return { kind: "done", outcome: "skipped", reason: "the recipient is no longer a member of the tenant" };
    }
    if (!present(row, stayColumns) || row.reservation_id === null) {
      return { kind: "done", outcome: "failed", reason: "its reservation no longer exists" };
    }
    const stay = row;
    const reservationId = row.reservation_id;
    const render = () =>
      renderCheckInAlert({
        locale: "en",
        guest: { firstName: stay.first_name, lastName: stay.last_name },
        property: { name: stay.property_name, timezone: stay.timezone },
        unit: stay.unit_name === null ? null : { name: stay.unit_name },
        reservation: {
          id: reservationId, confirmationCode: stay.confirmation_code, checkIn: stay.check_in, checkOut: stay.check_out,
          adults: stay.adults, children: stay.children, balance: stay.balance, currency: stay.currency,
        },
        checkedInAt: stay.checked_in_at ?? stay.created_at,
      });
    if (channel === "in_app") return { kind: "inbox", userIds: [row.recipient_id], templateKey, render };
    const subscriptions = row.push_subscriptions ?? [];
    if (subscriptions.length === 0) {
      return { kind: "done", outcome: "skipped", reason: "the member has no push subscription in the tenant any more" };
    }
    return { kind: "push", subscriptions, templateKey, render };
  }
  // The guest's own templates, by email or SMS.
  if (!isGuestTemplateKey(templateKey) || row.recipient_type !== "guest") {
    throw new Error(`notification ${notificationId} pairs ${templateKey} with ${row.recipient_type} by ${channel}, which nothing delivers`);
  }
  if (channel !== "email" && channel !== "sms") {
    return { kind: "done", outcome: "skipped", reason: `a guest is not reached by ${channel}` };
  }
  if (!present(row, stayColumns)) return { kind: "done", outcome: "failed", reason: "its reservation no longer exists" };

  const to = channel === "email" ? row.email : row.phone;
  if (!to) {
    return { kind: "done", outcome: "failed", reason: `the guest has no ${channel === "email" ? "email address" : "phone number"}` };
  }
  // The provider said mail to this address cannot arrive (src/webhooks): sending again
  // would bounce again, until the address changes or a manager clears the mark.
  if (channel === "email" && row.email_undeliverable_at !== null) {
    return {
      kind: "done",
      outcome: "skipped",
      reason: `the guest's email address was marked undeliverable at ${row.email_undeliverable_at}: ${row.email_undeliverable_reason}. ` +
        `Change the address, or clear the mark with DELETE /v1/guests/${row.guest_id}/email-undeliverable`,
    };
  }

  let accessCode: TemplateData["accessCode"];
  if (templateKey === "access_code_delivery") {
    if (!present(row, accessCodeColumns)) return { kind: "done", outcome: "failed", reason: "its access code no longer exists" };
    if (row.code_status !== "active") return { kind: "done", outcome: "skipped", reason: "the access code was revoked before delivery" };
    accessCode = { code: row.code, validFrom: row.valid_from, validUntil: row.valid_until };
  }

  const data: TemplateData = {
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
  };
  return channel === "email"
    ? { kind: "email", to, templateKey, values: () => templateValues(data) }
    : { kind: "sms", to, templateKey, render: () => renderSms(templateKey, data) };
}
