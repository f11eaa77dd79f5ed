// A worker can be stopped at any instant on a hosted project: the Edge Runtime kills it past
// a limit, a deploy replaces it, the machine goes. 2,000 notifications (email and SMS) and
// 500 webhook deliveries are drained by the schedule's runs while the workers' processes
// are killed at 20 random instants of their runs, and once the notifications worker is killed by the
// local Edge Runtime's CPU limit, lowered for the while. Then: every notification reached
// its provider exactly once and is sent (none twice, none lost); every delivery succeeded,
// and each post again after a kill carried the delivery's one webhook-id (Standard
// Webhooks' at-least-once), never two attempts of one delivery at once.
import assert from "node:assert/strict";
import type postgres from "postgres";
import { withFixture } from "../support/api.ts";
import { createProperty } from "../support/domain.ts";
import { drainQueue, mail, notificationIdsIn, reportsSettled, sms } from "../support/notifications.ts";
import { drainWebhooks, subscribeReceiver } from "../support/outbound-webhooks.ts";
import { type RuntimeWorker, runtimeWorkers, stack } from "../support/stack.ts";
import { webhookReceiver as receiver } from "../support/webhook-receiver.ts";

const NOTIFICATIONS_PER_TENANT = 1000;
const DELIVERIES = 500;
const KILLS = 20;
const LOGS = new URL("../../.stack/logs/", import.meta.url);


// A worker in the middle of a run: a request in flight.
const running = (worker: RuntimeWorker) => worker.inFlight > 0 && (worker.state === "active" || worker.state === "retired");

async function runningWorker(name: string, timeoutMs: number): Promise<RuntimeWorker | null> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const active = (await runtimeWorkers(name)).find(running);
    if (active) return active;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return null;
}

async function setLimits(name: string, limits: Record<string, number>): Promise<void> {
  const response = await fetch(`http://127.0.0.1:${stack.functionPorts[name]}/_edge-runtime/limits`, {
    method: "PUT", body: JSON.stringify(limits),
  });
  await response.body?.cancel();
  assert.equal(response.status, 200);
}

// A guest of each kind per reservation, and the stay's checkin_reminder by the guest's
// channel with its job, as the fan-out makes them.
async function enqueueMany(sql: postgres.Sql, tenantId: string, propertyId: string, tag: string): Promise<void> {
  await sql.begin(async (tx) => {
    await tx`
      with guests as (
        insert into public.guests (tenant_id, first_name, last_name, email, phone)
        select ${tenantId}, 'Kim', 'Guest ' || i,
               case when i % 2 = 0 then 'kill-' || ${tag} || '-' || i || '@guest.example' end,
               case when i % 2 = 1 then '+3519' || lpad(i::text, 8, '0') end
        from generate_series(1, ${NOTIFICATIONS_PER_TENANT}) as i
        returning id, email
      ), stays as (
        insert into public.reservations (tenant_id, property_id, guest_id, check_in, check_out, status, currency, confirmed_at)
        select ${tenantId}, ${propertyId}, g.id, date '2027-05-01', date '2027-05-04', 'confirmed', 'EUR', now()
        from guests g
        returning id, guest_id
      ), made as (
        insert into public.notifications (tenant_id, recipient_id, recipient_type, template_key, channel, reservation_id)
        select ${tenantId}, s.guest_id, 'guest', 'checkin_reminder', case when g.email is null then 'sms' else 'email' end, s.id
        from stays s join guests g on g.id = s.guest_id
        returning id
      )
      select count(private.send_notification_job(made.id, ${tenantId}::uuid)) from made`;
  });
}

function schedule(name: string): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", "--allow-net=127.0.0.1", new URL("../../local/scheduler/main.ts", import.meta.url).pathname,
      "--url", `${stack.apiUrl}/functions/v1/${name}`, "--key", stack.serviceRoleKey, "--every-seconds", "2"],
    stdin: "null", stdout: "null", stderr: "null",
  }).spawn();
}

async function waitUntil<T>(what: string | (() => string), timeoutMs: number, check: () => Promise<T | null>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const done = await check();
    if (done !== null) return done;
    if (Date.now() > deadline) assert.fail(`${typeof what === "string" ? what : what()} did not happen in ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

Deno.test({
  name: "workers killed at 20 random instants and once by the CPU limit: 2,000 notifications each sent once, 500 deliveries all delivered",
  sanitizeResources: false,
  fn: () =>
    withFixture(async ({ sql, tenant }) => {
      await drainQueue(sql);
      await drainWebhooks(sql);
      const tenants = [await tenant("kills-a"), await tenant("kills-b")];
      for (const [index, t] of tenants.entries()) {
        const property = await createProperty(t.ownerClient);
        await enqueueMany(sql, t.tenantId, property.id, `${index}${crypto.randomUUID().slice(0, 6)}`);
      }
      const subscription = await subscribeReceiver(tenants[0]!.ownerClient);
      for (let sent = 0; sent < DELIVERIES; sent += 10) {
        await Promise.all(Array.from({ length: 10 }, () =>
          tenants[0]!.ownerClient.post(`/webhook-subscriptions/${subscription.id}/test`, {}).then((response) => {
            assert.equal(response.status, 202);
          })));
      }

      const schedules = [schedule("notifications-worker"), schedule("webhooks-worker")];
      const kills: { at: number; name: string; pid: number }[] = [];
      try {
        // Each kill waits for a run in progress, then strikes a random instant into it.
        for (let attempt = 0; attempt < 3 * KILLS && kills.length < KILLS; attempt++) {
          const name = attempt % 3 === 2 ? "webhooks-worker" : "notifications-worker";
          const active = await runningWorker(name, 10_000);
          if (!active) continue;
          await new Promise((resolve) => setTimeout(resolve, Math.random() * 1500));
          if (!(await runtimeWorkers(name)).some((worker) => worker.pid === active.pid && running(worker))) continue;
          try {
            Deno.kill(active.pid, "SIGKILL");
            kills.push({ at: Date.now(), name, pid: active.pid });
          } catch {
            // it ended by itself a moment ago
          }
        }
        // And once by the runtime's own CPU limit: lowered until a worker is killed by it.
        const log = new URL("fn-notifications-worker.log", LOGS);
        const before = (await Deno.readTextFile(log)).length;
        await setLimits("notifications-worker", { cpuSoftMs: 50, cpuHardMs: 100 });
        try {
          await waitUntil("a kill by the CPU hard limit", 60_000, async () =>
            (await Deno.readTextFile(log)).slice(before).includes("CPU time hard limit reached") ? true : null);
        } finally {
          await setLimits("notifications-worker", { cpuSoftMs: 1000, cpuHardMs: 2000 });
        }
        assert.ok(kills.length >= KILLS / 2, `most of the kills found a run to kill: ${kills.length}`);
        assert.ok(kills.some((kill) => kill.name === "webhooks-worker"), "the webhooks worker was killed too");

        // Everything ends: sent, or delivered; unconfirmed sends wait out the stack's wait.
        const tenantIds = tenants.map((t) => t.tenantId);
        let open: readonly unknown[] = [];
        await waitUntil(() => `every notification sent (open: ${JSON.stringify(open)})`, 300_000, async () => {
          open = await sql`
            select status, channel, send_started_at is not null as started, provider_message_id is not null as reported,
                   attempts, status_reason, count(*)::int as count
            from public.notifications
            where tenant_id = any(${tenantIds}) and template_key = 'checkin_reminder' and status <> 'sent'
            group by 1, 2, 3, 4, 5, 6`;
          return open.length === 0 ? true : null;
        });
        await waitUntil("every delivery ended", 300_000, async () => {
          const [row] = await sql<{ open: number }[]>`
            select count(*)::int as open from public.webhook_deliveries where tenant_id = ${tenants[0]!.tenantId} and status = 'pending'`;
          return row!.open === 0 ? true : null;
        });
      } finally {
        for (const scheduled of schedules) {
          scheduled.kill("SIGTERM");
          await scheduled.status;
        }
        // A run the schedule started goes on for its time budget; the tests after this one
        // must find the queues to themselves.
        await waitUntil("the workers' last runs ended", 120_000, async () => {
          const busy = [...await runtimeWorkers("notifications-worker"), ...await runtimeWorkers("webhooks-worker")].some(running);
          return busy ? null : true;
        });
      }
      await reportsSettled(60_000);

      // Each notification reached its provider, and was taken, exactly once.
      const ids = (await sql<{ id: string; channel: string }[]>`
        select id::text, channel from public.notifications
        where tenant_id = any(${tenants.map((t) => t.tenantId)}) and template_key = 'checkin_reminder'`);
      assert.equal(ids.length, 2 * NOTIFICATIONS_PER_TENANT);
      const taken = new Map<string, number>();
      for (const request of await mail.requests()) {
        if (request.status !== 202) continue;
        for (const id of notificationIdsIn(request.body)) taken.set(id, (taken.get(id) ?? 0) + 1);
      }
      for (const request of await sms.requests()) {
        if (request.status !== 201) continue;
        const id = new URL(request.params.StatusCallback!).searchParams.get("notificationId")!;
        taken.set(id, (taken.get(id) ?? 0) + 1);
      }
      const twice = ids.filter(({ id }) => (taken.get(id) ?? 0) > 1).length;
      const lost = ids.filter(({ id }) => (taken.get(id) ?? 0) === 0).length;
      assert.deepEqual({ twice, lost }, { twice: 0, lost: 0 }, `after ${kills.length} kills`);

      // Every delivery succeeded; a post again after a kill is the same message, by its webhook-id.
      const deliveries = await sql<{ status: string; event_id: string }[]>`
        select status, event_id::text from public.webhook_deliveries where tenant_id = ${tenants[0]!.tenantId}`;
      assert.equal(deliveries.length, DELIVERIES);
      assert.deepEqual(deliveries.filter((delivery) => delivery.status !== "succeeded"), [], "none lost");
      const posts = await receiver.requests(subscription.endpoint);
      const byId = new Map<string, number>();
      for (const post of posts) byId.set(post.headers["webhook-id"]!, (byId.get(post.headers["webhook-id"]!) ?? 0) + 1);
      assert.deepEqual(deliveries.filter((delivery) => !byId.has(delivery.event_id)), [], "every delivery reached the endpoint");
      const again = [...byId.values()].filter((count) => count > 1).length;
      console.log(`kills: ${kills.length} and one by the CPU limit; deliveries posted again after a kill: ${again}`);
      await mail.clear();
      await sms.clear();
    }),
});
