// What the providers post to the webhooks, and what the webhooks answer. The shapes are
// the providers' own (SendGrid's Event Webhook, Twilio's StatusCallback), described here
// for the OpenAPI document and read by src/webhooks/sendgrid.ts and src/webhooks/sms.ts.
import { z } from "zod";
import { id } from "../http/schemas.ts";

// SendGrid's event names and Twilio's message statuses: lower-case words.
export const EVENT_NAME = /^[a-z][a-z_]{0,39}$/;

export const sendGridEvent = z.looseObject({
  event: z.string().meta({
    description: "processed, deferred, delivered, bounce, dropped, spamreport, open, click, unsubscribe, group_unsubscribe, group_resubscribe.",
  }),
  timestamp: z.number().int().meta({ description: "When it happened, in Unix seconds." }),
  sg_event_id: z.string().meta({ description: "The event's own id: an event sent again is recorded once." }),
  sg_message_id: z.string().meta({ description: "The X-Message-Id the send answered, followed by a dot and SendGrid's suffix." }),
  notification_id: z.string().meta({ description: "A custom arg every mail carries: the notification it delivers." }),
  tenant_id: z.string().meta({ description: "A custom arg every mail carries: the notification's tenant." }),
  reason: z.string().meta({ description: "Why a mail bounced or was dropped." }),
  status: z.string().meta({ description: "A bounce's enhanced SMTP status, like 5.1.1." }),
  type: z.string().meta({ description: "A bounce's kind: bounce (the address refused the mail) or blocked (refused for another reason)." }),
  bounce_classification: z.string(),
  response: z.string().meta({ description: "The receiving server's answer to a delivery or a deferral." }),
  attempt: z.union([z.string(), z.number()]).meta({ description: "A deferral's attempt number." }),
}).partial().meta({
  id: "SendGridEvent",
  description: "One event of SendGrid's Event Webhook, with `email` (the recipient) and its other fields; custom args are " +
    "top-level fields. An event that lacks what recording " +
    "needs (event, timestamp, sg_event_id, sg_message_id and both custom args as strings) is ignored, not refused.",
});

export const sendGridEventBatch = z.array(sendGridEvent).meta({ id: "SendGridEventBatch" });

export const smsStatusCallback = z.looseObject({
  MessageSid: z.string().regex(/^[A-Z]{2}[0-9a-fA-F]{32}$/, "A message SID, like SM followed by 32 hex digits."),
  MessageStatus: z.string().regex(EVENT_NAME, "A message status, like delivered.")
    .meta({ description: "queued, sending, sent, delivered, undelivered, failed, and the provider's other statuses." }),
  AccountSid: z.string().regex(/^AC[0-9a-fA-F]{32}$/, "An account SID, AC followed by 32 hex digits."),
  ErrorCode: z.string().regex(/^[0-9]{1,10}$/, "The provider's error code, digits.").optional()
    .meta({ description: "Why an undelivered or failed message did not arrive, like 30003." }),
  ErrorMessage: z.string().max(2000).optional(),
  From: z.string().optional(),
  To: z.string().optional(),
}).meta({ id: "SmsStatusCallback", description: "The SMS provider's status callback (Twilio's StatusCallback), as a form." });

// The callback URL the worker gives the SMS provider with each message names its notification.
export const smsCallbackQuery = z.strictObject({
  tenantId: id.meta({ description: "The notification's tenant." }),
  notificationId: id.meta({ description: "The notification the message delivers." }),
});

export const deliveryReportReceipt = z.object({
  received: z.number().int().meta({ description: "Events in the request." }),
  recorded: z.number().int().meta({ description: "Events stored now." }),
  duplicates: z.number().int().meta({ description: "Events stored before (the provider sent them again): nothing changed." }),
  unmatched: z.number().int().meta({
    description: "Events about no message the service tracks (no such notification, or another message id than the one " +
      "its provider answered): not stored, and sending them again changes nothing.",
  }),
  ignored: z.number().int().meta({ description: "Events the service cannot read (a missing id or time): not stored." }),
}).meta({ id: "DeliveryReportReceipt" });
