// The SMS provider double speaks Twilio's Messages API as the notification worker's
// SMS adapter will see it: a form under Basic auth, 201 and the message resource, or
// Twilio's error shape; and posts Twilio's signed status callbacks to the api function.
import assert from "node:assert/strict";
import { withFixture } from "../support/api.ts";
import { createGuest } from "../support/domain.ts";
import { drainQueue, sleep, sms } from "../support/notifications.ts";
import { stack } from "../support/stack.ts";
import { smsCallbackUrl } from "../support/webhooks.ts";

const { accountSid, authToken, fromNumber } = stack.notifications.sms;
const basic = (user: string, password: string) => `Basic ${btoa(`${user}:${password}`)}`;
const messagesUrl = (sid = accountSid) => `${stack.smsUrl}/2010-04-01/Accounts/${sid}/Messages.json`;

const message = { To: "+351912345678", From: fromNumber, Body: "Your door code is 482913" };

async function send(
  form: Record<string, string>,
  options: { authorization?: string; sid?: string } = {},
): Promise<{ status: number; headers: Headers; body: Record<string, unknown> }> {
  const headers: Record<string, string> = { "content-type": "application/x-www-form-urlencoded" };
  const authorization = options.authorization ?? basic(accountSid, authToken);
  if (authorization) headers.authorization = authorization;
  const response = await fetch(messagesUrl(options.sid), { method: "POST", headers, body: new URLSearchParams(form) });
  return { status: response.status, headers: response.headers, body: await response.json() };
}

function twilioError(body: Record<string, unknown>, status: number, code: number) {
  assert.deepEqual(body, { code, message: body.message, more_info: `https://www.twilio.com/docs/errors/${code}`, status });
  assert.equal(typeof body.message, "string");
}

Deno.test("SMS capture: accepts, refuses and replays scripted failures", async (t) => {
  await sms.clear();

  await t.step("a valid message is 201 with the message resource and is recorded", async () => {
    const response = await send(message);
    assert.equal(response.status, 201);
    assert.equal(response.headers.get("content-type"), "application/json");
    const sid = response.body.sid as string;
    assert.match(sid, /^SM[0-9a-f]{32}$/);
    assert.deepEqual(
      { ...response.body, date_created: "", date_updated: "" },
      {
        sid,
        account_sid: accountSid,
        to: message.To,
        from: message.From,
        body: message.Body,
        status: "queued",
        direction: "outbound-api",
        num_segments: "1",
        num_media: "0",
        price: null,
        price_unit: "USD",
        error_code: null,
        error_message: null,
        api_version: "2010-04-01",
        date_created: "",
        date_updated: "",
        date_sent: null,
        uri: `/2010-04-01/Accounts/${accountSid}/Messages/${sid}.json`,
      },
    );
    const messages = await sms.messages();
    assert.equal(messages.length, 1);
    assert.deepEqual(messages[0], { ...messages[0], status: 201, sid, accountSid, params: message });
  });

  await t.step("a long or non-GSM body counts its segments", async () => {
    assert.equal((await send({ ...message, Body: "a".repeat(161) })).body.num_segments, "2");
    assert.equal((await send({ ...message, Body: "Olá, 🙂" })).body.num_segments, "1");
    assert.equal((await send({ ...message, Body: "🙂".repeat(71) })).body.num_segments, "2");
  });

  await t.step("no credentials, a wrong token or another account's path is 401 with Twilio's 20003", async () => {
    for (const [label, options] of [
      ["no Authorization", { authorization: "" }],
      ["a wrong token", { authorization: basic(accountSid, "wrong") }],
      ["a Bearer token", { authorization: `Bearer ${authToken}` }],
      ["another account in the path", { sid: "AC00000000000000000000000000000002" }],
    ] as const) {
      const response = await send(message, options);
      assert.equal(response.status, 401, label);
      twilioError(response.body, 401, 20003);
    }
  });

  await t.step("a message Twilio would refuse is 400 with its error code", async () => {
    const cases: [Record<string, string>, number][] = [
      [{ From: message.From, Body: message.Body }, 21604],
      [{ To: message.To, Body: message.Body }, 21603],
      [{ To: message.To, From: message.From }, 21602],
      [{ ...message, To: "912345678" }, 21211],
      [{ ...message, To: "+0123" }, 21211],
      [{ ...message, From: "+15005550001" }, 21606],
      [{ ...message, Body: "x".repeat(1601) }, 21617],
    ];
    for (const [form, code] of cases) {
      const response = await send(form);
      assert.equal(response.status, 400, JSON.stringify(form));
      twilioError(response.body, 400, code);
    }
    assert.equal((await send({ ...message, Body: "x".repeat(1600) })).status, 201, "1600 characters is the limit");
  });

  await t.step("scripted answers come in order, then 201 again", async () => {
    await sms.clear();
    const script = await sms.script(
      { status: 429, headers: { "retry-after": "2" } },
      { status: 503 },
      { status: 400, body: { code: 21610, message: "Attempt to send to unsubscribed recipient", status: 400 } },
    );
    assert.deepEqual(script, { pending: 3 });
    const throttled = await send(message);
    assert.equal(throttled.status, 429);
    assert.equal(throttled.headers.get("retry-after"), "2");
    twilioError(throttled.body, 429, 20429);
    const unavailable = await send(message);
    assert.equal(unavailable.status, 503);
    twilioError(unavailable.body, 503, 20500);
    const refused = await send(message);
    assert.deepEqual([refused.status, refused.body], [400, { code: 21610, message: "Attempt to send to unsubscribed recipient", status: 400 }]);
    assert.equal((await send(message)).status, 201);
    assert.deepEqual((await sms.requests()).map((attempt) => attempt.status), [429, 503, 400, 201]);
    assert.equal((await sms.messages()).length, 1);
  });

  await t.step("the credentials are checked before a script is used; a bad script is 400; DELETE forgets everything", async () => {
    await sms.script({ status: 500 });
    assert.equal((await send(message, { authorization: "" })).status, 401);
    assert.equal((await send(message)).status, 500, "the script was still there");
    const bad = await fetch(`${stack.smsUrl}/_capture/script`, { method: "POST", body: JSON.stringify({ responses: [{}] }) });
    assert.equal(bad.status, 400);
    await bad.body?.cancel();
    await sms.clear();
    assert.deepEqual(await sms.requests(), []);
    assert.deepEqual(await sms.messages(), []);
    const get = await fetch(messagesUrl());
    assert.equal(get.status, 405);
    await get.body?.cancel();
  });
});

Deno.test("SMS capture: a message with a StatusCallback gets Twilio's signed status callbacks there, tried again after a 5xx, not after a 4xx", () =>
  withFixture(async ({ sql, tenant }) => {
    await drainQueue(sql);
    const t = await tenant("sms-capture-callbacks");
    const guest = await createGuest(t.ownerClient, { phone: "+351912345678" });
    const [row] = await sql<{ id: string }[]>`
      insert into public.notifications (tenant_id, recipient_id, recipient_type, template_key, channel)
      values (${t.tenantId}, ${guest.id}, 'guest', 'checkin_reminder', 'sms') returning id`;
    const url = smsCallbackUrl(t.tenantId, row!.id);

    // The notification is pending, its message not recorded: the webhook answers 503
    // until the row names the message; then the callback is taken.
    await sms.fates({ events: [{ status: "delivered" }], delayMs: 0 });
    const created = await send({ ...message, StatusCallback: url });
    assert.equal(created.status, 201);
    let first = (await sms.reports())[0];
    for (; !first || first.attempts.length === 0; first = (await sms.reports())[0]) await sleep(20);
    assert.equal(first.attempts[0]!.status, 503);
    assert.deepEqual(first.payload, {
      AccountSid: accountSid, ApiVersion: "2010-04-01", From: fromNumber, To: message.To, MessageSid: created.body.sid,
      SmsSid: created.body.sid, MessageStatus: "delivered", SmsStatus: "delivered", RawDlrDoneDate: (first.payload as Record<string, string>).RawDlrDoneDate,
    });
    assert.match((first.payload as Record<string, string>).RawDlrDoneDate!, /^[0-9]{10}$/);
    await sql`update public.notifications set status = 'sent', sent_at = now(), provider_message_id = ${created.body.sid as string}
              where id = ${row!.id}`;
    const [done] = await sms.reportsDone(1);
    assert.deepEqual(done!.attempts.map((attempt) => attempt.status).slice(-1), [200]);
    assert.ok(done!.attempts.length >= 2 && done!.attempts.slice(0, -1).every((attempt) => attempt.status === 503));

    // A callback URL that names no notification verifies but is refused (400): not tried again.
    await sms.clear();
    await sms.fates({ events: [{ status: "failed", errorCode: "30008" }], delayMs: 0 });
    await send({ ...message, StatusCallback: `${stack.apiUrl}/functions/v1/api/v1/webhooks/sms?tenantId=${t.tenantId}` });
    const [refused] = await sms.reportsDone(1);
    assert.deepEqual(refused!.attempts.map((attempt) => attempt.status), [400]);
    assert.equal((refused!.payload as Record<string, string>).ErrorCode, "30008");
  }));
