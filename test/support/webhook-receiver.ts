// The stack's webhook receiver double (local/webhook-receiver) for tests: an endpoint's URL
// on it, the secrets it verifies with, its scripted answers and what it recorded.
import assert from "node:assert/strict";
import type { ScriptedResponse } from "../../local/capture.ts";
import type { ReceivedWebhook } from "../../local/webhook-receiver/main.ts";
import { stack } from "./stack.ts";

export type { ReceivedWebhook };

async function call(method: string, path: string, body: unknown, status: number): Promise<string> {
  const response = await fetch(`${stack.webhookReceiverUrl}${path}`, {
    method,
    ...(body === undefined ? {} : { headers: { "content-type": "application/json" }, body: JSON.stringify(body) }),
  });
  const text = await response.text();
  assert.equal(response.status, status, `${method} ${path}: ${text}`);
  return text;
}

export const webhookReceiver = {
  // An endpoint on the double; any name is one. A fresh name each call without one, so
  // tests never share an endpoint.
  endpoint(name: string = `hook-${crypto.randomUUID()}`, { https = false } = {}): { name: string; url: string } {
    return { name, url: `${https ? stack.webhookReceiverHttpsUrl : stack.webhookReceiverUrl}/hooks/${name}` };
  },
  // The secrets the endpoint's webhooks are verified with from now on ([] forgets them).
  register: async (name: string, secrets: string[]) => void await call("PUT", `/_capture/endpoints/${name}`, { secrets }, 204),
  // Queues answers for one endpoint's next webhooks (or any webhook's, without a name).
  script: async (name: string | undefined, ...responses: ScriptedResponse[]) =>
    JSON.parse(await call("POST", "/_capture/script", name === undefined ? { responses } : { name, responses }, 200)) as { pending: number },
  // Every webhook received, oldest first: all, or one endpoint's.
  requests: async (name?: string) =>
    JSON.parse(await call("GET", `/_capture/requests${name === undefined ? "" : `?name=${encodeURIComponent(name)}`}`, undefined, 200)) as ReceivedWebhook[],
  // Forgets every request, script and secret.
  clear: async () => void await call("DELETE", "/_capture", undefined, 204),
};
