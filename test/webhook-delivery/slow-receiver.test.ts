// An endpoint under strain: it takes each webhook but answers after 12 s, past the worker's
// 10 s timeout, for the first attempt of each delivery. The schedule runs as deployed (a run
// every 10 s, each following the queue) through the local Edge Runtime. Webhooks stay at
// least once, as Standard Webhooks allows: a post whose answer never came is posted again,
// under the delivery's one webhook-id, and never while the first may still be under way.
import assert from "node:assert/strict";
import { expectStatus, type Schemas, withFixture } from "../support/api.ts";
import { drainWebhooks, subscribeReceiver } from "../support/outbound-webhooks.ts";
import { stack } from "../support/stack.ts";
import { webhookReceiver as receiver } from "../support/webhook-receiver.ts";

const DELIVERIES = 30;

Deno.test({
  name: "a slow endpoint (12 s, past the timeout): each delivery posted again under its one webhook-id, never two attempts at once",
  sanitizeResources: false,
  fn: () =>
    withFixture(async ({ sql, tenant }) => {
      const t = await tenant("slow-hooks");
      const subscription = await subscribeReceiver(t.ownerClient);
      await drainWebhooks(sql);
      await receiver.script(subscription.endpoint, ...Array.from({ length: DELIVERIES }, () => ({ status: 204, delayMs: 12_000 })));
      const tests = await Promise.all(Array.from({ length: DELIVERIES }, async () =>
        await expectStatus<{ deliveryId: string }>("POST", "/v1/webhook-subscriptions/{id}/test",
          await t.ownerClient.post(`/webhook-subscriptions/${subscription.id}/test`, {}), 202)));

      const scheduler = new Deno.Command(Deno.execPath(), {
        args: ["run", "--quiet", "--allow-net=127.0.0.1", new URL("../../local/scheduler/main.ts", import.meta.url).pathname,
          "--url", `${stack.apiUrl}/functions/v1/webhooks-worker`, "--key", stack.serviceRoleKey, "--every-seconds", "10"],
        stdin: "null", stdout: "null", stderr: "null",
      }).spawn();
      let deliveries: Schemas["WebhookDeliveryDetail"][] = [];
      try {
        const deadline = Date.now() + 180_000;
        for (;;) {
          deliveries = await Promise.all(tests.map(async ({ deliveryId }) =>
            await expectStatus<Schemas["WebhookDeliveryDetail"]>("GET", "/v1/webhook-deliveries/{id}",
              await t.ownerClient.get(`/webhook-deliveries/${deliveryId}`), 200)));
          if (deliveries.every((delivery) => delivery.status === "succeeded")) break;
          assert.ok(Date.now() < deadline, `not all succeeded: ${JSON.stringify(deliveries.map((delivery) => delivery.status))}`);
          await new Promise((resolve) => setTimeout(resolve, 2000));
        }
      } finally {
        scheduler.kill("SIGTERM");
        await scheduler.status;
      }

      const posts = await receiver.requests(subscription.endpoint);
      for (const delivery of deliveries) {
        const mine = posts.filter((post) => post.headers["webhook-id"] === delivery.eventId);
        assert.ok(mine.length >= 2, `${delivery.id}: posted again after the first answer came too late (${mine.length})`);
        assert.equal(mine.length, delivery.attemptLog.length, "every attempt reached the endpoint under the one webhook-id");
        assert.equal(delivery.attemptLog[0]!.outcome, "retrying", JSON.stringify(delivery.attemptLog[0]));
        assert.match(delivery.attemptLog[0]!.error ?? "", /did not answer within 10000 ms/);
        const arrivals = mine.map((post) => Date.parse(post.receivedAt)).sort((a, b) => a - b);
        for (let i = 1; i < arrivals.length; i++) {
          assert.ok(arrivals[i]! - arrivals[i - 1]! >= 10_000,
            `${delivery.id}: attempt ${i + 1} began ${arrivals[i]! - arrivals[i - 1]!} ms after the one before, while it could still be under way`);
        }
      }
      const [leases] = await sql<{ held: number }[]>`
        select count(*)::int as held from public.webhook_deliveries
        where id = any(${tests.map((test) => test.deliveryId)}::uuid[]) and attempt_started_at is not null`;
      assert.equal(leases!.held, 0, "every lease given back");
    }),
});
