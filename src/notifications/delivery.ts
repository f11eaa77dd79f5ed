// What a provider made of one message, in the terms the worker acts on.
export type Delivery =
  | { outcome: "accepted"; providerMessageId: string | null }
  // Throttling, a provider fault, a timeout or the network: worth trying again.
  | { outcome: "transient"; reason: string; retryAfterSeconds: number | null }
  // The provider refused this message; sending it again would be refused again.
  | { outcome: "permanent"; reason: string };

export type OutgoingMessage = {
  notificationId: string;
  tenantId: string;
  templateKey: string;
  to: string;
  subject: string;
  html: string;
  text: string;
};

export type ChannelAdapter = {
  // Null when the adapter can send; otherwise why it is disabled (the warning logged).
  disabledReason: string | null;
  send(message: OutgoingMessage): Promise<Delivery>;
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
