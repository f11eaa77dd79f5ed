// The SendGrid double speaks v3 Mail Send as the notification worker will see it, and
// plays SendGrid's signed Event Webhook towards the api function.
import assert from "node:assert/strict";
import { withFixture } from "../support/api.ts";
import { checkedIn, drainQueue, mail as capture, readNotification, runWorker, sleep, summary } from "../support/notifications.ts";
import { stack } from "../support/stack.ts";

const mail = {
  personalizations: [{ to: [{ email: "guest@example.com" }] }],
  from: { email: "stay@example.com" },
  subject: "Your stay",
  content: [{ type: "text/plain", value: "Welcome" }],
  custom_args: { notificationId: "n-1" },
};

async function send(body: unknown, authorization = "Bearer SG.test"): Promise<Response> {
  return await fetch(`${stack.mailUrl}/v3/mail/send`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization },
    body: JSON.stringify(body),
  });
}

Deno.test("SendGrid capture: accepts, refuses and replays scripted failures", async (t) => {
  await capture.clear();

  await t.step("a valid mail is 202 with X-Message-Id and is recorded", async () => {
    const response = await send(mail);
    assert.equal(response.status, 202);
    assert.ok(response.headers.get("x-message-id"));
    const messages = await capture.messages();
    assert.equal(messages.length, 1);
    assert.deepEqual(messages[0]!.body.custom_args, { notificationId: "n-1" });
  });

  await t.step("no API key is 401, a mail without recipients is 400 with field errors", async () => {
    assert.equal((await send(mail, "")).status, 401);
    const response = await send({ ...mail, personalizations: [{ to: [] }] });
    assert.equal(response.status, 400);
    const { errors } = await response.json();
    assert.equal(errors[0].field, "personalizations.0.to");
  });

  await t.step("scripted answers come in order, then 202 again", async () => {
    assert.deepEqual(await capture.script({ status: 429, headers: { "retry-after": "2" } }, { status: 503 }), { pending: 2 });
    const throttled = await send(mail);
    assert.equal(throttled.status, 429);
    assert.equal(throttled.headers.get("retry-after"), "2");
    await throttled.body?.cancel();
    assert.equal((await send(mail)).status, 503);
    assert.equal((await send(mail)).status, 202);
    assert.deepEqual((await capture.requests()).map((attempt) => attempt.status), [202, 401, 400, 429, 503, 202]);
  });
});

Deno.test("SendGrid capture: after accepting a mail it posts SendGrid's events to the event webhook, signed, and posts again until it gets a 2xx", () =>
  withFixture(async ({ sql, tenant }) => {
    await drainQueue(sql);
    const t = await tenant("sg-capture-webhook");
    const { pending } = await checkedIn(t.ownerClient);

    // A mail about the pending notification, sent straight to the double: its events name
    // a notification whose acceptance the worker has not recorded, so the webhook answers
    // 503 until the worker has sent (and recorded) the notification's own mail.
    const fated = await capture.fates({ events: [{ event: "processed" }, { event: "open" }], delayMs: 0 });
    assert.deepEqual(fated, { pending: 1 });
    const direct = await send({ ...mail, custom_args: { notification_id: pending.id, tenant_id: t.tenantId } });
    const messageId = direct.headers.get("x-message-id")!;
    let first = (await capture.reports())[0];
    for (; !first || first.attempts.length === 0; first = (await capture.reports())[0]) await sleep(20);
    assert.equal(first.attempts[0]!.status, 503, "the webhook asks for the post again");
    const events = first.payload as Record<string, unknown>[];
    assert.deepEqual(events.map((event) => [event.event, event.email, event.notification_id, event.tenant_id]), [
      ["processed", "guest@example.com", pending.id, t.tenantId],
      ["open", "guest@example.com", pending.id, t.tenantId],
    ]);
    for (const event of events) {
      assert.match(String(event.sg_message_id), new RegExp(`^${messageId}\\.`));
      assert.match(String(event.sg_event_id), /^[A-Za-z0-9_-]{22}$/);
    }
    assert.notEqual(events[0]!.sg_event_id, events[1]!.sg_event_id);

    // The worker sends the notification's own mail (delivered, by default) and records it;
    // the double's next attempt of the first post is answered: about another message.
    assert.deepEqual(await runWorker(), summary({ read: 1, sent: 1 }));
    const posts = await capture.reportsDone(2);
    const statuses = posts[0]!.attempts.map((attempt) => attempt.status);
    assert.equal(statuses[0], 503);
    assert.equal(statuses.at(-1), 200, `posted again until answered: ${statuses}`);
    assert.deepEqual(posts[1]!.attempts.map((attempt) => attempt.status), [200], "the worker's mail's events, taken at once");
    assert.deepEqual((await readNotification(t.ownerClient, pending.id)).events.map((event) => event.event), ["delivered", "processed"]);
  }));

Deno.test("SendGrid capture: fates are checked as they are queued, and a cleared capture posts nothing more", async () => {
  await capture.clear();
  for (const fates of [[{}], [{ events: "delivered" }], [{ events: [], post: "sideways" }], [{ events: [], delayMs: 0.5 }]]) {
    const response = await fetch(`${stack.mailUrl}/_capture/fates`, { method: "POST", body: JSON.stringify({ fates }) });
    assert.equal(response.status, 400, JSON.stringify(fates));
    await response.body?.cancel();
  }
  await capture.fates({ events: [{ event: "processed" }], delayMs: 500 });
  assert.equal((await send(mail)).status, 202);
  assert.equal(await capture.pendingReports(), 1, "its events are yet to come");
  await capture.clear();
  assert.equal(await capture.pendingReports(), 0);
  await sleep(700);
  assert.deepEqual(await capture.reports(), [], "nothing was posted after the clear");
});

Deno.test("SendGrid capture: a default fate stands for every mail no queued fate is left for; no events, no post", async () => {
  await capture.clear();
  assert.deepEqual(await capture.fates(), { pending: 0 });
  const quiet = await fetch(`${stack.mailUrl}/_capture/fates`, { method: "POST", body: JSON.stringify({ default: { events: [] } }) });
  assert.deepEqual(await quiet.json(), { pending: 0 });
  await capture.fates({ events: [{ event: "processed" }], delayMs: 0 });
  for (let i = 0; i < 3; i++) assert.equal((await send(mail)).status, 202);
  while ((await capture.pendingReports()) > 0) await sleep(20);
  assert.deepEqual((await capture.reports()).map((post) => (post.payload as { event: string }[]).map((e) => e.event)), [["processed"]],
    "the queued fate's one post, then nothing");
  await capture.clear();
  assert.equal((await send(mail)).status, 202);
  assert.equal(await capture.pendingReports(), 1, "a clear restores the double's own default");
  await capture.clear();
});
