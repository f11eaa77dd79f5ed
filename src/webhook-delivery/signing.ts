// The signature of an outbound webhook, as the Standard Webhooks specification writes it:
// webhook-id, webhook-timestamp (whole seconds since 1970) and webhook-signature, each
// signature `v1,` and the base64 of HMAC-SHA256 over `{id}.{timestamp}.{body}`, keyed with
// the secret's bytes. The specification's own JavaScript library (standardwebhooks) makes
// each signature, so a receiver verifying with that library, or with any of its ports,
// agrees with us by construction; it runs under Deno as it is (it needs no node API).
import { Webhook } from "standardwebhooks";

export type WebhookSignatureHeaders = {
  "webhook-id": string;
  "webhook-timestamp": string;
  "webhook-signature": string;
};

// `whsec_` and the base64 of 32 bytes: what the database makes and keeps
// (webhook_subscriptions_secret_check).
const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;
// The id travels in a header and in the signed content, where a dot or a space would read
// ambiguously: visible ASCII without either.
const MESSAGE_ID = /^[\x21-\x2d\x2f-\x7e]{1,200}$/;

// The headers that sign `body` (the exact string sent) as the message `messageId`, sent at
// `timestamp`. `secrets` are the subscription's active ones, the current first, then the
// one a rotation replaced while its overlap lasts: the request carries a signature of each,
// space-separated, so a receiver still holding the old secret verifies it as well as one
// that has moved on. Throws on a malformed id or secret, or no secret at all: a caller's
// mistake, never the endpoint's.
export function signWebhook(
  messageId: string,
  timestamp: Date,
  body: string,
  secrets: readonly string[],
): WebhookSignatureHeaders {
  if (!MESSAGE_ID.test(messageId)) {
    throw new RangeError("a webhook id is 1 to 200 visible ASCII characters without a dot or a space");
  }
  const milliseconds = timestamp.getTime();
  if (!Number.isFinite(milliseconds)) throw new RangeError("the webhook timestamp is not a valid date");
  if (secrets.length === 0) throw new RangeError("a webhook is signed with at least one secret");
  if (!secrets.every((secret) => SECRET.test(secret))) {
    throw new RangeError("a webhook secret is whsec_ and the base64 of 32 bytes");
  }
  return {
    "webhook-id": messageId,
    // The library signs the same whole seconds it reads back from this header.
    "webhook-timestamp": String(Math.floor(milliseconds / 1000)),
    "webhook-signature": secrets.map((secret) => new Webhook(secret).sign(messageId, timestamp, body)).join(" "),
  };
}
