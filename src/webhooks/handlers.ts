// The providers' delivery reports: SendGrid's Event Webhook and the SMS provider's status
// callbacks, posted to the api function with no session and no tenant. A post is
// authenticated by its signature alone, checked over the bytes as they came before
// anything of it is read; one that does not verify is a 401 and changes nothing. Then
// its events are read (src/webhooks/sendgrid.ts, sms.ts) and recorded as the webhooks'
// own role, provider_webhook, through private.record_delivery_events, which finds each
// event's notification and writes in that notification's tenant (docs/security.md).
//
// What a provider is answered, and why: it sends a post again on any answer but a 2xx
// (SendGrid for 24 hours). So:
//   200  the post was read, whatever its events were: recorded, already recorded
//        (duplicates), about no message this service tracks (unmatched), or unreadable
//        (ignored). Sending those again could never change them, so they are not refused;
//        the counts are in the answer and the unmatched and ignored ones are logged.
//   503  (report-too-early) an event names a notification whose acceptance the worker
//        has not recorded yet: the rest was recorded, and the post comes again, when the
//        event will match (what was recorded counts once).
//   401  (invalid-signature) the signature is missing or wrong, or SendGrid's timestamp
//        is outside the tolerance: nothing was read.
//   4xx  otherwise as for any route: a body too large (413), not of the provider's media
//        type (415), not what the provider sends (400).
import type { Kysely } from "kysely";
import { z } from "zod";
import type { DB } from "../db/database.ts";
import type { Endpoint } from "../http/endpoint.ts";
import { fieldErrors, json, readBytes } from "../http/json.ts";
import { HttpError } from "../http/problem.ts";
import type { Logger } from "../logging/logger.ts";
import type { DeliveryEvent, Reading } from "./events.ts";
import { type Provider, recordDeliveryEvents } from "./record.ts";
import { readSendGridEvent } from "./sendgrid.ts";
import {
  deliveryReportReceipt,
  sendGridEventBatch,
  smsCallbackQuery,
  smsStatusCallback,
} from "./schema.ts";
import {
  importSendGridVerificationKey,
  importTwilioAuthToken,
  verifySendGridSignature,
  verifyTwilioSignature,
} from "./signatures.ts";
import { readSmsCallback } from "./sms.ts";

export type WebhookSettings = {
  // SendGrid's verification key for its signed Event Webhook, base64 (the key's
  // SubjectPublicKeyInfo, as SendGrid shows it). Unset: every SendGrid post is refused.
  sendGridVerificationKey: string | null;
  // How far SendGrid's timestamp may be from now, either way.
  sendGridToleranceSeconds: number;
  // The SMS account whose auth token signs its callbacks. Unset: every callback is refused.
  smsAccountSid: string | null;
  smsAuthToken: string | null;
  // The api function's URL as the providers call it, without a trailing slash
  // (`${SUPABASE_URL}/functions/v1/api`, or API_PUBLIC_URL): the SMS provider signs the
  // URL it called, which the function cannot see behind the gateway.
  publicUrl: string;
};

export type WebhookDependencies = {
  db: Kysely<DB>;
  settings: WebhookSettings;
  // Milliseconds.
  now: () => number;
  logger: Logger;
};

const tag = "Webhooks";

export const SENDGRID_PATH = "/v1/webhooks/sendgrid";
export const SMS_PATH = "/v1/webhooks/sms";
// A busy account's SendGrid batch is far larger than any request of the API's own.
export const MAX_SENDGRID_BODY_BYTES = 1024 * 1024;
export const MAX_SMS_BODY_BYTES = 64 * 1024;
const TOO_EARLY_RETRY_SECONDS = "10";

function invalidSignature(detail: string): HttpError {
  return new HttpError("invalid-signature", detail, { headers: { "www-authenticate": 'Signature realm="pms-webhooks"' } });
}

function mediaType(request: Request): string | undefined {
  return request.headers.get("content-type")?.split(";")[0]?.trim().toLowerCase();
}

const errorDescriptions = {
  400: "The post verified, but is not what the provider sends: nothing was recorded.",
  401: "The signature is missing or does not verify (for SendGrid, or its timestamp is more than 300 s from now): nothing was recorded.",
  503: "An event names a notification whose acceptance the worker has not recorded yet (report-too-early; the rest was " +
    "recorded and the provider sends the post again), or the database cannot be reached.",
};

export function webhookEndpoints(deps: WebhookDependencies): Endpoint[] {
  const { settings, logger } = deps;
  // Imported on first use: the OpenAPI document is built without any of this.
  let sendGridKey: Promise<CryptoKey | null> | undefined;
  let smsKey: Promise<CryptoKey | null> | undefined;
  const keyOf = (what: string, value: string | null, load: (value: string) => Promise<CryptoKey>) =>
    value ? load(value).catch((error) => {
      logger.error(`the ${what} setting is not a usable key; every post is refused`, { error: String(error) });
      return null;
    }) : Promise.resolve(null);

  // Records what was read and answers the provider.
  const settle = async (provider: Provider, readings: Reading[]): Promise<Response> => {
    const events: DeliveryEvent[] = [];
    let unmatched = 0;
    let ignored = 0;
    for (const reading of readings) {
      if (reading.kind === "event") events.push(reading.event);
      else if (reading.kind === "unmatched") unmatched++;
      else ignored++;
    }
    const counts = await recordDeliveryEvents(deps.db, provider, events);
    unmatched += counts.unmatched;
    if (unmatched + ignored > 0) {
      const why = readings.flatMap((reading) => reading.kind === "event" ? [] : [`${reading.kind}: ${reading.why}`]);
      logger.warn("delivery reports not about a message this service tracks were not recorded", {
        provider, unmatched, ignored, why: [...new Set(why)],
      });
    }
    if (counts.early > 0) {
      throw new HttpError("report-too-early",
        `${counts.early} of ${readings.length} events name a notification whose acceptance by the provider is not recorded yet; ` +
          `${counts.recorded} were recorded now and ${counts.duplicate} before. Send the post again.`,
        { headers: { "retry-after": TOO_EARLY_RETRY_SECONDS } });
    }
    return json(200, {
      received: readings.length, recorded: counts.recorded, duplicates: counts.duplicate, unmatched, ignored,
    } satisfies z.output<typeof deliveryReportReceipt>);
  };

  const sendGrid: Endpoint = {
    method: "POST", path: SENDGRID_PATH, operationId: "receiveSendGridEvents", tag, access: "webhook",
    signature: "sendGridSignature",
    summary: "SendGrid's Event Webhook: what became of each mail after SendGrid accepted it, verified by its signature.",
    description: "Configure it in SendGrid (Settings, Mail Settings, Event Webhook) with this URL and Signed Event Webhook on, " +
      "and give the function its verification key (SENDGRID_WEBHOOK_VERIFICATION_KEY). Each event is matched to its " +
      "notification by the notification_id and tenant_id custom args and the sg_message_id its send was answered with; " +
      "each is recorded once however often it comes, and the notification's deliveryState follows from all of them in any " +
      "order. A hard bounce, a drop for an invalid or bouncing address and a spam report mark the guest's address " +
      "undeliverable. An event the service cannot read is ignored, not refused, so that the rest of the batch is recorded.",
    headers: [{
      name: "X-Twilio-Email-Event-Webhook-Timestamp", required: true, schema: { type: "string", pattern: "^[0-9]{1,12}$" },
      description: "When SendGrid signed the post, in Unix seconds; the signature covers it, and more than 300 s from now is refused.",
    }],
    body: sendGridEventBatch,
    success: [{ status: 200, description: "Read; the counts say what became of each event.", schema: deliveryReportReceipt }],
    problems: ["malformed-json", "payload-too-large", "unsupported-media-type", "report-too-early"],
    errorDescriptions,
    handle: async (request) => {
      const body = await readBytes(request, MAX_SENDGRID_BODY_BYTES);
      sendGridKey ??= keyOf("SENDGRID_WEBHOOK_VERIFICATION_KEY", settings.sendGridVerificationKey, importSendGridVerificationKey);
      const key = await sendGridKey;
      if (!key) throw invalidSignature("This service has no SendGrid verification key set, so it accepts no SendGrid post.");
      const verdict = await verifySendGridSignature(key, {
        signature: request.headers.get("x-twilio-email-event-webhook-signature"),
        timestamp: request.headers.get("x-twilio-email-event-webhook-timestamp"),
        body,
      }, { nowMs: deps.now(), toleranceSeconds: settings.sendGridToleranceSeconds });
      if (!verdict.ok) throw invalidSignature(verdict.why);

      if (new URL(request.url).searchParams.size > 0) throw new HttpError("validation", "This route takes no query parameters.");
      if (mediaType(request) !== "application/json") throw new HttpError("unsupported-media-type", "SendGrid posts application/json.");
      let value: unknown;
      try {
        value = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(body));
      } catch {
        throw new HttpError("malformed-json", "The body is not JSON.");
      }
      const batch = z.array(z.record(z.string(), z.unknown())).safeParse(value);
      if (!batch.success) {
        throw new HttpError("validation", "SendGrid posts a JSON array of event objects.", { errors: fieldErrors(batch.error) });
      }
      return await settle("sendgrid", batch.data.map(readSendGridEvent));
    },
  };

  const sms: Endpoint = {
    method: "POST", path: SMS_PATH, operationId: "receiveSmsStatus", tag, access: "webhook", signature: "smsSignature",
    summary: "The SMS provider's status callback (Twilio's StatusCallback): what became of a text message, verified by its signature.",
    description: "The worker gives the provider this URL with each message, naming its notification; the provider signs the URL " +
      "it calls and the form it posts with the account's auth token (SMS_AUTH_TOKEN). delivered, undelivered and failed " +
      "become the notification's deliveryState, with the provider's ErrorCode; the other statuses are recorded as events. A " +
      "status reported twice is recorded once.",
    query: smsCallbackQuery,
    body: smsStatusCallback,
    bodyMediaType: "application/x-www-form-urlencoded",
    success: [{ status: 200, description: "Read; the counts say what became of the callback.", schema: deliveryReportReceipt }],
    problems: ["payload-too-large", "unsupported-media-type", "report-too-early"],
    errorDescriptions,
    handle: async (request) => {
      const body = await readBytes(request, MAX_SMS_BODY_BYTES);
      smsKey ??= keyOf("SMS_AUTH_TOKEN", settings.smsAuthToken, importTwilioAuthToken);
      const key = await smsKey;
      if (!key) throw invalidSignature("This service has no SMS auth token set, so it accepts no SMS status callback.");
      const form = mediaType(request) === "application/x-www-form-urlencoded";
      const params = form ? [...new URLSearchParams(new TextDecoder().decode(body))] : [];
      const url = new URL(request.url);
      // The URL as the provider called it: the public URL, this route, the query as sent.
      const called = `${settings.publicUrl}${SMS_PATH}${url.search}`;
      const verdict = await verifyTwilioSignature(key, request.headers.get("x-twilio-signature"), called, params);
      if (!verdict.ok) throw invalidSignature(verdict.why);

      if (!form) throw new HttpError("unsupported-media-type", "The SMS provider posts application/x-www-form-urlencoded.");
      const target = smsCallbackQuery.safeParse(Object.fromEntries(url.searchParams));
      if (!target.success) {
        throw new HttpError("validation", "The callback's URL does not name a notification.", { errors: fieldErrors(target.error, "(query)") });
      }
      const callback = smsStatusCallback.safeParse(Object.fromEntries(params));
      if (!callback.success) {
        throw new HttpError("validation", "The callback is not a status callback.", { errors: fieldErrors(callback.error) });
      }
      if (callback.data.AccountSid !== settings.smsAccountSid) {
        throw new HttpError("validation", "The callback is of another account than this service's.", {
          errors: [{ path: "AccountSid", message: "Not this service's account." }],
        });
      }
      return await settle("sms", [readSmsCallback(target.data, callback.data, new Date(deps.now()).toISOString())]);
    },
  };

  return [sendGrid, sms];
}
