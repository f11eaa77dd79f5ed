// Item 8: outbound webhooks beside the notification pipeline. Each of the pipeline's 100
// tenants subscribes one endpoint of the local receiver; 100 stays per tenant check in
// as far as webhooks go (private.emit_webhook_event, as the reservation trigger calls it:
// the event, its delivery and its job in one transaction), interleaved across tenants;
// the webhooks worker function drains them through the gateway, signing each request and
// posting it to the receiver, which answers at once and, here, verifies nothing (no
// secret registered), so the number is the worker's.
import assert from "node:assert/strict";
import type postgres from "postgres";
import { callWorkerFunction, drainByCalls, forgetRuntimeUse, type RuntimeUse, runtimeUse } from "./drain.ts";
import { tenantId } from "./fixtures.ts";

export type WebhooksContext = {
  origin: string;
  receiverUrl: string;
  serviceRoleKey: string;
  // Where the function's local Edge Runtime answers for itself (stack.functionPorts).
  runtimePort: number;
  sql: postgres.Sql;
  tenants: { first: number; count: number };
  eventsPerTenant: number;
  log: (line: string) => void;
};

export type WebhooksResult = {
  deliveries: number;
  enqueueSeconds: number;
  drainSeconds: number;
  workerRuns: number;
  deliveriesPerSecond: number;
  // The drain's runs as the local Edge Runtime counted them.
  runtime: RuntimeUse;
  // Not succeeded, or not received exactly once, a worker call that failed, or a worker the
  // runtime killed.
  errors: number;
};

type Summary = {
  read: number; succeeded: number; retrying: number; failed: number; cancelled: number; waiting: number; inFlight: number; dropped: number;
};


const callWorker = (context: WebhooksContext) =>
  callWorkerFunction<Summary>(context.origin, "webhooks-worker", context.serviceRoleKey);

async function clearReceiver(receiverUrl: string): Promise<void> {
  const response = await fetch(`${receiverUrl}/_capture`, { method: "DELETE" });
  await response.body?.cancel();
  assert.ok(response.ok, "the webhook receiver forgets what it got");
}

export async function webhooks(context: WebhooksContext): Promise<WebhooksResult> {
  const { sql } = context;
  const tenantIds = Array.from({ length: context.tenants.count }, (_, i) => tenantId(context.tenants.first + i));
  const expected = tenantIds.length * context.eventsPerTenant;

  // Whatever an earlier part queued drains first (none of it is the bench's).
  await sql`select pgmq.set_vt('webhooks', msg_id, 0) from pgmq.q_webhooks where vt > clock_timestamp()`;
  for (let run = 0; (await callWorker(context)).read > 0; run++) assert.ok(run < 1000, "earlier webhook jobs drain");
  await clearReceiver(context.receiverUrl);

  // One subscription per tenant, to every event, as the migration's defaults make it
  // (bypassing the API's URL check: the receiver is on loopback, which the stack allows).
  await sql`
    insert into public.webhook_subscriptions (tenant_id, url, description)
    select t.id, ${context.receiverUrl} || '/hooks/bench-' || t.position, 'bench'
    from unnest(${tenantIds}::uuid[]) with ordinality t(id, position)`;

  const enqueueStarted = performance.now();
  const events = await sql<{ id: string }[]>`
    select private.emit_webhook_event(r.tenant_id, 'reservation.checked_in', array[r.property_id], r.id,
             jsonb_build_object('reservation', private.webhook_resource(to_jsonb(r), array['tenant_id', 'created_by', 'stay'])))::text as id
    from generate_series(1, ${context.eventsPerTenant}) k
    cross join unnest(${tenantIds}::uuid[]) with ordinality t(id, position)
    join public.reservations r
      on r.tenant_id = t.id and r.id = ('b5e' || lpad(k::text, 5, '0') || '-0000-4000-8000-' || right(t.id::text, 12))::uuid
    order by k, t.position`;
  const enqueueSeconds = (performance.now() - enqueueStarted) / 1000;
  assert.equal(events.length, expected, `${expected} events emitted`);

  await forgetRuntimeUse(context.runtimePort);
  const { total, workerRuns, drainSeconds } = await drainByCalls(() => callWorker(context),
    { read: 0, succeeded: 0, retrying: 0, failed: 0, cancelled: 0, waiting: 0, inFlight: 0, dropped: 0 } as Summary);
  const runtime = await runtimeUse(context.runtimePort);
  context.log(`  webhooks worker: ${JSON.stringify(total)} in ${workerRuns} runs, ${drainSeconds.toFixed(2)} s`);
  context.log(`  runtime: ${JSON.stringify(runtime)}`);

  const [outcome] = await sql<{ succeeded: number }[]>`
    select count(*) filter (where status = 'succeeded')::int as succeeded
    from public.webhook_deliveries where event_id = any (${events.map((row) => row.id)}::uuid[])`;
  const response = await fetch(`${context.receiverUrl}/_capture/requests`);
  const received = await response.json() as { headers: Record<string, string> }[];
  const perEvent = new Map<string, number>();
  for (const request of received) {
    const id = request.headers["webhook-id"];
    if (id) perEvent.set(id, (perEvent.get(id) ?? 0) + 1);
  }
  const receivedOnce = events.filter((row) => perEvent.get(row.id) === 1).length;
  const errors = (expected - (outcome?.succeeded ?? 0)) + (expected - receivedOnce) + total.failed + total.retrying + total.dropped +
    total.inFlight + runtime.killed;
  await clearReceiver(context.receiverUrl);
  await sql`delete from public.webhook_subscriptions where tenant_id = any (${tenantIds}::uuid[])`;

  return { deliveries: expected, enqueueSeconds, drainSeconds, workerRuns, deliveriesPerSecond: expected / drainSeconds, runtime, errors };
}
