import { HttpError } from "../http/problem.ts";
import { checkEndpointUrl, type WebhookEndpointPolicy } from "./endpoint.ts";

// What a route that saves a tenant's URL for the server to call (a webhook's endpoint, an
// imported calendar) needs of the deployment: whether the URL may be called at all, before
// any name is resolved (endpoint.ts), as the refusal's sentence or null. The worker checks
// again, after resolving the host, at every call.
export type OutboundUrlSettings = { refuseUrl: (url: string) => string | null };

// `refusal` begins the sentence, as "The URL cannot receive webhooks".
export function outboundUrlSettings(policy: WebhookEndpointPolicy, refusal: string): OutboundUrlSettings {
  return {
    refuseUrl: (url) => {
      const checked = checkEndpointUrl(url, policy);
      return checked.ok ? null : `${refusal}: ${checked.message}.`;
    },
  };
}

// A 422 naming the url field when the URL given may not be called; nothing when none is given.
export function checkOutboundUrl(settings: OutboundUrlSettings, url: string | undefined): void {
  if (url === undefined) return;
  const refused = settings.refuseUrl(url);
  if (refused) throw new HttpError("unprocessable", refused, { errors: [{ path: "url", message: refused }] });
}
