// The providers' delivery reports for tests: posts to the api function's webhooks through
// the gateway, signed as the providers sign them (with node:crypto, as the doubles do,
// never with the code under test), or signed wrongly on purpose.
import { Buffer } from "node:buffer";
import { createHmac, sign } from "node:crypto";
import { expectProblem, expectStatus, type Schemas } from "./api.ts";
import { stack } from "./stack.ts";

export const SENDGRID_WEBHOOK = "/v1/webhooks/sendgrid";
export const SMS_WEBHOOK = "/v1/webhooks/sms";
export type Receipt = Schemas["DeliveryReportReceipt"];

// A response read in full, as test/support/api.ts's call() hands them back.
async function sent(url: string, init: RequestInit): Promise<Response> {
  const response = await fetch(url, init);
  const bytes = await response.arrayBuffer();
  return new Response(bytes.byteLength === 0 ? null : bytes, { status: response.status, headers: response.headers });
}

// ---------------------------------------------------------------- SendGrid

export const nowSeconds = () => Math.floor(Date.now() / 1000);

// SendGrid's signature: DER ECDSA P-256 over SHA-256 of the timestamp followed by the body, base64.
export function sendGridSignature(timestamp: string, body: string, privateKey = stack.sendGridWebhook.privateKey): string {
  return sign("sha256", Buffer.from(timestamp + body), { key: Buffer.from(privateKey, "base64"), format: "der", type: "pkcs8" })
    .toString("base64");
}

// A key pair SendGrid never gave this service: its private half, base64 PKCS#8.
export async function strangerKey(): Promise<string> {
  const pair = await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign", "verify"]);
  return Buffer.from(await crypto.subtle.exportKey("pkcs8", pair.privateKey)).toString("base64");
}

export type SendGridPost = {
  // The body as sent; by default the events as JSON.
  body?: string;
  // The timestamp header; null leaves it out.
  timestamp?: string | null;
  // The signature header; by default a good signature of timestamp and body, null leaves it out.
  signature?: string | null;
  contentType?: string;
  query?: string;
};

// POST /v1/webhooks/sendgrid with `events`, signed with the stack's key unless `post` says otherwise.
export function postSendGrid(events: unknown, post: SendGridPost = {}): Promise<Response> {
  const body = post.body ?? JSON.stringify(events);
  const timestamp = post.timestamp === undefined ? String(nowSeconds()) : post.timestamp;
  const signature = post.signature === undefined ? sendGridSignature(timestamp ?? "", body) : post.signature;
  const headers: Record<string, string> = { "content-type": post.contentType ?? "application/json" };
  if (timestamp !== null) headers["x-twilio-email-event-webhook-timestamp"] = timestamp;
  if (signature !== null) headers["x-twilio-email-event-webhook-signature"] = signature;
  return sent(`${stack.v1}/webhooks/sendgrid${post.query ?? ""}`, { method: "POST", headers, body });
}

export async function expectReceipt(response: Response, receipt: Partial<Receipt>, path = SENDGRID_WEBHOOK): Promise<Receipt> {
  const body = await expectStatus<Receipt>("POST", path, response, 200);
  return expectCounts(body, receipt);
}

function expectCounts(body: Receipt, receipt: Partial<Receipt>): Receipt {
  const expected = { received: 0, recorded: 0, duplicates: 0, unmatched: 0, ignored: 0, ...receipt };
  if (JSON.stringify(body) !== JSON.stringify(expected)) {
    throw new Error(`expected the receipt ${JSON.stringify(expected)}, got ${JSON.stringify(body)}`);
  }
  return body;
}

export function expectInvalidSignature(response: Response, path = SENDGRID_WEBHOOK) {
  return expectProblem("POST", path, response, 401, "invalid-signature");
}

// One event as SendGrid sends it about a mail: its custom args on top, the message id with
// SendGrid's suffix.
export function sendGridEvent(
  about: { notificationId: string; tenantId: string; messageId: string; email: string },
  fields: Record<string, unknown>,
): Record<string, unknown> {
  return {
    email: about.email,
    timestamp: nowSeconds(),
    "smtp-id": `<${about.messageId}@ismtpd-test>`,
    sg_event_id: crypto.randomUUID().replaceAll("-", "").slice(0, 22),
    sg_message_id: `${about.messageId}.filtertest-1-0`,
    notification_id: about.notificationId,
    tenant_id: about.tenantId,
    ...fields,
  };
}

// ---------------------------------------------------------------- the SMS provider

// The status callback URL of one notification, as the worker gives it to the provider.
export function smsCallbackUrl(tenantId: string, notificationId: string): string {
  return `${stack.apiUrl}/functions/v1/api/v1/webhooks/sms?${new URLSearchParams({ tenantId, notificationId })}`;
}

// Twilio's signature: base64 HMAC-SHA1 of the URL followed by each parameter's name and
// value, sorted by name, keyed with the auth token.
export function smsSignature(url: string, form: Record<string, string>, authToken = stack.notifications.sms.authToken): string {
  const text = url + Object.keys(form).sort().map((name) => name + form[name]).join("");
  return createHmac("sha1", authToken).update(text).digest("base64");
}

// A status callback of a message as the provider posts it.
export function smsCallbackForm(messageSid: string, status: string, extra: Record<string, string> = {}): Record<string, string> {
  const { accountSid, fromNumber } = stack.notifications.sms;
  return {
    AccountSid: accountSid, ApiVersion: "2010-04-01", From: fromNumber, To: "+351912345678",
    MessageSid: messageSid, SmsSid: messageSid, MessageStatus: status, SmsStatus: status, ...extra,
  };
}

export type SmsPost = {
  // The signature header; by default a good signature of `signedUrl` and the form, null leaves it out.
  signature?: string | null;
  // The URL the signature is computed over; by default the one posted to.
  signedUrl?: string;
  contentType?: string;
};

// POST the form to `url` (a callback URL through the gateway), signed with the stack's token unless `post` says otherwise.
export function postSmsCallback(url: string, form: Record<string, string>, post: SmsPost = {}): Promise<Response> {
  const signature = post.signature === undefined ? smsSignature(post.signedUrl ?? url, form) : post.signature;
  const headers: Record<string, string> = { "content-type": post.contentType ?? "application/x-www-form-urlencoded" };
  if (signature !== null) headers["x-twilio-signature"] = signature;
  return sent(url, { method: "POST", headers, body: new URLSearchParams(form).toString() });
}
