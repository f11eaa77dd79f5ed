import sendgridClient from "@sendgrid/client";
import sendgridMail from "@sendgrid/mail";
import {
  type BatchDelivery,
  type Delivery,
  deliveryForStatus,
  type EmailAdapter,
  type OutgoingBatch,
  type OutgoingMessage,
  retryAfterSeconds,
  withoutAnswer,
} from "./delivery.ts";

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

type FieldError = { message?: unknown; field?: unknown };

// SendGrid answers errors as {errors: [{message, field, help}]}.
function fieldErrors(body: unknown): FieldError[] {
  const errors = (body as { errors?: unknown } | null)?.errors;
  return Array.isArray(errors) ? errors.filter((e): e is FieldError => typeof e === "object" && e !== null) : [];
}

function describe(body: unknown, fallback: string): string {
  const errors = fieldErrors(body);
  if (errors.length === 0) return fallback;
  return errors.map((e) => [e.field, e.message].filter((part) => typeof part === "string" && part).join(": ")).join("; ");
}

// Whether a refusal of a request with many personalizations may be about some of them
// only: a 400 naming a personalization (an address, a substitution) or no field at all,
// or a body too large (413), which half of it may not be. A 400 naming only the shared
// message (from, content, a setting) would refuse every half alike.
function mayLieWithSome(status: number, body: unknown): boolean {
  if (status === 413) return true;
  if (status !== 400) return false;
  const fields = fieldErrors(body).map((e) => e.field);
  return fields.length === 0 || fields.some((field) => typeof field !== "string" || field === "" || field.startsWith("personalizations"));
}

export function createSendGridAdapter(settings: SendGridSettings): EmailAdapter {
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
  const from = settings.fromEmail && settings.fromName ? { email: settings.fromEmail, name: settings.fromName } : settings.fromEmail;

  // The one request, and what became of it. `refusable`: whether a refusal may be split.
  async function post(data: Parameters<typeof mail.send>[0], refusable: boolean): Promise<BatchDelivery> {
    try {
      const [response] = await mail.send(data);
      const id = response.headers["x-message-id"];
      return { outcome: "accepted", providerMessageId: typeof id === "string" ? id : null };
    } catch (error) {
      const failure = providerError(error);
      const status = typeof failure?.code === "number" ? failure.code : null;
      if (status === null) {
        // No answer at all: a refused connection or DNS (nothing sent), or a timeout or a
        // broken connection (perhaps sent).
        return withoutAnswer(`SendGrid did not answer: ${String(failure?.message ?? error)}`, failure ?? error);
      }
      const body = failure?.response?.body;
      const reason = `SendGrid answered ${status}: ${describe(body, String(failure?.message ?? ""))}`;
      if (refusable && mayLieWithSome(status, body)) return { outcome: "refused", reason };
      const retryAfter = retryAfterSeconds(String(failure?.response?.headers?.["retry-after"] ?? ""), settings.now());
      return deliveryForStatus(status, reason, retryAfter);
    }
  }

  return {
    disabledReason,
    async send(message: OutgoingMessage): Promise<Delivery> {
      if (disabledReason || !from) return { outcome: "permanent", reason: disabledReason ?? "disabled" };
      const delivery = await post({
        to: message.to,
        from,
        subject: message.subject,
        text: message.text,
        html: message.html,
        // Traces a duplicate after a crash back to its notification.
        customArgs: { notification_id: message.notificationId, tenant_id: message.tenantId },
        categories: [message.templateKey],
      }, false);
      return delivery.outcome === "refused" ? { outcome: "permanent", reason: delivery.reason } : delivery;
    },
    // One request: the shared body once, a personalization per email with its recipient,
    // subject, substitutions and notification (SendGrid brings custom_args back in each
    // of that email's events). The tokens are the substitution keys as they are: the
    // client would otherwise wrap each key in {{ }}.
    async sendBatch(batch: OutgoingBatch): Promise<BatchDelivery> {
      if (disabledReason || !from) return { outcome: "permanent", reason: disabledReason ?? "disabled" };
      return await post({
        from,
        text: batch.text,
        html: batch.html,
        categories: [batch.templateKey],
        substitutionWrappers: ["", ""],
        personalizations: batch.recipients.map((recipient) => ({
          to: recipient.to,
          subject: recipient.subject,
          substitutions: { ...recipient.substitutions },
          customArgs: { notification_id: recipient.notificationId, tenant_id: recipient.tenantId },
        })),
      }, true);
    },
  };
}
