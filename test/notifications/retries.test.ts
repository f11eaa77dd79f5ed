// What the notifications worker makes of SendGrid's answers: a 429 or a 5xx is retried
// after an exponential backoff with jitter that honours Retry-After, until the
// maximum of attempts; any other 4xx fails the notification at once with the
// reason kept; an operator retries a failed one with private.retry_notification.
// The worker runs as the edge function with NOTIFICATIONS_RETRY_BASE_SECONDS=1;
// where a test does not want to wait for a backoff it checks the job's visibility
// timeout and then makes the job visible (pgmq.set_vt), as if the time had passed.
import assert from "node:assert/strict";
import type postgres from "postgres";
import { type Client, withFixture } from "../support/api.ts";
import type { Stay } from "../support/domain.ts";
import {
  callWorker,
  checkedIn,
  drainQueue,
  expectFailureNoticed,
  expectRunWithFailures,
  expireBackoff,
  type Job,
  jobsFor,
  mail,
  notificationFor,
  notificationIdsIn,
  type Notification,
  partsOf,
  readNotification,
  reportsSettled,
  type RunSummary,
  runWorker,
  runWorkerInProcess,
  runWorkerUntilRead,
  sleep,
  summary,
} from "../support/notifications.ts";
import { stack } from "../support/stack.ts";
import type { ScriptedResponse } from "../../local/capture.ts";
import { defaultWorkerSettings } from "../../src/notifications/worker.ts";

// A confirmed stay checked in through the API: its pending checkin_reminder.
async function onlyJob(sql: postgres.Sql, notificationId: string): Promise<Job> {
  const jobs = await jobsFor(sql, notificationId);
  assert.equal(jobs.length, 1, `one job for ${notificationId}: ${JSON.stringify(jobs)}`);
  return jobs[0]!;
}

// The job is invisible for about `seconds` more (it was set a moment ago).
function assertInvisibleFor(job: Job, lowest: number, highest: number) {
  assert.ok(job.secondsLeft > lowest - 0.5 && job.secondsLeft <= highest + 0.05,
    `the job is visible again in ${job.secondsLeft}s, expected between ${lowest} and ${highest}`);
}

// After a transient failure: still pending, the attempt counted, why it is waiting kept.
async function expectWaiting(api: Client, pending: Notification, attempts: number, reason: RegExp) {
  const waiting = await readNotification(api, pending.id);
  assert.equal(waiting.status, "pending");
  assert.equal(waiting.attempts, attempts);
  assert.equal(waiting.sentAt, null);
  assert.match(waiting.statusReason ?? "", reason);
  return waiting;
}

// The retry delivered it: one accepted mail after the scripted failures, all for this notification.
async function expectSentAfter(api: Client, stay: Stay, pending: Notification, failures: number[], attempts: number) {
  const requests = await mail.requests();
  assert.deepEqual(requests.map((attempt) => attempt.status), [...failures, 202]);
  for (const attempt of requests) {
    assert.equal(partsOf(attempt.body).customArgs.notification_id, pending.id, "every attempt names the notification");
    assert.deepEqual(partsOf(attempt.body).to, [stay.guest.email]);
  }
  assert.equal((await mail.messages()).length, 1, "exactly one accepted mail");
  const sent = await readNotification(api, pending.id);
  assert.equal(sent.status, "sent");
  assert.equal(sent.statusReason, null, "the reason of the earlier failure is gone");
  assert.equal(sent.attempts, attempts);
  assert.ok(sent.sentAt);
  assert.equal(sent.subject, partsOf(requests.at(-1)!.body).subject);
}

async function transientThenAccepted(failure: ScriptedResponse, reason: RegExp) {
  await withFixture(async ({ sql, tenant }) => {
    await drainQueue(sql);
    const t = await tenant(`transient-${failure.status}`);
    const { stay, pending } = await checkedIn(t.ownerClient);
    await mail.script(failure);

    assert.deepEqual(await runWorker(), summary({ read: 1, retried: 1 }));
    await expectWaiting(t.ownerClient, pending, 1, reason);
    const job = await onlyJob(sql, pending.id);
    assert.equal(job.readCount, 1);
    assertInvisibleFor(job, 1, 1);
    assert.deepEqual(await runWorker(), summary({}), "not before the backoff");

    const { run } = await runWorkerUntilRead(5000);
    assert.deepEqual(run, summary({ read: 1, sent: 1 }));
    await expectSentAfter(t.ownerClient, stay, pending, [failure.status], 2);
    assert.deepEqual(await jobsFor(sql, pending.id), [], "the job is deleted");
    assert.deepEqual(await runWorker(), summary({}));
  });
}

// ---------------------------------------------------------------- transient failures

Deno.test("SendGrid answers 429 with Retry-After: 1, then 202: retried (pending, one attempt, the 429 kept), then sent after the wait, one mail", () =>
  transientThenAccepted({ status: 429, headers: { "retry-after": "1" } }, /\b429\b/));

Deno.test("SendGrid answers 500, then 202: retried, then sent after the backoff, one mail", () =>
  transientThenAccepted({ status: 500 }, /\b500\b/));

Deno.test("Retry-After longer than the backoff is honoured, in seconds and as an HTTP date", () =>
  withFixture(async ({ sql, tenant }) => {
    await drainQueue(sql);
    const t = await tenant("retry-after");
    const { stay, pending } = await checkedIn(t.ownerClient);

    await mail.script({ status: 429, headers: { "retry-after": "3" } });
    assert.deepEqual(await runWorker(), summary({ read: 1, retried: 1 }));
    assertInvisibleFor(await onlyJob(sql, pending.id), 3, 3);
    await expireBackoff(sql, (await onlyJob(sql, pending.id)).msgId);

    const at = new Date(Date.now() + 6000);
    await mail.script({ status: 503, headers: { "retry-after": at.toUTCString() } });
    assert.deepEqual(await runWorker(), summary({ read: 1, retried: 1 }));
    await expectWaiting(t.ownerClient, pending, 2, /\b503\b/);
    // An HTTP date has whole seconds: the wait is 5 to 6 seconds from now.
    assertInvisibleFor(await onlyJob(sql, pending.id), 5, 6);
    assert.deepEqual(await runWorker(), summary({}));
    await expireBackoff(sql, (await onlyJob(sql, pending.id)).msgId);

    assert.deepEqual(await runWorker(), summary({ read: 1, sent: 1 }));
    await expectSentAfter(t.ownerClient, stay, pending, [429, 503], 3);
  }));

Deno.test("transient failures up to the maximum of attempts: an exponential backoff with jitter, then failed with 'gave up after N attempts'", () =>
  withFixture(async ({ sql, tenant }) => {
    await drainQueue(sql);
    const t = await tenant("give-up");
    const { pending } = await checkedIn(t.ownerClient);
    const max = defaultWorkerSettings.maxAttempts;
    assert.ok(max > 1);
    await mail.script(...Array.from({ length: max }, () => ({ status: 503 })));

    for (let attempt = 1; attempt < max; attempt++) {
      assert.deepEqual(await runWorker(), summary({ read: 1, retried: 1 }), `attempt ${attempt}`);
      await expectWaiting(t.ownerClient, pending, attempt, /\b503\b/);
      const job = await onlyJob(sql, pending.id);
      assert.equal(job.readCount, attempt);
      const exponential = Math.min(stack.notifications.retryMaxSeconds, stack.notifications.retryBaseSeconds * 2 ** (attempt - 1));
      assertInvisibleFor(job, Math.ceil(exponential / 2), exponential);
      await expireBackoff(sql, job.msgId);
    }
    expectRunWithFailures(await runWorker(), { read: 1, failed: 1 }, `attempt ${max}`);

    const failed = await readNotification(t.ownerClient, pending.id);
    assert.equal(failed.status, "failed");
    assert.equal(failed.attempts, max);
    assert.equal(failed.sentAt, null);
    assert.match(failed.statusReason ?? "", new RegExp(`^gave up after ${max} attempts: .*\\b503\\b`));
    assert.deepEqual(await jobsFor(sql, pending.id), [], "no job is left");
    assert.deepEqual((await mail.requests()).map((attempt) => attempt.status), Array(max).fill(503));
    assert.deepEqual(await mail.messages(), []);
    // What is left is the system notice of the failure, for the owners' inboxes.
    await expectFailureNoticed(t.ownerClient, pending.id);
  }));

Deno.test("SendGrid unreachable (connection refused): retried as transient, then sent", () =>
  withFixture(async ({ sql, tenant }) => {
    await drainQueue(sql);
    const t = await tenant("unreachable");
    const { stay, pending } = await checkedIn(t.ownerClient);

    // Port 9 (discard) has no listener on the stack's host.
    const { run, logs } = await runWorkerInProcess({ email: { baseUrl: "http://127.0.0.1:9" } });
    assert.deepEqual(run, summary({ read: 1, retried: 1 }));
    await expectWaiting(t.ownerClient, pending, 1, /^SendGrid did not answer: .*ECONNREFUSED/);
    assert.deepEqual(logs.map((line) => line.level), ["warn"]);
    assert.match(logs[0]!.message, /will be retried in \d+s/);
    assert.deepEqual(await mail.requests(), []);

    await expireBackoff(sql, (await onlyJob(sql, pending.id)).msgId);
    assert.deepEqual(await runWorker(), summary({ read: 1, sent: 1 }));
    await expectSentAfter(t.ownerClient, stay, pending, [], 2);
  }));

// A send whose answer never comes may have been taken: it is not sent again blindly. The
// provider's report names the notification, and settles it.
Deno.test("SendGrid too slow (the request times out): unconfirmed, not sent again; SendGrid's report of the late acceptance makes it sent, delivered", () =>
  withFixture(async ({ sql, tenant }) => {
    await drainQueue(sql);
    const t = await tenant("timeout");
    const { pending } = await checkedIn(t.ownerClient);
    await mail.script({ status: 202, delayMs: 1500 });

    const { run, logs } = await runWorkerInProcess({ email: { timeoutMs: 300 }, settings: { unconfirmedWaitSeconds: 600 } });
    assert.deepEqual(run, summary({ read: 1, unconfirmed: 1 }));
    await expectWaiting(t.ownerClient, pending, 1, /^SendGrid did not answer: .*timeout.*its report is awaited up to 600s before it is sent again/i);
    assert.match(logs[0]?.message ?? "", /^notification send unconfirmed: /);

    // SendGrid took it after all, and reports on it.
    await sleep(1500);
    await reportsSettled();
    await expireBackoff(sql, (await onlyJob(sql, pending.id)).msgId);
    assert.deepEqual(await runWorker(), summary({ read: 1, sent: 1 }));
    assert.equal((await mail.messages()).length, 1, "sent once");
    const sent = await readNotification(t.ownerClient, pending.id);
    assert.deepEqual([sent.status, sent.attempts, sent.deliveryState], ["sent", 1, "delivered"]);
    assert.ok(sent.subject && sent.body, "the record keeps what was sent");
    assert.deepEqual(await jobsFor(sql, pending.id), []);
  }));

Deno.test("a send SendGrid never answers nor reports: waits out the unconfirmed wait, then goes once more", () =>
  withFixture(async ({ sql, tenant }) => {
    await drainQueue(sql);
    const t = await tenant("no-report");
    const { pending } = await checkedIn(t.ownerClient);
    await mail.script({ status: 503, delayMs: 1500 });

    const { run } = await runWorkerInProcess({ email: { timeoutMs: 300 }, settings: { unconfirmedWaitSeconds: 600 } });
    assert.deepEqual(run, summary({ read: 1, unconfirmed: 1 }));
    // Looked at again before the wait has passed: it waits on.
    await expireBackoff(sql, (await onlyJob(sql, pending.id)).msgId);
    assert.deepEqual((await runWorkerInProcess({ settings: { unconfirmedWaitSeconds: 600 } })).run, summary({ read: 1, unconfirmed: 1 }));
    await sleep(1500);
    assert.deepEqual(await mail.messages(), [], "SendGrid never took it");

    // The wait has passed with no report: it goes again, as a second attempt.
    await sql`update public.notifications set send_started_at = now() - interval '11 minutes' where id = ${pending.id}`;
    await expireBackoff(sql, (await onlyJob(sql, pending.id)).msgId);
    assert.deepEqual((await runWorkerInProcess({ settings: { unconfirmedWaitSeconds: 600 } })).run, summary({ read: 1, sent: 1 }));
    assert.equal((await mail.messages()).length, 1);
    const sent = await readNotification(t.ownerClient, pending.id);
    assert.deepEqual([sent.status, sent.attempts], ["sent", 2]);
  }));

// A door code's message whose send may have reached the guest is not sent again on its
// own: a guest with two codes is worse off than one told to ask. It fails for an operator.
Deno.test("a door code's message SendGrid never answers nor reports: past the wait it fails for an operator, never sent twice", () =>
  withFixture(async ({ sql, tenant }) => {
    await drainQueue(sql);
    const t = await tenant("code-unconfirmed");
    const { stay } = await checkedIn(t.ownerClient);
    assert.deepEqual(await runWorker(), summary({ read: 1, sent: 1 }), "the welcome email first");
    const created = await t.ownerClient.post(`/reservations/${stay.reservation.id}/access-codes`, { code: "482913" });
    assert.equal(created.status, 201);
    const code = await notificationFor(t.ownerClient, stay.reservation.id, "access_code_delivery");
    await mail.script({ status: 503, delayMs: 1500 });

    const settings = { unconfirmedWaitSeconds: 600 };
    assert.deepEqual((await runWorkerInProcess({ email: { timeoutMs: 300 }, settings })).run, summary({ read: 1, unconfirmed: 1 }));
    await sleep(1500);
    await sql`update public.notifications set send_started_at = now() - interval '11 minutes' where id = ${code.id}`;
    await expireBackoff(sql, (await onlyJob(sql, code.id)).msgId);
    expectRunWithFailures((await runWorkerInProcess({ settings })).run, { read: 1, failed: 1 });

    const failed = await readNotification(t.ownerClient, code.id);
    assert.deepEqual([failed.status, failed.attempts, failed.sentAt], ["failed", 1, null]);
    assert.match(failed.statusReason ?? "", /got no answer and its provider has not reported on it: it may have reached the guest.*private\.retry_notification/);
    assert.equal((await mail.requests()).filter((request) => request.status === 202).length, 1, "only the welcome email was taken");
    assert.deepEqual(await jobsFor(sql, code.id), []);
    await expectFailureNoticed(t.ownerClient, code.id);
  }));

// ---------------------------------------------------------------- permanent failures and the operator's retry

Deno.test("SendGrid answers 400: failed at once with SendGrid's reason kept, the job gone; the operator's retry_notification sends it", () =>
  withFixture(async ({ sql, tenant }) => {
    await drainQueue(sql);
    const t = await tenant("permanent");
    const api = t.ownerClient;
    const { stay, pending } = await checkedIn(api);
    const refusal = "The from address does not match a verified Sender Identity.";
    await mail.script({ status: 400, body: { errors: [{ message: refusal, field: "from", help: null }] } });

    expectRunWithFailures(await runWorker(), { read: 1, failed: 1 });
    const failed = await readNotification(api, pending.id);
    assert.equal(failed.status, "failed");
    assert.equal(failed.attempts, 1);
    assert.equal(failed.sentAt, null);
    assert.match(failed.statusReason ?? "", /\b400\b/);
    assert.ok(failed.statusReason?.includes(refusal), `the reason keeps SendGrid's message: ${failed.statusReason}`);
    assert.deepEqual(await jobsFor(sql, pending.id), [], "the job is gone");
    await expectFailureNoticed(api, pending.id);
    assert.deepEqual((await mail.requests()).map((attempt) => attempt.status), [400], "tried once");
    assert.deepEqual(await mail.messages(), []);

    // The operator, in the SQL editor.
    const [retried] = await sql<{ retried: boolean }[]>`select private.retry_notification(${pending.id}) as retried`;
    assert.equal(retried!.retried, true);
    const again = await readNotification(api, pending.id);
    assert.deepEqual([again.status, again.statusReason, again.attempts, again.sentAt], ["pending", null, 0, null]);
    const job = await onlyJob(sql, pending.id);
    assert.deepEqual([job.readCount, job.message], [0, { notificationId: pending.id, tenantId: t.tenantId }]);

    assert.deepEqual(await runWorker(), summary({ read: 1, sent: 1 }));
    await expectSentAfter(api, stay, pending, [400], 1);

    // Only a failed notification can be retried: a sent one is not, and nothing is enqueued.
    const [refused] = await sql<{ retried: boolean }[]>`select private.retry_notification(${pending.id}) as retried`;
    assert.equal(refused!.retried, false);
    assert.equal((await readNotification(api, pending.id)).status, "sent");
    assert.deepEqual(await jobsFor(sql, pending.id), []);
    assert.deepEqual(await runWorker(), summary({}));
    assert.equal((await mail.messages()).length, 1);
  }));

Deno.test("a provider refusal longer than the notification's reason may be: failed with the reason shortened, and the rest of the batch is sent in the same run", () =>
  withFixture(async ({ sql, tenant }) => {
    await drainQueue(sql);
    const t = await tenant("long-reason");
    const stays = [await checkedIn(t.ownerClient), await checkedIn(t.ownerClient)];
    // A refusal naming a recipient: the two check-ins' request is refused, and each goes
    // again in a request of its own (email-batch.ts), one of which is refused again.
    const message = `Invalid recipient: ${"x".repeat(2500)}`;
    const refusal = { status: 400, body: { errors: [{ message, field: "personalizations.0.to.0.email", help: null }] } };
    await mail.script(refusal, refusal);

    const answer = await callWorker();
    assert.equal(answer.status, 200, `the run completes: ${answer.text.slice(0, 200)}`);
    expectRunWithFailures(answer.body as RunSummary, { read: 2, sent: 1, failed: 1 });

    // The halves go side by side: the refused one is whichever met the second scripted 400.
    const attempts = await mail.requests();
    assert.deepEqual(attempts.map((attempt) => [attempt.status, attempt.body.personalizations.length]).sort(), [[202, 1], [400, 1], [400, 2]]);
    const refusedAlone = attempts.find((attempt) => attempt.status === 400 && attempt.body.personalizations.length === 1);
    const refusedId = refusedAlone && notificationIdsIn(refusedAlone.body)[0];
    const refused = stays.find(({ pending }) => pending.id === refusedId);
    const next = stays.find(({ pending }) => pending.id !== refusedId);
    assert.ok(refused && next, `the 400 names one of the two notifications: ${refusedId}`);

    const failed = await readNotification(t.ownerClient, refused.pending.id);
    assert.equal(failed.status, "failed");
    const reason = failed.statusReason ?? "";
    assert.ok(reason.startsWith("SendGrid answered 400: personalizations.0.to.0.email: Invalid recipient: xxx"), reason.slice(0, 80));
    assert.ok(reason.length <= 2000, `the reason fits the column: ${reason.length} characters`);
    assert.deepEqual(await jobsFor(sql, refused.pending.id), []);

    assert.equal((await readNotification(t.ownerClient, next.pending.id)).status, "sent");
    assert.deepEqual(await jobsFor(sql, next.pending.id), []);
  }));
