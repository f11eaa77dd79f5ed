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

// Three recipients in one request, each with a subject, values and custom args of their own.
function batch(count = 3) {
  return {
    from: { email: "stay@example.com" },
    content: [
      { type: "text/plain", value: "Hi [t0], welcome to [t1]." },
      { type: "text/html", value: "<p>Hi [h0], welcome to [h1].</p>" },
    ],
    categories: ["checkin_reminder"],
    custom_args: { source: "test" },
    personalizations: Array.from({ length: count }, (_, i) => ({
      to: [{ email: `guest${i}@example.com` }],
      subject: `Welcome, guest ${i}`,
      substitutions: { "[t0]": `Guest ${i} & co`, "[h0]": `Guest ${i} &amp; co`, "[t1]": "Casa", "[h1]": "Casa" } as Record<string, string>,
      custom_args: { notification_id: `n-${i}` },
    })),
  };
}

async function refusal(response: Response): Promise<{ message: string; field: string | null; help: string | null }[]> {
  assert.equal(response.status, 400);
  const { errors } = await response.json();
  assert.ok(Array.isArray(errors) && errors.length > 0);
  for (const error of errors) assert.deepEqual(Object.keys(error).sort(), ["field", "help", "message"], "SendGrid's error shape");
  return errors;
}

Deno.test("SendGrid capture: a request's personalizations are a mail each, as its recipient gets it, under the request's X-Message-Id", async () => {
  await capture.clear();
  const response = await send(batch());
  assert.equal(response.status, 202);
  const messageId = response.headers.get("x-message-id");
  assert.ok(messageId);

  assert.equal((await capture.requests()).length, 1, "one request");
  const mails = await capture.messages();
  assert.deepEqual(mails.map((m) => [m.messageId, m.personalization]), [[messageId, 0], [messageId, 1], [messageId, 2]]);
  mails.forEach((m, i) => {
    assert.deepEqual(m.body.personalizations, [{ to: [{ email: `guest${i}@example.com` }] }]);
    assert.equal(m.body.subject, `Welcome, guest ${i}`);
    assert.deepEqual(m.body.content, [
      { type: "text/plain", value: `Hi Guest ${i} & co, welcome to Casa.` },
      { type: "text/html", value: `<p>Hi Guest ${i} &amp; co, welcome to Casa.</p>` },
    ]);
    assert.deepEqual(m.body.custom_args, { source: "test", notification_id: `n-${i}` }, "the message's custom args under its own");
    assert.deepEqual(m.body.categories, ["checkin_reminder"]);
  });
});

Deno.test("SendGrid capture: substitutions reach the subject, and what a substitution put in is substituted again", async () => {
  await capture.clear();
  const body = batch(1);
  body.personalizations[0]!.subject = "Welcome to [t1]";
  body.personalizations[0]!.substitutions["[t0]"] = "[t1] regular";
  assert.equal((await send(body)).status, 202);
  const [sent] = await capture.messages();
  assert.equal(sent!.body.subject, "Welcome to Casa");
  assert.equal(sent!.body.content[0]!.value, "Hi Casa regular, welcome to Casa.");
});

Deno.test("SendGrid capture: a request past SendGrid's limits is refused whole, with SendGrid's error shape naming the field", async () => {
  await capture.clear();
  const fields = async (body: unknown) => (await refusal(await send(body))).map((error) => error.field);

  assert.deepEqual(await fields(batch(1001)), ["personalizations"], "more than 1,000 personalizations");
  const noTo = batch(2);
  (noTo.personalizations[1] as { to?: unknown }).to = undefined;
  assert.deepEqual(await fields(noTo), ["personalizations.1.to"], "a personalization without a to");
  const twice = batch(3);
  twice.personalizations[2]!.to = [{ email: "GUEST0@example.com" }];
  assert.deepEqual(await fields(twice), ["personalizations.2.to.0.email"], "an address twice, whatever its case");
  const many = batch(2);
  many.personalizations[0]!.substitutions = Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`[k${i}]`, "v"]));
  assert.deepEqual(await fields(many), ["personalizations.0.substitutions"], "more than 100 substitutions");
  const large = batch(2);
  large.personalizations[1]!.substitutions["[t0]"] = "é".repeat(5000);
  assert.deepEqual(await fields(large), ["personalizations.1.substitutions"], "more than 10,000 bytes of substitutions");
  const args = batch(2);
  args.personalizations[0]!.custom_args = { notification_id: "x".repeat(10_000) };
  assert.deepEqual(await fields(args), ["personalizations.0.custom_args"], "10,000 bytes of custom args");
  const noSubject = batch(2);
  (noSubject.personalizations[1] as { subject?: string }).subject = undefined;
  assert.deepEqual(await fields(noSubject), ["subject"], "a personalization with no subject, and none for the message");

  assert.deepEqual((await capture.requests()).map((attempt) => attempt.status), Array(7).fill(400));
  assert.deepEqual(await capture.messages(), [], "nothing of a refused request is a mail");
  // A thousand mails with no events to post about them.
  const quiet = await fetch(`${stack.mailUrl}/_capture/fates`, { method: "POST", body: JSON.stringify({ default: { events: [] } }) });
  assert.equal(quiet.status, 200, await quiet.text());
  assert.equal((await send(batch(1000))).status, 202, "1,000 personalizations are taken");
  assert.equal((await capture.messages()).length, 1000);
  await capture.clear();
});

Deno.test("SendGrid capture: told to refuse an address, it refuses every request naming it with SendGrid's 400, until cleared", async () => {
  await capture.clear();
  await capture.refuse("Guest1@example.com");
  const errors = await refusal(await send(batch(3)));
  assert.deepEqual(errors, [{ field: "personalizations.1.to.0.email", message: "Does not contain a valid address.", help: null }]);
  const alone = batch(1);
  alone.personalizations[0]!.to = [{ email: "guest1@example.com" }];
  assert.equal((await refusal(await send(alone)))[0]!.field, "personalizations.0.to.0.email", "alone, too");
  assert.equal((await send(batch(1))).status, 202, "a request without it is taken");
  await capture.clear();
  assert.equal((await send(batch(3))).status, 202, "cleared: taken again");
  await capture.clear();
});

Deno.test("SendGrid capture: each personalization's events carry its custom args and an sg_message_id of the request's X-Message-Id and its own suffix", async () => {
  await capture.clear();
  await capture.fates({ events: [{ event: "processed" }], delayMs: 0 }, { events: [{ event: "processed" }, { event: "delivered" }], delayMs: 0 });
  const response = await send(batch(3));
  const messageId = response.headers.get("x-message-id")!;
  const posts = await capture.reportsDone(3);
  const events = posts.flatMap((post) => post.payload as Record<string, unknown>[]);
  assert.deepEqual(events.map((event) => [event.email, event.event, event.notification_id, event.source]).sort(), [
    ["guest0@example.com", "processed", "n-0", "test"],
    ["guest1@example.com", "delivered", "n-1", "test"],
    ["guest1@example.com", "processed", "n-1", "test"],
    ["guest2@example.com", "delivered", "n-2", "test"],
    ["guest2@example.com", "processed", "n-2", "test"],
  ], "the queued fates, then the default, a personalization each");
  const ids = new Map(events.map((event) => [event.email, String(event.sg_message_id)]));
  for (const id of ids.values()) assert.ok(id.startsWith(`${messageId}.`), id);
  assert.equal(new Set(ids.values()).size, 3, "a message id of its own for each mail");
  await capture.clear();
});
