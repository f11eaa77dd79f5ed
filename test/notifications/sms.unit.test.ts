// The SMS adapter on its own, through the fetch it is given: the request Twilio's
// Messages API expects, what each answer means, and the settings that disable it.
// sms.test.ts delivers through the stack's SMS capture server.
import assert from "node:assert/strict";
import { createSmsAdapter, type SmsSettings } from "../../src/notifications/sms.ts";
import type { OutgoingMessage } from "../../src/notifications/delivery.ts";

const message: OutgoingMessage = {
  notificationId: "6f1f0c2e-8a51-4d0e-9b1a-1d2c3b4a5f60",
  tenantId: "0d3c2b1a-5f60-4e7d-8c9b-a1b2c3d4e5f6",
  templateKey: "checkin_reminder",
  to: "+351912345678",
  subject: "Welcome",
  html: "<p>Welcome</p>",
  text: "Welcome to Casa Azul.",
};

type Sent = { url: string; init: RequestInit | undefined };

function adapter(answer: () => Response | Promise<Response>, settings: Partial<SmsSettings> = {}) {
  const sent: Sent[] = [];
  const sms = createSmsAdapter({
    accountSid: "AC123",
    authToken: "token",
    fromNumber: "+15005550006",
    baseUrl: "https://sms.invalid/",
    statusCallbackUrl: "https://project.invalid/functions/v1/api/v1/webhooks/sms",
    timeoutMs: 1000,
    fetch: (input, init) => {
      sent.push({ url: String(input), init });
      return Promise.resolve(answer());
    },
    now: () => Date.parse("2026-11-22T09:30:00Z"),
    ...settings,
  });
  return { sms, sent };
}

Deno.test("a message is a form POST to the account's Messages resource with Basic auth; 201 is accepted with its sid", async () => {
  const { sms, sent } = adapter(() => Response.json({ sid: "SM42" }, { status: 201 }));
  assert.equal(sms.disabledReason, null);
  assert.deepEqual(await sms.send(message), { outcome: "accepted", providerMessageId: "SM42" });
  assert.equal(sent.length, 1);
  assert.equal(sent[0]!.url, "https://sms.invalid/2010-04-01/Accounts/AC123/Messages.json");
  const headers = new Headers(sent[0]!.init?.headers);
  assert.equal(headers.get("authorization"), `Basic ${btoa("AC123:token")}`);
  assert.equal(headers.get("content-type"), "application/x-www-form-urlencoded");
  assert.deepEqual(Object.fromEntries(sent[0]!.init?.body as URLSearchParams), {
    To: "+351912345678", From: "+15005550006", Body: "Welcome to Casa Azul.",
    StatusCallback: "https://project.invalid/functions/v1/api/v1/webhooks/sms" +
      "?tenantId=0d3c2b1a-5f60-4e7d-8c9b-a1b2c3d4e5f6&notificationId=6f1f0c2e-8a51-4d0e-9b1a-1d2c3b4a5f60",
  });
});

Deno.test("without a status callback URL the message asks for no callbacks", async () => {
  const { sms, sent } = adapter(() => Response.json({ sid: "SM42" }, { status: 201 }), { statusCallbackUrl: null });
  assert.deepEqual(await sms.send(message), { outcome: "accepted", providerMessageId: "SM42" });
  assert.deepEqual(Object.keys(Object.fromEntries(sent[0]!.init?.body as URLSearchParams)).sort(), ["Body", "From", "To"]);
});

Deno.test("429 with Retry-After and 5xx are transient; a refusal is permanent with the provider's message", async () => {
  const throttled = adapter(() => Response.json({ message: "Too many" }, { status: 429, headers: { "retry-after": "3" } }));
  assert.deepEqual(await throttled.sms.send(message), {
    outcome: "transient", reason: "the SMS provider answered 429: Too many", retryAfterSeconds: 3,
  });
  const down = adapter(() => new Response("oops", { status: 502, statusText: "Bad Gateway" }));
  assert.deepEqual(await down.sms.send(message), {
    outcome: "transient", reason: "the SMS provider answered 502: Bad Gateway", retryAfterSeconds: null,
  });
  const refused = adapter(() => Response.json({ code: 21211, message: "The 'To' number is not valid." }, { status: 400 }));
  assert.deepEqual(await refused.sms.send(message), {
    outcome: "permanent", reason: "the SMS provider answered 400: The 'To' number is not valid.",
  });
});

// With no connection made nothing was sent: worth trying again. With no answer once the
// request may have gone (a timeout, a broken connection) the provider may have the text:
// its outcome is unknown, and it is not sent again blindly.
Deno.test("no answer: transient when no connection was made, unknown when the request may have gone", async () => {
  const refused = await adapter(() => Promise.reject(new TypeError("error sending request: client error (Connect): tcp connect error: Connection refused (os error 111)"))).sms.send(message);
  assert.equal(refused.outcome, "transient");
  assert.match(refused.outcome === "transient" ? refused.reason : "", /^the SMS provider did not answer: TypeError: error sending request/);
  const timedOut = await adapter(() => Promise.reject(new DOMException("Signal timed out.", "TimeoutError"))).sms.send(message);
  assert.deepEqual(timedOut, { outcome: "unknown", reason: "the SMS provider did not answer: TimeoutError: Signal timed out." });
  const broken = await adapter(() => Promise.reject(new TypeError("error sending request: connection closed before message completed"))).sms.send(message);
  assert.equal(broken.outcome, "unknown");
});

Deno.test("no sending number, or missing credentials, disable SMS: it says why and sends nothing", async () => {
  const noNumber = adapter(() => assert.fail("nothing is sent"), { fromNumber: null });
  assert.equal(noNumber.sms.disabledReason, "sms is disabled: the sending number (SMS_FROM_NUMBER) is not set");
  assert.deepEqual(await noNumber.sms.send(message), { outcome: "permanent", reason: noNumber.sms.disabledReason });
  const noToken = adapter(() => assert.fail("nothing is sent"), { authToken: null });
  assert.equal(
    noToken.sms.disabledReason,
    "sms is disabled: the SMS provider's credentials (SMS_ACCOUNT_SID, SMS_AUTH_TOKEN) are not set",
  );
  assert.equal(noNumber.sent.length + noToken.sent.length, 0);
});
