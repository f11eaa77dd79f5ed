// Outbound webhooks in the tests: the webhooks worker function called as the scheduler
// calls it, and subscriptions to the local receiver (test/support/webhook-receiver.ts).
import assert from "node:assert/strict";
import type postgres from "postgres";
import type { WebhookRunSummary } from "../../src/webhook-delivery/worker.ts";
import { type Client, expectStatus, type Schemas } from "./api.ts";
import { stack } from "./stack.ts";
import { webhookReceiver } from "./webhook-receiver.ts";

export type WithSecret = Schemas["WebhookSubscriptionWithSecret"];

const idle: WebhookRunSummary = { read: 0, succeeded: 0, retrying: 0, failed: 0, cancelled: 0, waiting: 0, inFlight: 0, dropped: 0 };

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
  const { calendarImports, ...deliveries } = JSON.parse(text) as WebhookRunSummary & { calendarImports: unknown };
  assert.deepEqual(Object.keys(deliveries).sort(), Object.keys(idle).sort(), text);
  assert.equal(typeof calendarImports, "object", text);
  return deliveries;
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

// A subscription to a fresh endpoint of the receiver (over https with `https`), its secret
// registered there.
export async function subscribeReceiver(api: Client, fields: Record<string, unknown> = {}, { https = false } = {}) {
  const endpoint = webhookReceiver.endpoint(undefined, { https });
  const response = await api.post("/webhook-subscriptions", { url: endpoint.url, ...fields });
  const created = await expectStatus<WithSecret>("POST", "/v1/webhook-subscriptions", response, 201);
  await webhookReceiver.register(endpoint.name, [created.secret]);
  return { ...created, endpoint: endpoint.name };
}
