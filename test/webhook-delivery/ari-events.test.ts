// availability.changed and rates.changed: what a channel mirrors, announced once per
// transaction and room type or plan whatever the number of days, in order per property.
import assert from "node:assert/strict";
import { expectStatus, withFixture } from "../support/api.ts";
import { createProperty, createRatePlan, createRoomType, createUnit, createUnitBlock } from "../support/domain.ts";
import { external, issueApiKey } from "../support/integration.ts";
import { drainWebhooks, subscribeReceiver } from "../support/outbound-webhooks.ts";
import { webhookReceiver as receiver } from "../support/webhook-receiver.ts";
import { webhookEventSchema } from "../../src/webhook-subscriptions/events.ts";

type Envelope = { type: "availability.changed" | "rates.changed"; data: Record<string, string | null> };

Deno.test("a year of the calendar is one rates.changed per plan; a booking and a block each one availability.changed; in order", () =>
  withFixture(async ({ sql, tenant }) => {
    const t = await tenant("hooks-ari");
    const owner = t.ownerClient;
    const property = await createProperty(owner);
    const elsewhere = await createProperty(owner);
    const roomType = await createRoomType(owner, property.id);
    const unit = await createUnit(owner, property.id, { roomTypeId: roomType.id });
    const plan = await createRatePlan(owner, property.id);
    const { endpoint: name } = await subscribeReceiver(owner,
      { eventTypes: ["availability.changed", "rates.changed"], propertyIds: [property.id] });
    await drainWebhooks(sql);

    assert.equal((await owner.patch("/rate-calendar", {
      changes: [
        { ratePlanId: plan.id, from: "2028-01-01", to: "2028-12-30", price: 15000 },
        { ratePlanId: plan.id, from: "2028-02-01", to: "2028-02-29", weekdays: ["fri", "sat"], minStay: 2 },
      ],
    })).status, 200);
    const key = await issueApiKey(owner, property.id, { scopes: ["reservations:write"] });
    await expectStatus("POST", "/v1/external/properties/{id}/reservations", await external("POST", `/properties/${property.id}/reservations`,
      key.secret, {
        body: {
          roomTypeId: roomType.id, ratePlanId: plan.id, checkIn: "2027-06-09", checkOut: "2027-06-12", channel: "Booking.com",
          externalReference: "BDC-HOOK", guest: { firstName: "Eva", lastName: "Hook" },
        },
      }), 201);
    await createUnitBlock(owner, unit.id, "2027-07-01", "2027-07-03");
    // Another property's changes are not this subscription's.
    await createUnit(owner, elsewhere.id);
    await drainWebhooks(sql);

    const bodies = (await receiver.requests(name)).map((request) => {
      assert.equal(request.verified, true);
      const body = request.json as Envelope;
      assert.ok(webhookEventSchema(body.type).strict().safeParse(body).success, JSON.stringify(body));
      return body;
    });
    assert.deepEqual(bodies.map((body) => [body.type, body.data]), [
      ["rates.changed", { propertyId: property.id, ratePlanId: plan.id, from: "2028-01-01", to: "2028-12-30" }],
      ["availability.changed", { propertyId: property.id, roomTypeId: roomType.id, from: "2027-06-09", to: "2027-06-11" }],
      ["availability.changed", { propertyId: property.id, roomTypeId: roomType.id, from: "2027-07-01", to: "2027-07-02" }],
    ]);
    // The deliveries keep the property's order.
    const order = await sql<{ order_key: string }[]>`
      select d.order_key from public.webhook_deliveries d join public.webhook_events e on e.tenant_id = d.tenant_id and e.id = d.event_id
      where d.tenant_id = ${t.tenantId} and e.type in ('availability.changed', 'rates.changed')`;
    assert.ok(order.length === 3 && order.every((row) => row.order_key === property.id));
  }));

Deno.test("a change rolled back announces nothing", () =>
  withFixture(async ({ sql, tenant }) => {
    const t = await tenant("hooks-ari");
    const property = await createProperty(t.ownerClient);
    const plan = await createRatePlan(t.ownerClient, property.id);
    await subscribeReceiver(t.ownerClient, { eventTypes: ["rates.changed"] });
    await drainWebhooks(sql);
    const before = await sql<{ n: number }[]>`select count(*)::int as n from public.webhook_events where tenant_id = ${t.tenantId}`;
    await sql.begin(async (tx) => {
      await tx`insert into public.rate_plan_days (tenant_id, rate_plan_id, day, price) values (${t.tenantId}, ${plan.id}, '2027-05-01', 1)`;
      throw new Error("rolled back on purpose");
    }).catch((error: Error) => assert.equal(error.message, "rolled back on purpose"));
    const after = await sql<{ n: number }[]>`select count(*)::int as n from public.webhook_events where tenant_id = ${t.tenantId}`;
    assert.equal(after[0]!.n, before[0]!.n);
  }));
