// The SendGrid adapter's settings on their own: an unset sender address or API key
// disables email, says why, and sends nothing, one email or a batch. Sending itself goes
// through SendGrid's own client over HTTP, so it is delivery.test.ts's, retries.test.ts's
// and batching.test.ts's, against the stack's SendGrid capture server.
import assert from "node:assert/strict";
import { createSendGridAdapter, type SendGridSettings } from "../../src/notifications/sendgrid.ts";

const settings: SendGridSettings = {
  apiKey: "SG.test",
  fromEmail: "stays@pms.test",
  fromName: "PMS",
  // Nothing listens here, and nothing below may try it.
  baseUrl: "http://127.0.0.1:9",
  timeoutMs: 1000,
  now: Date.now,
};

const message = {
  notificationId: "6f1f0c2e-8a51-4d0e-9b1a-1d2c3b4a5f60",
  tenantId: "0d3c2b1a-5f60-4e7d-8c9b-a1b2c3d4e5f6",
  templateKey: "checkin_reminder",
  to: "ana@guest.example",
  subject: "Welcome",
  html: "<p>Welcome</p>",
  text: "Welcome",
};

// Two emails of one template in one request (src/notifications/email-batch.ts).
const batch = {
  templateKey: "checkin_reminder",
  html: "<p>Welcome, `h0`</p>",
  text: "Welcome, `t0`",
  recipients: ["ana", "ben"].map((name) => ({
    notificationId: crypto.randomUUID(), tenantId: message.tenantId, to: `${name}@guest.example`, subject: "Welcome",
    substitutions: { "`h0`": name, "`t0`": name },
  })),
};

Deno.test("with a sender address and an API key, email is enabled", () => {
  assert.equal(createSendGridAdapter(settings).disabledReason, null);
  assert.equal(createSendGridAdapter({ ...settings, fromName: null }).disabledReason, null);
});

Deno.test("the sender address unset disables email, whatever else is set; sending is refused without a request", async () => {
  for (const fromEmail of [null, ""]) {
    const email = createSendGridAdapter({ ...settings, fromEmail });
    assert.equal(email.disabledReason, "email is disabled: the sender address (NOTIFICATIONS_FROM_EMAIL) is not set");
    assert.deepEqual(await email.send(message), { outcome: "permanent", reason: email.disabledReason });
    assert.deepEqual(await email.sendBatch(batch), { outcome: "permanent", reason: email.disabledReason });
  }
});

Deno.test("the API key unset disables email too, with its own reason", async () => {
  const email = createSendGridAdapter({ ...settings, apiKey: null });
  assert.equal(email.disabledReason, "email is disabled: the SendGrid API key (SENDGRID_API_KEY) is not set");
  assert.deepEqual(await email.send(message), { outcome: "permanent", reason: email.disabledReason });
  assert.deepEqual(await email.sendBatch(batch), { outcome: "permanent", reason: email.disabledReason });
});
