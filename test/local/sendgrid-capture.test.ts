// The SendGrid double speaks v3 Mail Send as the notification worker will see it.
import assert from "node:assert/strict";
import { mail as capture } from "../support/notifications.ts";
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
