// SendGrid answering 5xx for a long stretch, then recovering: every notification waits
// (pending, its attempts counted, none failed while it has attempts left) and is sent
// exactly once after recovery. The stretch is as long as it can be without a
// notification giving up: maxAttempts - 1 failed attempts each (5 with the default of
// 6), so each is sent at its last attempt. One attempt more is
// retries.test.ts's "transient failures up to the maximum of attempts", which fails
// the notification with 'gave up after N attempts'.
//
// The worker runs as the edge function, with the stack's backoff (1 s doubling, at
// most 30 s); rather than sleep through a backoff, the test checks each job is
// postponed and then makes it visible (pgmq.set_vt), as if the time had passed. With
// the production settings (30 s doubling, jitter down to half) the same five waits
// add up to between about 8 and 16 minutes of outage.
import assert from "node:assert/strict";
import { type Client, withFixture } from "../support/api.ts";
import {
  checkedIn,
  drainQueue,
  expireBackoff,
  jobsFor,
  listNotifications,
  mail,
  type Notification,
  notificationIdsIn,
  partsOf,
  readNotification,
  runWorker,
  summary,
} from "../support/notifications.ts";
import { defaultWorkerSettings } from "../../src/notifications/worker.ts";

Deno.test("SendGrid answers 5xx for maxAttempts - 1 attempts of every notification, then recovers: none fails, each is sent once at its last attempt, the queue is empty", () =>
  withFixture(async ({ sql, tenant }) => {
    await drainQueue(sql);
    const max = defaultWorkerSettings.maxAttempts;
    const outageAttempts = max - 1;
    assert.ok(outageAttempts >= 3, "a long stretch: several attempts of each notification fail");

    // Five check-ins across two tenants: five pending checkin_reminders, one job each.
    const tenants = [await tenant("outage-a"), await tenant("outage-b")];
    const pending: { api: Client; tenantId: string; guestEmail: string; notification: Notification }[] = [];
    for (const [index, count] of [3, 2].entries()) {
      const t = tenants[index]!;
      for (let n = 0; n < count; n++) {
        const { stay, pending: notification } = await checkedIn(t.ownerClient);
        pending.push({ api: t.ownerClient, tenantId: t.tenantId, guestEmail: stay.guest.email!, notification });
      }
    }
    const ids = pending.map((p) => p.notification.id);

    // The outage: each run sends the five check-ins together, in one request (one template,
    // one shape, one claim), so each run meets one answer, 503s and 500s by turns; then
    // SendGrid accepts again.
    const outage = Array.from({ length: outageAttempts }, (_, round) => round % 2 === 0 ? 503 : 500);
    const scripted = await mail.script(...outage.map((status) => ({ status })));
    assert.equal(scripted.pending, outageAttempts);

    for (let attempt = 1; attempt <= outageAttempts; attempt++) {
      const status = outage[attempt - 1]!;
      assert.deepEqual(await runWorker(), summary({ read: pending.length, retried: pending.length }), `attempt ${attempt}`);
      for (const { api, notification } of pending) {
        const waiting = await readNotification(api, notification.id);
        assert.deepEqual(
          [waiting.status, waiting.attempts, waiting.sentAt],
          ["pending", attempt, null],
          `attempt ${attempt} of ${notification.id}: ${JSON.stringify(waiting)}`,
        );
        assert.match(waiting.statusReason ?? "", new RegExp(`\\b${status}\\b`));
      }
      for (const t of tenants) {
        assert.deepEqual((await listNotifications(t.ownerClient, "?status=failed")).data, [], `attempt ${attempt}: none failed`);
      }
      // Each notification has its one job, postponed by the backoff; none is visible yet.
      const jobs = await Promise.all(ids.map((id) => jobsFor(sql, id)));
      for (const [index, forOne] of jobs.entries()) {
        assert.equal(forOne.length, 1, `one job for ${ids[index]}: ${JSON.stringify(forOne)}`);
        assert.equal(forOne[0]!.readCount, attempt);
        assert.ok(forOne[0]!.secondsLeft > 0, `the job waits for its backoff: ${forOne[0]!.secondsLeft}s`);
      }
      assert.deepEqual(await runWorker(), summary({}), `attempt ${attempt}: nothing is tried before its backoff`);
      for (const [job] of jobs) await expireBackoff(sql, job!.msgId);
    }
    assert.equal((await mail.script()).pending, 0, "the outage's answers are spent");
    assert.deepEqual(await mail.messages(), [], "nothing was accepted during the outage");

    // SendGrid recovered: the last attempt of each sends it.
    assert.deepEqual(await runWorker(), summary({ read: pending.length, sent: pending.length }), `attempt ${max}`);
    for (const { api, notification } of pending) {
      const sent = await readNotification(api, notification.id);
      assert.deepEqual([sent.status, sent.attempts, sent.statusReason], ["sent", max, null], notification.id);
      assert.ok(sent.sentAt);
    }

    // Nothing lost or doubled: one accepted mail per notification, to its guest, under its
    // tenant; every notification tried exactly max times; the queue empty.
    const messages = (await mail.messages()).map((message) => partsOf(message.body));
    assert.deepEqual(messages.map((message) => message.customArgs.notification_id).sort(), [...ids].sort());
    for (const { tenantId, guestEmail, notification } of pending) {
      const [mine] = messages.filter((message) => message.customArgs.notification_id === notification.id);
      assert.deepEqual([mine!.customArgs.tenant_id, mine!.to], [tenantId, [guestEmail]]);
    }
    const requests = await mail.requests();
    assert.deepEqual(requests.map((request) => request.status), [...outage, 202], "one request a run");
    for (const request of requests) {
      assert.deepEqual(notificationIdsIn(request.body).sort(), [...ids].sort(), "every attempt carried every notification");
    }
    for (const id of ids) assert.deepEqual(await jobsFor(sql, id), [], `no job is left for ${id}`);
    const [left] = await sql<{ count: number }[]>`select count(*)::int as count from pgmq.q_notifications`;
    assert.equal(left!.count, 0, "the queue is empty");
    assert.deepEqual(await runWorker(), summary({}));
    assert.equal((await mail.messages()).length, pending.length, "a further run sends nothing");
  }));
