import { type ChannelAdapter, type Delivery, deliveryForStatus, type OutgoingMessage, retryAfterSeconds, withoutAnswer } from "./delivery.ts";

// An SMS provider with Twilio's Messages API: POST a form to
// {baseUrl}/2010-04-01/Accounts/{accountSid}/Messages.json with Basic auth.
export type SmsSettings = {
  accountSid: string | null;
  authToken: string | null;
  // The sending number; unset disables SMS like an unset sender address disables email.
  fromNumber: string | null;
  baseUrl: string;
  // Where the provider posts each message's status (the api function's POST
  // /v1/webhooks/sms); each message's URL names its notification. Null: no callbacks.
  statusCallbackUrl: string | null;
  timeoutMs: number;
  fetch: typeof fetch;
  now: () => number;
};

// The status callback of one message: the webhook's URL naming the notification, which
// the provider signs with the rest of its post.
export function statusCallbackFor(base: string, message: Pick<OutgoingMessage, "tenantId" | "notificationId">): string {
  return `${base}?${new URLSearchParams({ tenantId: message.tenantId, notificationId: message.notificationId })}`;
}

export function createSmsAdapter(settings: SmsSettings): ChannelAdapter {
  const disabledReason = !settings.fromNumber
    ? "sms is disabled: the sending number (SMS_FROM_NUMBER) is not set"
    : !settings.accountSid || !settings.authToken
    ? "sms is disabled: the SMS provider's credentials (SMS_ACCOUNT_SID, SMS_AUTH_TOKEN) are not set"
    : null;
  const url = `${settings.baseUrl.replace(/\/$/, "")}/2010-04-01/Accounts/${settings.accountSid}/Messages.json`;

  return {
    disabledReason,
    async send(message: OutgoingMessage): Promise<Delivery> {
      if (disabledReason || !settings.fromNumber) return { outcome: "permanent", reason: disabledReason ?? "disabled" };
      let response: Response;
      try {
        response = await settings.fetch(url, {
          method: "POST",
          headers: {
            authorization: `Basic ${btoa(`${settings.accountSid}:${settings.authToken}`)}`,
            "content-type": "application/x-www-form-urlencoded",
          },
          body: new URLSearchParams({
            To: message.to,
            From: settings.fromNumber,
            Body: message.text,
            ...(settings.statusCallbackUrl ? { StatusCallback: statusCallbackFor(settings.statusCallbackUrl, message) } : {}),
          }),
          signal: AbortSignal.timeout(settings.timeoutMs),
        });
      } catch (error) {
        return withoutAnswer(`the SMS provider did not answer: ${String(error)}`, error);
      }
      const body = await response.json().catch(() => null) as { sid?: unknown; message?: unknown } | null;
      if (response.ok) return { outcome: "accepted", providerMessageId: typeof body?.sid === "string" ? body.sid : null };
      const detail = typeof body?.message === "string" ? body.message : response.statusText;
      return deliveryForStatus(response.status, `the SMS provider answered ${response.status}: ${detail}`,
        retryAfterSeconds(response.headers.get("retry-after"), settings.now()));
    },
  };
}
