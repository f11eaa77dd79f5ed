// Outbound webhooks in the tests: the webhooks worker function called as the scheduler
// calls it, and the local receiver (local/webhook-receiver) that verifies and records.
import assert from "node:assert/strict";
import type postgres from "postgres";
import type { WebhookRunSummary } from "../../src/webhook-delivery/worker.ts";
import { type Client, expectStatus, type Schemas } from "./api.ts";
import { stack } from "./stack.ts";

export type WithSecret = Schemas["WebhookSubscriptionWithSecret"];

const idle: WebhookRunSummary = { read: 0, succeeded: 0, retrying: 0, failed: 0, cancelled: 0, waiting: 0, dropped: 0 };

export function webhookSummary(counts: Partial<WebhookRunSummary> = {}): WebhookRunSummary {
  return { ...idle, ...counts };
}

// One run of the webhooks worker function through the gateway.
export async function runWebhookWorker(): Promise<WebhookRunSummary> {
  const response = await fetch(`${stack.apiUrl}/functions/v1/webhooks-worker`, {
    method: "POST", headers: { authorization: `Bearer ${stack.serviceRoleKey}` },
  });
  const text = await response.text();
  assert.equal(response.status, 200, `the webhooks worker answered ${response.status}: ${text}`);
  const body = JSON.parse(text) as WebhookRunSummary;
  assert.deepEqual(Object.keys(body).sort(), Object.keys(idle).sort(), text);
  return body;
}

// Makes every job visible now (a retry's or a wait's delay spent) and runs the worker
// until the queue has nothing left to give; the runs' summaries added up.
export async function drainWebhooks(sql: postgres.Sql): Promise<WebhookRunSummary> {
  const total = { ...idle };
  for (let run = 0; ; run++) {
    assert.ok(run < 50, "the webhooks queue did not drain in 50 runs");
    const summary = await runWebhookWorker();
    for (const key of Object.keys(total) as (keyof WebhookRunSummary)[]) total[key] += summary[key];
    if (summary.read === 0) break;
    await dueNow(sql);
  }
  return total;
}

// Jobs waiting out a delay become visible now.
export async function dueNow(sql: postgres.Sql): Promise<void> {
  await sql`select pgmq.set_vt('webhooks', msg_id, 0) from pgmq.q_webhooks where vt > clock_timestamp()`;
}

// ---------------------------------------------------------------- the receiver

export type ReceivedWebhook = {
  name: string;
  receivedAt: string;
  headers: Record<string, string>;
  body: string;
  json: unknown;
  // null: no secret registered for the name; else whether one of them verified it.
  verified: boolean | null;
  status: number;
};

export const receiver = {
  // The URL a subscription names to post to the receiver's endpoint `name`.
  url(name: string): string {
    return `${stack.webhookReceiverUrl}/hooks/${name}`;
  },
  async register(name: string, secrets: string[]): Promise<void> {
    const response = await fetch(`${stack.webhookReceiverUrl}/_capture/endpoints/${name}`, {
      method: "PUT", body: JSON.stringify({ secrets }), headers: { "content-type": "application/json" },
    });
    await response.body?.cancel();
    assert.ok(response.ok, `the receiver registered ${name}'s secrets: ${response.status}`);
  },
  async script(name: string, responses: { status: number; headers?: Record<string, string>; body?: string; delayMs?: number }[]) {
    const response = await fetch(`${stack.webhookReceiverUrl}/_capture/script`, {
      method: "POST", body: JSON.stringify({ name, responses }), headers: { "content-type": "application/json" },
    });
    await response.body?.cancel();
    assert.ok(response.ok, `the receiver took the script: ${response.status}`);
  },
  async requests(name: string): Promise<ReceivedWebhook[]> {
    const response = await fetch(`${stack.webhookReceiverUrl}/_capture/requests?name=${encodeURIComponent(name)}`);
    assert.equal(response.status, 200);
    return await response.json() as ReceivedWebhook[];
  },
};

// A subscription to the receiver's endpoint `name`, its secret registered there.
export async function subscribeReceiver(api: Client, name: string, fields: Record<string, unknown> = {}): Promise<WithSecret> {
  const response = await api.post("/webhook-subscriptions", { url: receiver.url(name), ...fields });
  const created = await expectStatus<WithSecret>("POST", "/v1/webhook-subscriptions", response, 201);
  await receiver.register(name, [created.secret]);
  return created;
}
