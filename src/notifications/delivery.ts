// What a provider made of one message, in the terms the worker acts on.
export type Delivery =
  | { outcome: "accepted"; providerMessageId: string | null }
  // Not taken, and worth trying again: throttling, a provider's fault it answered with,
  // or a connection that was never made.
  | { outcome: "transient"; reason: string; retryAfterSeconds: number | null }
  // The provider refused this message; sending it again would be refused again.
  | { outcome: "permanent"; reason: string }
  // No answer once the request may have reached the provider (a timeout, a connection
  // that broke): it may have taken the message. Only its report can tell, so the message
  // is not sent again blindly.
  | { outcome: "unknown"; reason: string }
  // Not started: its turn came too late for the claim that holds it.
  | { outcome: "postponed"; reason: string };

// Whether a failure with no answer happened before anything reached the provider: only a
// connection that was never made (refused, or a name that did not resolve) is sure not to
// have sent the message.
export function failedBeforeSending(error: unknown): boolean {
  const parts = [error instanceof Error ? error.message : String(error), (error as { code?: unknown } | null)?.code ?? ""];
  const cause = (error as { cause?: unknown } | null)?.cause;
  if (cause instanceof Error) parts.push(cause.message);
  return /ECONNREFUSED|ENOTFOUND|EAI_AGAIN|Connection refused|dns error|failed to lookup address|tcp connect error|\(Connect\)/i
    .test(parts.join(" "));
}

// A send that ended without an answer: tried again later when nothing can have been sent,
// else of unknown outcome.
export function withoutAnswer(reason: string, error: unknown): Delivery {
  return failedBeforeSending(error) ? { outcome: "transient", reason, retryAfterSeconds: null } : { outcome: "unknown", reason };
}

export type OutgoingMessage = {
  notificationId: string;
  tenantId: string;
  templateKey: string;
  to: string;
  subject: string;
  html: string;
  text: string;
};

// When a send must have started by (milliseconds, the worker's clock): a send that waits
// longer for its turn is not made, and says so (postponed).
export type SendOptions = { startBy?: number };

export type ChannelAdapter = {
  // Null when the adapter can send; otherwise why it is disabled (the warning logged).
  disabledReason: string | null;
  send(message: OutgoingMessage, options?: SendOptions): Promise<Delivery>;
};

// One email of a batch: its own recipient, subject, values and notification; the batch's
// body is shared (src/notifications/personalize.ts).
export type BatchRecipient = {
  notificationId: string;
  tenantId: string;
  to: string;
  subject: string;
  // Token -> this recipient's value, replaced by the provider in the shared body.
  substitutions: Readonly<Record<string, string>>;
};

// Many emails of one template in one request: one body with tokens, a personalization each.
export type OutgoingBatch = {
  templateKey: string;
  html: string;
  text: string;
  recipients: readonly BatchRecipient[];
};

// What the provider made of a batch: one outcome for all of its emails, or a refusal of the
// request that may lie with some of them only (one address it will not take), which the
// sender finds by splitting the batch (src/notifications/email-batch.ts).
export type BatchDelivery = Delivery | { outcome: "refused"; reason: string };

// The email channel: one message at a time, or many of a template in one request.
export type EmailAdapter = ChannelAdapter & {
  sendBatch(batch: OutgoingBatch): Promise<BatchDelivery>;
};

// Retry-After is seconds or an HTTP date (RFC 9110 10.2.3).
export function retryAfterSeconds(value: string | null | undefined, now: number): number | null {
  if (!value) return null;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - now) / 1000));
}

// A status the provider answered, as an outcome: 429 and 5xx are worth a retry.
export function deliveryForStatus(status: number, reason: string, retryAfter: number | null): Delivery {
  if (status === 429 || status >= 500) return { outcome: "transient", reason, retryAfterSeconds: retryAfter };
  return { outcome: "permanent", reason };
}

// The adapter with at most `inFlight` sends under way at once; the rest wait their turn,
// in the order they came. A provider that limits an account's concurrent requests (the
// SMS provider refuses the rest with 429) is then asked no more than that, however many
// jobs a claim holds and however many claims run side by side. A send whose turn comes
// after its startBy is not made (postponed), and passes its turn on.
export function withSendsInFlight<Adapter extends ChannelAdapter>(adapter: Adapter, inFlight: number, now: () => number): Adapter {
  if (!Number.isInteger(inFlight) || inFlight < 1) throw new Error(`sends in flight must be a whole number from 1: ${inFlight}`);
  let running = 0;
  const waiting: (() => void)[] = [];
  const send = async (message: OutgoingMessage, options?: SendOptions): Promise<Delivery> => {
    if (running >= inFlight) await new Promise<void>((resolve) => waiting.push(resolve));
    else running++;
    try {
      if (options?.startBy !== undefined && now() > options.startBy) {
        return { outcome: "postponed", reason: "its turn with the provider came too late for this run" };
      }
      return await adapter.send(message, options);
    } finally {
      // The slot passes straight to the next in line, or is given back.
      const next = waiting.shift();
      if (next) next();
      else running--;
    }
  };
  return { ...adapter, send };
}
