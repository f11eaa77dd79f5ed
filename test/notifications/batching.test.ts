// A claim's emails in as few SendGrid requests as SendGrid allows, end to end on the
// running stack: the worker function sends through the SendGrid double, which records a
// mail per personalization with its substitutions made and posts each one's signed events
// back to the api function. Many check-ins go in one request and each guest gets their own
// mail; an address SendGrid would refuse fails alone; a refusal SendGrid still makes is
// split down to its one address; a throttled request retries all of its emails; and each
// email's notification_id comes back in its own events.
import assert from "node:assert/strict";
import { type Client, withFixture } from "../support/api.ts";
import {
  checkedIn,
  deliveryColumns,
  drainQueue,
  expectRunWithFailures,
  expireBackoff,
  jobsFor,
  mail,
  type Notification,
  notificationIdsIn,
  partsOf,
  readNotification,
  runWorker,
  summary,
} from "../support/notifications.ts";
import type { Stay } from "../support/domain.ts";
import { stack } from "../support/stack.ts";
import { createSendGridAdapter } from "../../src/notifications/sendgrid.ts";
import type { OutgoingBatch } from "../../src/notifications/delivery.ts";

type CheckIn = { api: Client; tenantId: string; stay: Stay; pending: Notification };

// `count` checked-in stays in the tenant, each with its pending checkin_reminder.
async function checkIns(api: Client, tenantId: string, count: number): Promise<CheckIn[]> {
  const made: CheckIn[] = [];
  for (let i = 0; i < count; i++) made.push({ api, tenantId, ...await checkedIn(api) });
  return made;
}

// The one accepted mail of a notification.
async function mailOf(notificationId: string) {
  const mine = (await mail.messages()).filter((m) => m.body.custom_args?.notification_id === notificationId);
  assert.equal(mine.length, 1, `one mail for ${notificationId}`);
  return mine[0]!;
}

Deno.test("a claim of many check-ins across tenants goes to SendGrid in one request, and each guest gets their own mail, as sent alone", () =>
  withFixture(async ({ sql, tenant }) => {
    await drainQueue(sql);
    const a = await tenant("batch-a");
    const b = await tenant("batch-b");
    const all = [...await checkIns(a.ownerClient, a.tenantId, 8), ...await checkIns(b.ownerClient, b.tenantId, 4)];

    assert.deepEqual(await runWorker(), summary({ read: 12, sent: 12 }));

    const requests = await mail.requests();
    assert.equal(requests.length, 1, "one request for the twelve");
    const [request] = requests;
    assert.equal(request!.status, 202);
    assert.deepEqual(notificationIdsIn(request!.body).sort(), all.map((c) => c.pending.id).sort(), "a personalization each");
    for (const part of request!.body.content) {
      assert.match(part.value, /`[ht]\d+`/, `the ${part.type} part is shared, with tokens`);
      for (const { stay } of all) assert.ok(!part.value.includes(stay.property.name), "no guest's own values in the shared body");
    }

    for (const { api, tenantId, stay, pending } of all) {
      const sent = await readNotification(api, pending.id);
      const received = await mailOf(pending.id);
      const parts = partsOf(received.body);
      assert.deepEqual(parts.to, [stay.guest.email]);
      assert.deepEqual(parts.customArgs, { notification_id: pending.id, tenant_id: tenantId });
      // The notification keeps the email as rendered alone: the guest got exactly that.
      assert.equal(parts.subject, sent.subject);
      assert.equal(parts.text, sent.body, "the text part, byte for byte");
      assert.ok(!parts.html.includes("`") && !parts.text.includes("`"), "no token left");
      assert.ok(parts.html.includes(stay.property.name) && parts.html.includes(stay.reservation.confirmationCode));
      for (const other of all) {
        if (other.pending.id !== pending.id) assert.ok(!parts.html.includes(other.stay.property.name), "nobody else's stay");
      }
      assert.deepEqual([sent.status, sent.attempts], ["sent", 1]);
      assert.equal((await deliveryColumns(sql, pending.id)).provider_message_id, request!.messageId, "the request's X-Message-Id");
    }
  }));

Deno.test("an address SendGrid would refuse fails alone before any request, saying why; its neighbours go together", () =>
  withFixture(async ({ sql, tenant }) => {
    await drainQueue(sql);
    const t = await tenant("batch-invalid");
    const all = await checkIns(t.ownerClient, t.tenantId, 4);
    // The API takes only addresses SendGrid takes; the database is looser, as an import
    // or an older row may be.
    const bad = all[1]!;
    await sql`update public.guests set email = 'ana..silva@guest.example' where id = ${bad.stay.guest.id}`;

    expectRunWithFailures(await runWorker(), { read: 4, sent: 3, failed: 1 });

    const failed = await readNotification(t.ownerClient, bad.pending.id);
    assert.deepEqual([failed.status, failed.sentAt], ["failed", null]);
    assert.equal(
      failed.statusReason,
      'the email address "ana..silva@guest.example" is not one SendGrid accepts (the part before the @ has two dots in a row): nothing was sent',
    );
    assert.deepEqual(await jobsFor(sql, bad.pending.id), [], "not to be tried again");

    const requests = await mail.requests();
    assert.deepEqual(requests.map((r) => [r.status, r.body.personalizations.length]), [[202, 3]]);
    assert.ok(!JSON.stringify(requests[0]!.body).includes("ana..silva"), "the request never named it");
    for (const { pending } of all.filter((c) => c !== bad)) {
      assert.equal((await readNotification(t.ownerClient, pending.id)).status, "sent");
      await mailOf(pending.id);
    }
  }));

Deno.test("SendGrid refusing one address of a batch with a 400: the batch is split until that one fails alone, and every other is sent once", () =>
  withFixture(async ({ sql, tenant }) => {
    await drainQueue(sql);
    const t = await tenant("batch-split");
    const all = await checkIns(t.ownerClient, t.tenantId, 5);
    const refused = all[3]!;
    await mail.refuse(refused.stay.guest.email!);

    expectRunWithFailures(await runWorker(), { read: 5, sent: 4, failed: 1 });

    // Five refused; the first three taken, the last two refused; of those, one refused, one taken.
    const requests = await mail.requests();
    assert.deepEqual(requests.map((r) => [r.status, r.body.personalizations.length]).sort(), [[202, 1], [202, 3], [400, 1], [400, 2], [400, 5]]);
    const failed = await readNotification(t.ownerClient, refused.pending.id);
    assert.equal(failed.status, "failed");
    assert.equal(failed.statusReason, "SendGrid answered 400: personalizations.0.to.0.email: Does not contain a valid address.");
    assert.deepEqual(await jobsFor(sql, refused.pending.id), []);

    const mails = await mail.messages();
    assert.deepEqual(mails.map((m) => m.body.custom_args?.notification_id).sort(),
      all.filter((c) => c !== refused).map((c) => c.pending.id).sort(), "each other one mailed once");
    for (const { pending } of all.filter((c) => c !== refused)) {
      assert.equal((await readNotification(t.ownerClient, pending.id)).status, "sent");
    }
  }));

Deno.test("SendGrid answering 429 to a batch: every email of it waits for the Retry-After, then they go together", () =>
  withFixture(async ({ sql, tenant }) => {
    await drainQueue(sql);
    const t = await tenant("batch-429");
    const all = await checkIns(t.ownerClient, t.tenantId, 3);
    await mail.script({ status: 429, headers: { "retry-after": "5" } });

    assert.deepEqual(await runWorker(), summary({ read: 3, retried: 3 }));
    for (const { pending } of all) {
      const waiting = await readNotification(t.ownerClient, pending.id);
      assert.deepEqual([waiting.status, waiting.attempts], ["pending", 1]);
      assert.match(waiting.statusReason ?? "", /\b429\b/);
      const [job] = await jobsFor(sql, pending.id);
      assert.ok(job && job.secondsLeft > 3, `the Retry-After is honoured: ${job?.secondsLeft}s`);
    }
    assert.deepEqual(await runWorker(), summary({}), "nothing before the Retry-After");
    for (const { pending } of all) await expireBackoff(sql, (await jobsFor(sql, pending.id))[0]!.msgId);

    assert.deepEqual(await runWorker(), summary({ read: 3, sent: 3 }));
    const requests = await mail.requests();
    assert.deepEqual(requests.map((r) => r.status), [429, 202]);
    for (const request of requests) assert.deepEqual(notificationIdsIn(request.body).sort(), all.map((c) => c.pending.id).sort());
    for (const { pending } of all) {
      assert.deepEqual(
        [(await readNotification(t.ownerClient, pending.id)).status, (await readNotification(t.ownerClient, pending.id)).attempts],
        ["sent", 2],
      );
    }
  }));

Deno.test("each email's notification_id comes back in its own events through the signed event webhook: one request, each notification its own fate", () =>
  withFixture(async ({ sql, tenant }) => {
    await drainQueue(sql);
    const t = await tenant("batch-events");
    const all = await checkIns(t.ownerClient, t.tenantId, 3);
    const bounce = {
      event: "bounce", type: "bounce", status: "5.1.1", reason: "550 5.1.1 The email account that you tried to reach does not exist",
    };
    // The double's fates go to its mails in order, one per personalization.
    await mail.fates(
      { events: [{ event: "processed" }, { event: "delivered", response: "250 OK" }] },
      { events: [{ event: "processed" }, bounce] },
      { events: [{ event: "processed" }, { event: "deferred", response: "421 try later" }] },
    );

    assert.deepEqual(await runWorker(), summary({ read: 3, sent: 3 }));

    const [request, ...more] = await mail.requests();
    assert.equal(more.length, 0, "one request");
    const order = notificationIdsIn(request!.body);
    const expected = [["delivered", "delivered"], ["bounce", "bounced"], ["deferred", "deferred"]];
    for (const [index, id] of order.entries()) {
      const notification = await readNotification(t.ownerClient, id);
      const [event, state] = expected[index]!;
      assert.equal(notification.deliveryState, state, `${id}: its own events, no other's`);
      assert.deepEqual(notification.events.map((e) => e.event), [event, "processed"]);
    }

    // What the double posted: each event names its notification and tenant, under an
    // sg_message_id of the request's X-Message-Id, and every post was taken.
    const reports = await mail.reports();
    assert.equal(reports.length, 3, "a post per mail");
    for (const post of reports) {
      assert.equal(post.attempts.at(-1)?.status, 200);
      for (const event of post.payload as Record<string, unknown>[]) {
        assert.ok(order.includes(String(event.notification_id)));
        assert.equal(event.tenant_id, t.tenantId);
        assert.ok(String(event.sg_message_id).startsWith(`${request!.messageId}.`));
      }
    }
    const columns = await Promise.all(all.map(({ pending }) => deliveryColumns(sql, pending.id)));
    assert.deepEqual(columns.map((c) => c.provider_message_id), Array(3).fill(request!.messageId));
  }));

Deno.test("the SendGrid adapter's answer to a batch: the X-Message-Id; a refusal to split; a refusal of the sender for all; a throttle with its Retry-After", async () => {
  await mail.clear();
  const settings = stack.notifications;
  const adapter = createSendGridAdapter({
    apiKey: settings.sendGridApiKey, fromEmail: settings.fromEmail, fromName: settings.fromName,
    baseUrl: stack.mailUrl, timeoutMs: 10_000, now: Date.now,
  });
  const batch: OutgoingBatch = {
    templateKey: "checkin_reminder",
    html: "<p>Hi `h0`</p>",
    text: "Hi `t0`",
    recipients: ["ana", "ben"].map((name) => ({
      notificationId: crypto.randomUUID(), tenantId: crypto.randomUUID(), to: `${name}@guest.example`, subject: `Welcome, ${name}`,
      substitutions: { "`h0`": name, "`t0`": name },
    })),
  };
  await mail.fates({ events: [] }, { events: [] });
  const accepted = await adapter.sendBatch(batch);
  assert.equal(accepted.outcome, "accepted");
  const [request] = await mail.requests();
  assert.equal(accepted.outcome === "accepted" && accepted.providerMessageId, request!.messageId);
  assert.deepEqual((await mail.messages()).map((m) => partsOf(m.body).text), ["Hi ana", "Hi ben"]);

  await mail.refuse("ben@guest.example");
  assert.deepEqual(await adapter.sendBatch(batch), {
    outcome: "refused", reason: "SendGrid answered 400: personalizations.1.to.0.email: Does not contain a valid address.",
  });
  await mail.clear();

  await mail.script({ status: 400, body: { errors: [{ message: "The from address does not match a verified Sender Identity.", field: "from", help: null }] } });
  assert.deepEqual(await adapter.sendBatch(batch), {
    outcome: "permanent", reason: "SendGrid answered 400: from: The from address does not match a verified Sender Identity.",
  });
  await mail.script({ status: 429, headers: { "retry-after": "7" } });
  const throttled = await adapter.sendBatch(batch);
  assert.deepEqual(throttled.outcome === "transient" && [throttled.retryAfterSeconds, /\b429\b/.test(throttled.reason)], [7, true]);
  await mail.clear();
});
