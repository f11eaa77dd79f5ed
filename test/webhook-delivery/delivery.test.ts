// Outbound webhooks end to end: changes made through the gateway become events, the
// webhooks worker function posts each to the local receiver, which verifies the signature
// with the Standard Webhooks reference library and records what it got. Bodies are checked
// against the schemas the OpenAPI document's webhooks section is built from.
import assert from "node:assert/strict";
import { z } from "zod";
import { client, expectStatus, representation, type Schemas, withFixture } from "../support/api.ts";
import { createStay, stepReservation } from "../support/domain.ts";
import { drainQueue } from "../support/notifications.ts";
import { drainWebhooks, dueNow, runWebhookWorker, subscribeReceiver, webhookSummary } from "../support/outbound-webhooks.ts";
import { stack } from "../support/stack.ts";
import { webhookReceiver as receiver } from "../support/webhook-receiver.ts";
import { webhookEventSchema } from "../../src/webhook-subscriptions/events.ts";
import type { deliveredEventTypes } from "../../src/webhook-subscriptions/schema.ts";

type EventType = (typeof deliveredEventTypes)[number];
type Delivery = Schemas["WebhookDeliveryDetail"];
type Envelope = { id: string; type: EventType; data: Record<string, unknown> };

// Every body the receiver got for `name`, checked: signed as the reference verifier
// accepts, and the documented shape of its type (no field more, none less).
async function verifiedBodies(name: string): Promise<Envelope[]> {
  const got = await receiver.requests(name);
  return got.map((request) => {
    assert.equal(request.verified, true, `the reference verifier accepted ${request.headers["webhook-id"]}`);
    const body = request.json as Envelope;
    const schema = webhookEventSchema(body.type).strict();
    const parsed = schema.safeParse(body);
    assert.ok(parsed.success, `${body.type} has its documented body: ${JSON.stringify(parsed.error?.issues)}`);
    // A parse drops fields it does not know; the documented resources have exactly theirs.
    assert.deepEqual(Object.keys(body.data).sort(), Object.keys(schema.shape.data.shape).sort(), `${body.type}'s data`);
    for (const [field, fieldSchema] of Object.entries(schema.shape.data.shape)) {
      if (fieldSchema instanceof z.ZodObject) {
        assert.deepEqual(Object.keys(body.data[field] as object).sort(), Object.keys(fieldSchema.shape).sort(), `${body.type}'s ${field}`);
      }
    }
    assert.equal(request.headers["webhook-id"], body.id, "webhook-id is the event's id");
    return body;
  });
}

async function deliveryOf(api: ReturnType<typeof client>, id: string): Promise<Delivery> {
  return await expectStatus<Delivery>("GET", "/v1/webhook-deliveries/{id}", await api.get(`/webhook-deliveries/${id}`), 200);
}

Deno.test("every event type reaches the endpoint, signed and in the documented shape, a stay's events in order", () =>
  withFixture(async ({ sql, tenant }) => {
    const t = await tenant("hooks-events");
    const { endpoint: name } = await subscribeReceiver(t.ownerClient);
    await drainWebhooks(sql);

    const stay = await createStay(t.ownerClient, { status: "confirmed" });
    await expectStatus("PATCH", "/v1/reservations/{id}",
      await t.ownerClient.patch(`/reservations/${stay.reservation.id}`, { notes: "late arrival", adults: 2 }), 204);
    await stepReservation(t.ownerClient, stay.reservation.id, "check-in");
    await expectStatus("POST", "/v1/reservations/{id}/payments",
      await t.ownerClient.post(`/reservations/${stay.reservation.id}/payments`, { amount: 5000, method: "card" }), 201);
    const code = await expectStatus<Schemas["AccessCode"]>("POST", "/v1/reservations/{id}/access-codes",
      await t.ownerClient.post(`/reservations/${stay.reservation.id}/access-codes`, {}, representation), 201);
    await expectStatus("POST", "/v1/reservations/{id}/access-codes/{codeId}/revoke",
      await t.ownerClient.post(`/reservations/${stay.reservation.id}/access-codes/${code.id}/revoke`), 204);
    await expectStatus("PATCH", "/v1/guests/{id}", await t.ownerClient.patch(`/guests/${stay.guest.id}`, { phone: "+351912345678" }), 204);
    await stepReservation(t.ownerClient, stay.reservation.id, "check-out");
    const task = await expectStatus<Schemas["Task"]>("POST", "/v1/tasks", await t.ownerClient.post("/tasks", {
      propertyId: stay.property.id, type: "maintenance", title: "Fix the tap",
    }, representation), 201);
    await expectStatus("PATCH", "/v1/tasks/{id}/status",
      await t.ownerClient.patch(`/tasks/${task.id}/status`, { status: "in_progress" }), 204);
    const other = await createStay(t.ownerClient, { status: "confirmed" });
    await stepReservation(t.ownerClient, other.reservation.id, "cancel");

    const drained = await drainWebhooks(sql);
    assert.ok(drained.waiting > 0, "the stay's later events waited for its earlier ones in the same claim");
    const bodies = await verifiedBodies(name);
    const types = new Set(bodies.map((body) => body.type));
    for (const type of [
      "reservation.created", "reservation.updated", "reservation.checked_in", "reservation.checked_out", "reservation.cancelled",
      "payment.recorded", "access_code.created", "access_code.revoked", "task.status_changed", "guest.updated",
    ] as const) assert.ok(types.has(type), `${type} was delivered`);

    const ofStay = bodies.filter((body) => {
      const reservation = body.data.reservation as { id?: string } | undefined;
      return reservation?.id === stay.reservation.id && body.type.startsWith("reservation.");
    }).map((body) => body.type);
    assert.deepEqual(ofStay, ["reservation.created", "reservation.updated", "reservation.checked_in", "reservation.checked_out"],
      "the stay's own events arrive in the order they happened");
    const updated = bodies.find((body) => body.type === "reservation.updated")!;
    assert.deepEqual(updated.data.changedFields, ["adults", "notes"]);
    const paid = bodies.find((body) => body.type === "payment.recorded")!;
    assert.equal((paid.data.reservation as { amountPaid: number }).amountPaid, 5000);
    const issued = bodies.find((body) => body.type === "access_code.created")!;
    assert.equal((issued.data.accessCode as { code: string }).code, code.code, "a lock vendor gets the code itself");
  }));

Deno.test("a change rolled back delivers nothing; a subscription limited to a type and a property gets only those", () =>
  withFixture(async ({ sql, tenant }) => {
    const t = await tenant("hooks-filters");
    const stay = await createStay(t.ownerClient, { status: "confirmed" });
    const elsewhere = await createStay(t.ownerClient, { status: "confirmed" });
    const { endpoint: name } = await subscribeReceiver(t.ownerClient,
      { eventTypes: ["reservation.checked_in"], propertyIds: [stay.property.id] });
    await drainWebhooks(sql);

    const rollBack = new Error("rolled back on purpose");
    const outcome = await sql.begin(async (tx) => {
      await tx`update public.reservations set status = 'checked_in' where id = ${stay.reservation.id}`;
      const [inside] = await tx<{ count: number }[]>`
        select count(*)::int as count from public.webhook_events where tenant_id = ${t.tenantId}`;
      assert.equal(inside?.count, 1, "inside the transaction the check-in made its event");
      throw rollBack;
    }).catch((error: unknown) => error);
    assert.equal(outcome, rollBack);
    const [rolledBack] = await sql<{ count: number }[]>`
      select count(*)::int as count from public.webhook_events where tenant_id = ${t.tenantId}`;
    assert.equal(rolledBack?.count, 0, "the rolled-back check-in left no event");

    await stepReservation(t.ownerClient, elsewhere.reservation.id, "check-in");
    await expectStatus("PATCH", "/v1/reservations/{id}",
      await t.ownerClient.patch(`/reservations/${stay.reservation.id}`, { notes: "not wanted" }), 204);
    await stepReservation(t.ownerClient, stay.reservation.id, "check-in");
    await drainWebhooks(sql);
    const bodies = await verifiedBodies(name);
    assert.deepEqual(bodies.map((body) => [body.type, (body.data.reservation as { id: string }).id]),
      [["reservation.checked_in", stay.reservation.id]]);
  }));

Deno.test("a failing endpoint: retried with backoff and Retry-After, every attempt recorded, then delivered", () =>
  withFixture(async ({ sql, tenant }) => {
    const t = await tenant("hooks-retry");
    const subscription = await subscribeReceiver(t.ownerClient);
    const name = subscription.endpoint;
    await drainWebhooks(sql);
    await receiver.script(name, { status: 500, body: "database is down" }, { status: 429, headers: { "retry-after": "900" } });
    const queued = await expectStatus<{ deliveryId: string }>("POST", "/v1/webhook-subscriptions/{id}/test",
      await t.ownerClient.post(`/webhook-subscriptions/${subscription.id}/test`, {}), 202);

    assert.deepEqual(await runWebhookWorker(), webhookSummary({ read: 1, retrying: 1 }));
    let delivery = await deliveryOf(t.ownerClient, queued.deliveryId);
    assert.equal(delivery.status, "pending");
    const first = delivery.attemptLog[0]!;
    assert.deepEqual([first.attempt, first.statusCode, first.outcome, first.responseSnippet], [1, 500, "retrying", "database is down"]);
    const firstDelay = (Date.parse(first.nextAttemptAt!) - Date.parse(first.startedAt)) / 1000;
    assert.ok(firstDelay >= 24 && firstDelay <= 36, `the first retry comes after 30 s ± a fifth, not ${firstDelay}`);
    assert.deepEqual(await runWebhookWorker(), webhookSummary(), "nothing is due before the delay");

    await dueNow(sql);
    assert.deepEqual(await runWebhookWorker(), webhookSummary({ read: 1, retrying: 1 }));
    delivery = await deliveryOf(t.ownerClient, queued.deliveryId);
    const second = delivery.attemptLog[1]!;
    const secondDelay = (Date.parse(second.nextAttemptAt!) - Date.parse(second.startedAt)) / 1000;
    assert.ok(secondDelay >= 899, `a Retry-After longer than the schedule's delay wins: ${secondDelay}`);

    await dueNow(sql);
    assert.deepEqual(await runWebhookWorker(), webhookSummary({ read: 1, succeeded: 1 }));
    delivery = await deliveryOf(t.ownerClient, queued.deliveryId);
    assert.deepEqual(delivery.attemptLog.map((attempt) => attempt.outcome), ["retrying", "retrying", "succeeded"]);
    assert.equal(delivery.status, "succeeded");
    const got = await receiver.requests(name);
    assert.equal(new Set(got.map((request) => request.headers["webhook-id"])).size, 1, "one webhook-id across the attempts");
    const read = await expectStatus<Schemas["WebhookSubscription"]>("GET", "/v1/webhook-subscriptions/{id}",
      await t.ownerClient.get(`/webhook-subscriptions/${subscription.id}`), 200);
    assert.equal(read.failingSince, null, "a success makes the subscription healthy again");
  }));

Deno.test("410 Gone disables the subscription, and a day of failures does too; the managers' inboxes say so", () =>
  withFixture(async ({ sql, tenant, memberOf }) => {
    const t = await tenant("hooks-disable");
    const admin = client(await memberOf(t, "admin"), t.tenantId);
    const staff = client(await memberOf(t, "staff"), t.tenantId);
    const gone = await subscribeReceiver(t.ownerClient);
    const failing = await subscribeReceiver(t.ownerClient);
    await drainWebhooks(sql);
    await receiver.script(gone.endpoint, { status: 410 });
    await receiver.script(failing.endpoint, { status: 502 });
    await sql`update public.webhook_subscriptions set failing_since = now() - interval '25 hours' where id = ${failing.id}`;

    for (const subscription of [gone, failing]) {
      await t.ownerClient.post(`/webhook-subscriptions/${subscription.id}/test`, {});
    }
    await drainWebhooks(sql);
    for (const [subscription, reason] of [[gone, "gone"], [failing, "failing"]] as const) {
      const read = await expectStatus<Schemas["WebhookSubscription"]>("GET", "/v1/webhook-subscriptions/{id}",
        await t.ownerClient.get(`/webhook-subscriptions/${subscription.id}`), 200);
      assert.deepEqual([read.enabled, read.disabledReason], [false, reason]);
    }
    await drainQueue(sql);
    for (const api of [t.ownerClient, admin]) {
      const inbox = await expectStatus<{ data: Schemas["InboxMessage"][] }>("GET", "/v1/inbox", await api.get("/inbox"), 200);
      assert.equal(inbox.data.filter((message) => message.templateKey === "webhook_disabled").length, 2,
        "each manager is told of both");
    }
    const staffInbox = await expectStatus<{ data: Schemas["InboxMessage"][] }>("GET", "/v1/inbox", await staff.get("/inbox"), 200);
    assert.equal(staffInbox.data.length, 0, "staff are not");

    // A disabled subscription's deliveries are cancelled, not posted.
    await t.ownerClient.post(`/webhook-subscriptions/${gone.id}/test`, {});
    assert.deepEqual(await drainWebhooks(sql), webhookSummary({ read: 1, cancelled: 1 }));
  }));

Deno.test("a rotation's overlap signs with both secrets; a redelivery goes again under the same webhook-id", () =>
  withFixture(async ({ sql, tenant }) => {
    const t = await tenant("hooks-rotate-deliver");
    const subscription = await subscribeReceiver(t.ownerClient);
    const name = subscription.endpoint;
    await drainWebhooks(sql);
    const rotated = await expectStatus<{ secret: string }>("POST", "/v1/webhook-subscriptions/{id}/rotate-secret",
      await t.ownerClient.post(`/webhook-subscriptions/${subscription.id}/rotate-secret`, { overlapHours: 1 }), 200);

    await receiver.register(name, [subscription.secret]);
    const test = await expectStatus<{ deliveryId: string }>("POST", "/v1/webhook-subscriptions/{id}/test",
      await t.ownerClient.post(`/webhook-subscriptions/${subscription.id}/test`, {}), 202);
    await drainWebhooks(sql);
    await receiver.register(name, [rotated.secret]);
    await expectStatus("POST", "/v1/webhook-deliveries/{id}/redeliver",
      await t.ownerClient.post(`/webhook-deliveries/${test.deliveryId}/redeliver`, {}), 202);
    await drainWebhooks(sql);

    const got = await receiver.requests(name);
    assert.equal(got.length, 2);
    assert.deepEqual(got.map((request) => request.verified), [true, true], "the old secret verifies one, the new the other");
    assert.equal(got[0]!.headers["webhook-signature"]!.split(" ").length, 2, "two signatures during the overlap");
    assert.equal(got[0]!.headers["webhook-id"], got[1]!.headers["webhook-id"], "a redelivery keeps the webhook-id");
    const delivery = await deliveryOf(t.ownerClient, test.deliveryId);
    assert.deepEqual(delivery.attemptLog.map((attempt) => attempt.attempt), [1, 2]);
  }));

Deno.test("deliveries and attempts are the tenant's own; a URL saved before it became unsafe is refused at delivery", () =>
  withFixture(async ({ sql, tenant }) => {
    const t = await tenant("hooks-isolation");
    const other = await tenant("hooks-isolation-other");
    const subscription = await subscribeReceiver(t.ownerClient);
    const test = await expectStatus<{ deliveryId: string }>("POST", "/v1/webhook-subscriptions/{id}/test",
      await t.ownerClient.post(`/webhook-subscriptions/${subscription.id}/test`, {}), 202);
    await drainWebhooks(sql);
    for (const path of [`/webhook-deliveries/${test.deliveryId}`, `/webhook-subscriptions/${subscription.id}/deliveries`]) {
      const response = await other.ownerClient.get(path);
      assert.equal(response.status, 404, path);
      await response.body?.cancel();
    }
    const redeliver = await other.ownerClient.post(`/webhook-deliveries/${test.deliveryId}/redeliver`, {});
    assert.equal(redeliver.status, 404);
    await redeliver.body?.cancel();

    // As if the address had been allowed when it was saved: the worker checks again.
    await sql`update public.webhook_subscriptions set url = 'https://10.1.2.3/hooks' where id = ${subscription.id}`;
    const unsafe = await expectStatus<{ deliveryId: string }>("POST", "/v1/webhook-subscriptions/{id}/test",
      await t.ownerClient.post(`/webhook-subscriptions/${subscription.id}/test`, {}), 202);
    assert.deepEqual(await runWebhookWorker(), webhookSummary({ read: 1, retrying: 1 }));
    const delivery = await deliveryOf(t.ownerClient, unsafe.deliveryId);
    assert.deepEqual([delivery.attemptLog[0]!.outcome, delivery.attemptLog[0]!.statusCode], ["refused", null]);
    assert.match(delivery.attemptLog[0]!.error ?? "", /10\.1\.2\.3/);
  }));

// A second job for a delivery whose attempt is under way (a claim that outlived its jobs'
// visibility, a redelivery) finds it leased: it posts nothing, and looks again once the
// lease has ended, by when the first attempt has settled the delivery.
Deno.test("two jobs for one delivery in two runs at once: one attempt in flight, the other run waits; the endpoint gets one post", () =>
  withFixture(async ({ sql, tenant }) => {
    const t = await tenant("hooks-lease");
    const subscription = await subscribeReceiver(t.ownerClient);
    await drainWebhooks(sql);
    await receiver.script(subscription.endpoint, { status: 204, delayMs: 2000 });
    const test = await expectStatus<{ deliveryId: string }>("POST", "/v1/webhook-subscriptions/{id}/test",
      await t.ownerClient.post(`/webhook-subscriptions/${subscription.id}/test`, {}), 202);
    // The second job, hidden until the first run has the first one.
    const [secondJob] = await sql<{ id: string }[]>`
      select pgmq.send('webhooks', ${sql.json({ tenantId: t.tenantId, deliveryId: test.deliveryId })}::jsonb, 600)::text as id`;

    const first = runWebhookWorker();
    await new Promise((resolve) => setTimeout(resolve, 500));
    await sql`select pgmq.set_vt('webhooks', ${secondJob!.id}::bigint, 0)`;
    const second = await runWebhookWorker();
    assert.deepEqual(second, webhookSummary({ read: 1, inFlight: 1 }), "the second run finds the first one's attempt under way");
    assert.deepEqual(await first, webhookSummary({ read: 1, succeeded: 1 }));

    await dueNow(sql);
    const drained = await drainWebhooks(sql);
    assert.ok(drained.cancelled >= 1 && drained.succeeded === 0 && drained.retrying === 0, `the second job finds the delivery ended: ${JSON.stringify(drained)}`);
    const posts = await receiver.requests(subscription.endpoint);
    assert.equal(posts.length, 1, "one post");
    const [lease] = await sql<{ held: boolean }[]>`
      select attempt_started_at is not null as held from public.webhook_deliveries where id = ${test.deliveryId}`;
    assert.equal(lease!.held, false, "the lease was given back");
  }));

Deno.test("over https under the local Edge Runtime: the post reaches the receiver over TLS, signed, its certificate checked for the URL's name", () =>
  withFixture(async ({ sql, tenant }) => {
    const t = await tenant("hooks-tls");
    const subscription = await subscribeReceiver(t.ownerClient, {}, { https: true });
    await drainWebhooks(sql);
    const postTest = async () =>
      await expectStatus<{ deliveryId: string }>("POST", "/v1/webhook-subscriptions/{id}/test",
        await t.ownerClient.post(`/webhook-subscriptions/${subscription.id}/test`, {}), 202);

    const first = await postTest();
    assert.deepEqual(await drainWebhooks(sql), webhookSummary({ read: 1, succeeded: 1 }));
    const [got, ...more] = await receiver.requests(subscription.endpoint);
    assert.deepEqual(more, []);
    assert.equal(got!.tls, true, "over TLS");
    assert.equal(got!.verified, true, "signed as the reference verifier accepts");
    assert.equal(got!.headers["webhook-id"], (await deliveryOf(t.ownerClient, first.deliveryId)).eventId);
    assert.equal(got!.headers.host, new URL(stack.webhookReceiverHttpsUrl).host, "the URL's name is the Host");

    // The same server by its address: its certificate names localhost alone, so TLS fails
    // and nothing is posted; the attempt says why.
    const byAddress = `https://127.0.0.1:${new URL(stack.webhookReceiverHttpsUrl).port}/hooks/${subscription.endpoint}`;
    await sql`update public.webhook_subscriptions set url = ${byAddress} where id = ${subscription.id}`;
    const second = await postTest();
    assert.deepEqual(await runWebhookWorker(), webhookSummary({ read: 1, retrying: 1 }));
    const [attempt] = (await deliveryOf(t.ownerClient, second.deliveryId)).attemptLog;
    assert.match(attempt!.error ?? "", /certificate|tls|handshake/i, JSON.stringify(attempt));
    assert.equal((await receiver.requests(subscription.endpoint)).length, 1, "nothing more reached the receiver");
  }));
