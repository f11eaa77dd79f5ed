import sendgridClient from "@sendgrid/client";
import sendgridMail from "@sendgrid/mail";
import { type ChannelAdapter, type Delivery, deliveryForStatus, type OutgoingMessage, retryAfterSeconds } from "./delivery.ts";

// Both packages export their classes beside a shared default instance; their typings
// declare only the instance. One instance per adapter keeps settings out of module state.
const { Client } = sendgridClient as unknown as { Client: new () => typeof sendgridClient };
const { MailService } = sendgridMail as unknown as { MailService: new () => typeof sendgridMail };

export type SendGridSettings = {
  apiKey: string | null;
  // The sender-address setting. Unset, email is disabled: the worker logs a warning and
  // sends nothing (docs/contract.md, Delivery processing).
  fromEmail: string | null;
  fromName: string | null;
  // SendGrid's API, or the local capture server.
  baseUrl: string;
  timeoutMs: number;
  now: () => number;
};

type ProviderError = {
  code?: unknown;
  message?: unknown;
  response?: { headers?: Record<string, unknown>; body?: unknown };
};

function providerError(error: unknown): ProviderError | null {
  return typeof error === "object" && error !== null ? error as ProviderError : null;
}

// SendGrid answers errors as {errors: [{message, field}]}.
function describe(body: unknown, fallback: string): string {
  const errors = (body as { errors?: { message?: unknown; field?: unknown }[] } | null)?.errors;
  if (!Array.isArray(errors) || errors.length === 0) return fallback;
  return errors.map((e) => [e.field, e.message].filter((part) => typeof part === "string" && part).join(": ")).join("; ");
}

export function createSendGridAdapter(settings: SendGridSettings): ChannelAdapter {
  const disabledReason = !settings.fromEmail
    ? "email is disabled: the sender address (NOTIFICATIONS_FROM_EMAIL) is not set"
    : !settings.apiKey
    ? "email is disabled: the SendGrid API key (SENDGRID_API_KEY) is not set"
    : null;

  const client = new Client();
  if (settings.apiKey) client.setApiKey(settings.apiKey);
  client.setDefaultRequest("baseUrl", settings.baseUrl);
  const mail = new MailService();
  mail.setClient(client);
  mail.setTimeout(settings.timeoutMs);

  return {
    disabledReason,
    async send(message: OutgoingMessage): Promise<Delivery> {
      if (disabledReason || !settings.fromEmail) return { outcome: "permanent", reason: disabledReason ?? "disabled" };
      try {
        const [response] = await mail.send({
          to: message.to,
          from: settings.fromName ? { email: settings.fromEmail, name: settings.fromName } : settings.fromEmail,
          subject: message.subject,
          text: message.text,
          html: message.html,
          // Traces a duplicate after a crash back to its notification.
          customArgs: { notification_id: message.notificationId, tenant_id: message.tenantId },
          categories: [message.templateKey],
        });
        const id = response.headers["x-message-id"];
        return { outcome: "accepted", providerMessageId: typeof id === "string" ? id : null };
      } catch (error) {
        const failure = providerError(error);
        const status = typeof failure?.code === "number" ? failure.code : null;
        if (status === null) {
          // No answer at all: a timeout, a refused connection, DNS.
          return { outcome: "transient", reason: `SendGrid unreachable: ${String(failure?.message ?? error)}`, retryAfterSeconds: null };
        }
        const retryAfter = retryAfterSeconds(String(failure?.response?.headers?.["retry-after"] ?? ""), settings.now());
        return deliveryForStatus(status, `SendGrid answered ${status}: ${describe(failure?.response?.body, String(failure?.message ?? ""))}`, retryAfter);
      }
    },
  };
}
