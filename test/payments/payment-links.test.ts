// Payment links end to end through the gateway: creating one for a reservation
// (POST /v1/reservations/{id}/payment-link, src/reservations/handlers.ts), reading and
// cancelling them (src/payments/handlers.ts), the url built from the tenant's payment
// page, and who may write. The rules are supabase/migrations/20261122000600_payments.sql.
import assert from "node:assert/strict";
import type postgres from "postgres";
import {
  addMember,
  type Client,
  client,
  expectInvalid,
  expectMinimal,
  expectPaging,
  expectProblem,
  expectStatus,
  listPage,
  MALFORMED_ID,
  readBack,
  readOne,
  representation,
  type Schemas,
  UNKNOWN_ID,
  withFixture,
} from "../support/api.ts";
import { createGuest, createProperty, createReservation, createStay, instant, readReservation } from "../support/domain.ts";

const CREATE = "/v1/reservations/{id}/payment-link";
const LINKS = "/v1/payment-links";
const LINK = "/v1/payment-links/{id}";
const CANCEL = "/v1/payment-links/{id}/cancel";
const TENANT = "/v1/tenants/{tenantId}";

type PaymentLink = Schemas["PaymentLink"];

const SEVEN_DAYS_MS = 7 * 24 * 60 * 60 * 1000;
const TOKEN = "[A-Za-z0-9_-]{32}";

async function createLink(api: Client, reservationId: string, body: Record<string, unknown> = {}): Promise<PaymentLink> {
  const response = await api.post(`/reservations/${reservationId}/payment-link`, body, representation);
  return await expectStatus<PaymentLink>("POST", CREATE, response, 201);
}

const readLink = async (api: Client, id: string) => (await readOne<PaymentLink>(api, LINK, { id })).body;
const listLinks = (api: Client, query = "") => listPage<PaymentLink>(api, LINKS, query);

async function pay(api: Client, reservationId: string, amount: number): Promise<void> {
  const response = await api.post(`/reservations/${reservationId}/payments`, { amount });
  await expectMinimal("POST", "/v1/reservations/{id}/payments", response, 201);
}

// The guest pays through the link on the payment page, which is not an API route: the
// payment is recorded the way that page records it, with the admin connection.
async function payThroughLink(sql: postgres.Sql, tenantId: string, link: PaymentLink): Promise<void> {
  await sql`
    insert into public.payments (tenant_id, reservation_id, payment_link_id, amount, currency, source)
    values (${tenantId}, ${link.reservationId}, ${link.id}, ${link.amount}, null, 'payment_link')`;
}

// What the expiry job does once a link's time has passed.
async function expire(sql: postgres.Sql, link: PaymentLink): Promise<void> {
  await sql`update public.payment_links set status = 'expired' where id = ${link.id}`;
}

// ---------------------------------------------------------------- POST /v1/reservations/{id}/payment-link

Deno.test("POST /v1/reservations/{id}/payment-link without Prefer: 201 with Location and ETag and no body, as the contract documents; it asks for the balance for seven days", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("link");
    const { reservation } = await createStay(t.ownerClient);
    await pay(t.ownerClient, reservation.id, 10000);
    const before = await readReservation(t.ownerClient, reservation.id);
    assert.equal(before.body.balance, 26000);

    const path = `/reservations/${reservation.id}/payment-link`;
    const response = await t.ownerClient.post(path, {});
    await expectMinimal("POST", CREATE, response, 201);
    const { location, body: link } = await readBack<PaymentLink>(t.ownerClient, path, response, LINK);
    assert.match(location, /^\/payment-links\/[0-9a-f-]{36}$/);
    assert.deepEqual(
      { ...link, id: undefined, expiresAt: undefined, createdAt: undefined, updatedAt: undefined },
      {
        reservationId: reservation.id,
        amount: 26000,
        currency: "EUR",
        url: null,
        description: null,
        status: "active",
        paidAt: null,
        cancelledAt: null,
        id: undefined,
        expiresAt: undefined,
        createdAt: undefined,
        updatedAt: undefined,
      },
    );
    assert.equal(location, `/payment-links/${link.id}`);
    assert.equal(link.createdAt, link.updatedAt);
    assert.equal(Date.parse(link.expiresAt) - Date.parse(link.createdAt), SEVEN_DAYS_MS);
    assert.ok(Math.abs(Date.parse(link.createdAt) - Date.now()) < 60_000, link.createdAt);

    // Asking for money is not receiving it.
    assert.deepEqual(await readReservation(t.ownerClient, reservation.id), before);
  }));

Deno.test("POST /v1/reservations/{id}/payment-link with return=representation: 201 and the link; amount, description and expiry as given", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("link-rep");
    // A dollar reservation: the link takes the reservation's currency.
    const property = await createProperty(t.ownerClient, { timezone: "America/New_York", currency: "USD" });
    const guest = await createGuest(t.ownerClient);
    const reservation = await createReservation(t.ownerClient, { propertyId: property.id, guestId: guest.id }, {
      totalAmount: 80000,
    });
    const input = { amount: 20000, description: "Deposit for your stay", expiresAt: "2027-01-15T12:00:00-05:00" };
    const path = `/reservations/${reservation.id}/payment-link`;
    const response = await t.ownerClient.post(path, input, representation);
    const link = await expectStatus<PaymentLink>("POST", CREATE, response, 201);
    assert.equal(response.headers.get("preference-applied"), "return=representation");
    assert.deepEqual(
      { ...link, id: undefined, expiresAt: instant(link.expiresAt), createdAt: undefined, updatedAt: undefined },
      {
        ...input,
        reservationId: reservation.id,
        currency: "USD",
        url: null,
        status: "active",
        expiresAt: "2027-01-15T17:00:00.000Z",
        paidAt: null,
        cancelledAt: null,
        id: undefined,
        createdAt: undefined,
        updatedAt: undefined,
      },
    );
    const { location, body } = await readBack(t.ownerClient, path, response, LINK);
    assert.equal(location, `/payment-links/${link.id}`);
    assert.deepEqual(body, link);
  }));

Deno.test("POST /v1/reservations/{id}/payment-link: url is null until the tenant sets paymentPageBaseUrl, then the page and the link's token", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("link-url");
    const { reservation } = await createStay(t.ownerClient);
    const before = await createLink(t.ownerClient, reservation.id, { amount: 1000 });
    assert.equal(before.url, null);

    const tenantPath = `/tenants/${t.tenantId}`;
    await expectMinimal("PATCH", TENANT, await t.ownerClient.patch(tenantPath, { paymentPageBaseUrl: "https://pay.example.test/p/" }), 204);
    const first = await createLink(t.ownerClient, reservation.id, { amount: 2000 });
    const second = await createLink(t.ownerClient, reservation.id, { amount: 2000 });
    assert.match(first.url ?? "", new RegExp(`^https://pay\\.example\\.test/p/${TOKEN}$`));
    assert.match(second.url ?? "", new RegExp(`^https://pay\\.example\\.test/p/${TOKEN}$`));
    assert.notEqual(first.url, second.url, "each link has its own token");
    // The token travels only inside the url.
    assert.deepEqual(Object.keys(first).sort(), Object.keys(before).sort());
    assert.ok(!Object.keys(first).includes("token"));
    assert.deepEqual(await readLink(t.ownerClient, first.id), first);

    // A base without a trailing slash still gets one before the token.
    await expectMinimal("PATCH", TENANT, await t.ownerClient.patch(tenantPath, { paymentPageBaseUrl: "https://pay.example.test/checkout" }), 204);
    const third = await createLink(t.ownerClient, reservation.id, { amount: 3000 });
    assert.match(third.url ?? "", new RegExp(`^https://pay\\.example\\.test/checkout/${TOKEN}$`));

    // Unset again, new links have no url.
    await expectMinimal("PATCH", TENANT, await t.ownerClient.patch(tenantPath, { paymentPageBaseUrl: null }), 204);
    assert.equal((await createLink(t.ownerClient, reservation.id, { amount: 4000 })).url, null);
  }));

Deno.test("POST /v1/reservations/{id}/payment-link: 400 for a bad body; nothing is created", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("link400");
    const { reservation } = await createStay(t.ownerClient);
    const path = `/reservations/${reservation.id}/payment-link`;
    const cases: [unknown, string][] = [
      [{ amount: 0 }, "amount"],
      [{ amount: -100 }, "amount"],
      [{ amount: 99.5 }, "amount"],
      [{ amount: "5000" }, "amount"],
      [{ description: "x".repeat(501) }, "description"],
      [{ expiresAt: "next week" }, "expiresAt"],
      [{ expiresAt: "2027-01-15" }, "expiresAt"],
      [{ currency: "EUR" }, "currency"],
      [{ url: "https://pay.example.test/p/x" }, "url"],
      [{ status: "paid" }, "status"],
    ];
    for (const [body, field] of cases) {
      await expectInvalid("POST", CREATE, await t.ownerClient.post(path, body), field, JSON.stringify(body));
    }
    await expectProblem("POST", CREATE, await t.ownerClient.post(path, []), 400, "validation");
    assert.equal((await listLinks(t.ownerClient)).pagination.total, 0);
  }));

Deno.test("POST /v1/reservations/{id}/payment-link: 409 when the reservation owes nothing and no amount is given", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("link409");
    const { reservation: paid } = await createStay(t.ownerClient);
    await pay(t.ownerClient, paid.id, 36000);
    const { reservation: overpaid } = await createStay(t.ownerClient);
    await pay(t.ownerClient, overpaid.id, 40000);
    // Without a rate plan or a price the stay costs nothing.
    const property = await createProperty(t.ownerClient);
    const guest = await createGuest(t.ownerClient);
    const free = await createReservation(t.ownerClient, { propertyId: property.id, guestId: guest.id });
    assert.equal(free.totalAmount, 0);

    for (const reservation of [paid, overpaid, free]) {
      const refused = await t.ownerClient.post(`/reservations/${reservation.id}/payment-link`, {});
      assert.match((await expectProblem("POST", CREATE, refused, 409, "nothing-owed")).detail, /owes nothing/);
    }
    assert.equal((await listLinks(t.ownerClient)).pagination.total, 0, "nothing was created");

    // Naming an amount still asks for it (extras, a damage charge).
    const extra = await createLink(t.ownerClient, paid.id, { amount: 2500, description: "Minibar" });
    assert.deepEqual([extra.amount, extra.status], [2500, "active"]);
  }));

Deno.test("POST /v1/reservations/{id}/payment-link: 422 for an expiry in the past; nothing is created", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("link422");
    const { reservation } = await createStay(t.ownerClient);
    const path = `/reservations/${reservation.id}/payment-link`;
    const past = await t.ownerClient.post(path, { expiresAt: "2020-01-01T00:00:00Z" });
    await expectProblem("POST", CREATE, past, 422, "unprocessable");
    const aMinuteAgo = await t.ownerClient.post(path, { expiresAt: new Date(Date.now() - 60_000).toISOString() });
    await expectProblem("POST", CREATE, aMinuteAgo, 422, "unprocessable");
    assert.equal((await listLinks(t.ownerClient)).pagination.total, 0);
  }));

Deno.test("POST /v1/reservations/{id}/payment-link: the database allows an amount above the balance, and a link for a cancelled stay", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("link-allowed");
    const { reservation } = await createStay(t.ownerClient);
    const above = await createLink(t.ownerClient, reservation.id, { amount: 50000 });
    assert.deepEqual([above.amount, above.status], [50000, "active"]);

    await expectMinimal("POST", "/v1/reservations/{id}/cancel", await t.ownerClient.post(`/reservations/${reservation.id}/cancel`, {}), 204);
    const { body: cancelled } = await readReservation(t.ownerClient, reservation.id);
    assert.deepEqual([cancelled.status, cancelled.balance], ["cancelled", 36000]);
    const fee = await createLink(t.ownerClient, reservation.id, { amount: 5000, description: "Cancellation fee" });
    assert.deepEqual([fee.amount, fee.status], [5000, "active"]);
    // Without an amount it asks for the balance, which a cancellation leaves as it was.
    assert.equal((await createLink(t.ownerClient, reservation.id)).amount, 36000);
  }));

Deno.test("POST /v1/reservations/{id}/payment-link: 404 for unknown, malformed and other tenants' reservations", () =>
  withFixture(async ({ tenant }) => {
    const a = await tenant("link404-a");
    const b = await tenant("link404-b");
    const { reservation } = await createStay(a.ownerClient);
    for (const id of [UNKNOWN_ID, MALFORMED_ID, reservation.id]) {
      const response = await b.ownerClient.post(`/reservations/${id}/payment-link`, { amount: 1000 });
      await expectProblem("POST", CREATE, response, 404, "not-found");
    }
    assert.equal((await listLinks(a.ownerClient)).pagination.total, 0);
    assert.equal((await listLinks(b.ownerClient)).pagination.total, 0);
  }));

// ---------------------------------------------------------------- GET /v1/payment-links

Deno.test("GET /v1/payment-links: the tenant's links newest first, paged, filtered by reservation and status", () =>
  withFixture(async ({ sql, tenant, memberOf }) => {
    const t = await tenant("links");
    const other = await tenant("links-other");
    const staff = await memberOf(t, "staff");
    const { reservation: a, property } = await createStay(t.ownerClient);
    const b = await createReservation(t.ownerClient, { propertyId: property.id, guestId: a.guestId }, { totalAmount: 20000 });

    const l1 = await createLink(t.ownerClient, a.id, { amount: 1000 });
    const l2 = await createLink(t.ownerClient, a.id, { amount: 2000 });
    const l3 = await createLink(t.ownerClient, b.id, { amount: 3000 });
    const l4 = await createLink(t.ownerClient, a.id, { amount: 4000 });
    const l5 = await createLink(t.ownerClient, b.id, { amount: 5000 });
    const { reservation: elsewhere } = await createStay(other.ownerClient);
    await createLink(other.ownerClient, elsewhere.id);
    await expectMinimal("POST", CANCEL, await t.ownerClient.post(`/payment-links/${l2.id}/cancel`), 204);
    await payThroughLink(sql, t.tenantId, l4);
    await expire(sql, l5);

    const api = client(staff, t.tenantId);
    const all = await expectPaging((query) => listLinks(api, query), [l5.id, l4.id, l3.id, l2.id, l1.id], ["?limit=2&offset=2", "?offset=5"]);
    assert.deepEqual(all.data.map((l) => [l.id, l.status]), [
      [l5.id, "expired"],
      [l4.id, "paid"],
      [l3.id, "active"],
      [l2.id, "cancelled"],
      [l1.id, "active"],
    ]);
    assert.deepEqual(all.data[4], l1);

    // Paying through the link marked it paid and reached the reservation.
    const paid = all.data[1]!;
    assert.ok(paid.paidAt !== null && paid.cancelledAt === null, JSON.stringify(paid));
    assert.equal((await readReservation(api, a.id)).body.amountPaid, 4000);

    const ofA = await listLinks(api, `?reservationId=${a.id}`);
    assert.deepEqual(ofA.data.map((l) => l.id), [l4.id, l2.id, l1.id]);
    assert.equal(ofA.pagination.total, 3);
    const active = await listLinks(api, "?status=active");
    assert.deepEqual(active.data.map((l) => l.id), [l3.id, l1.id]);
    const cancelled = await listLinks(api, "?status=cancelled");
    assert.deepEqual(cancelled.data.map((l) => l.id), [l2.id]);
    const done = await listLinks(api, "?status=paid,expired");
    assert.deepEqual(done.data.map((l) => l.id), [l5.id, l4.id]);
    assert.equal(done.pagination.total, 2);
    const both = await listLinks(api, `?reservationId=${a.id}&status=active,paid`);
    assert.deepEqual(both.data.map((l) => l.id), [l4.id, l1.id]);
    assert.deepEqual(await listLinks(api, `?reservationId=${elsewhere.id}`), {
      data: [],
      pagination: { limit: 20, offset: 0, total: 0, hasMore: false },
    });
  }));

Deno.test("GET /v1/payment-links: 400 for a bad query", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("links400");
    const cases: [string, string][] = [
      ["status=open", "status.0"],
      ["status=active,refunded", "status.1"],
      ["status=", "status.0"],
      ["reservationId=abc", "reservationId"],
      ["limit=0", "limit"],
      ["limit=101", "limit"],
      ["offset=-1", "offset"],
      ["source=manual", "source"],
      ["status=active&status=paid", "status"],
    ];
    for (const [query, field] of cases) {
      await expectInvalid("GET", LINKS, await t.ownerClient.get(`/payment-links?${query}`), field, query);
    }
  }));

// ---------------------------------------------------------------- GET /v1/payment-links/{id}

Deno.test("GET /v1/payment-links/{id}: 200 with the ETag the write gave; unknown, malformed and other tenants' ids are 404", () =>
  withFixture(async ({ tenant, memberOf }) => {
    const a = await tenant("link-get-a");
    const b = await tenant("link-get-b");
    const staff = await memberOf(a, "staff");
    await addMember(b.ownerClient, staff, "staff");
    const { reservation } = await createStay(a.ownerClient);
    const written = await a.ownerClient.post(`/reservations/${reservation.id}/payment-link`, {}, representation);
    const link = await expectStatus<PaymentLink>("POST", CREATE, written, 201);

    const read = await client(staff, a.tenantId).get(`/payment-links/${link.id}`);
    assert.deepEqual(await expectStatus("GET", LINK, read, 200), link);
    assert.equal(read.headers.get("etag"), written.headers.get("etag"));

    const inB = client(staff, b.tenantId);
    for (const id of [link.id, UNKNOWN_ID, MALFORMED_ID]) {
      await expectProblem("GET", LINK, await inB.get(`/payment-links/${id}`), 404, "not-found");
    }
  }));

// ---------------------------------------------------------------- POST /v1/payment-links/{id}/cancel

Deno.test("POST /v1/payment-links/{id}/cancel: 204 with an ETag, or 200 with the link; status cancelled and cancelledAt stamped", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("cancel");
    const { reservation } = await createStay(t.ownerClient);
    const link = await createLink(t.ownerClient, reservation.id, { amount: 1000, description: "Deposit" });

    const { etag } = await expectMinimal("POST", CANCEL, await t.ownerClient.post(`/payment-links/${link.id}/cancel`), 204);
    const read = await t.ownerClient.get(`/payment-links/${link.id}`);
    const cancelled = await expectStatus<PaymentLink>("GET", LINK, read, 200);
    assert.equal(read.headers.get("etag"), etag);
    assert.deepEqual(cancelled, {
      ...link,
      status: "cancelled",
      cancelledAt: cancelled.cancelledAt,
      updatedAt: cancelled.updatedAt,
    });
    assert.ok(cancelled.cancelledAt !== null);
    assert.equal(cancelled.cancelledAt, cancelled.updatedAt);
    assert.ok(Date.parse(cancelled.cancelledAt) >= Date.parse(link.createdAt));

    const another = await createLink(t.ownerClient, reservation.id, { amount: 2000 });
    const response = await t.ownerClient.post(`/payment-links/${another.id}/cancel`, undefined, representation);
    const body = await expectStatus<PaymentLink>("POST", CANCEL, response, 200);
    assert.equal(response.headers.get("preference-applied"), "return=representation");
    assert.deepEqual([body.id, body.status, body.amount], [another.id, "cancelled", 2000]);
    assert.ok(body.cancelledAt !== null && body.paidAt === null);
    const again = await t.ownerClient.get(`/payment-links/${another.id}`);
    assert.deepEqual(await expectStatus("GET", LINK, again, 200), body);
    assert.equal(again.headers.get("etag"), response.headers.get("etag"));

    // Cancelling the link takes nothing off the reservation.
    assert.equal((await readReservation(t.ownerClient, reservation.id)).body.balance, 36000);
  }));

Deno.test("POST /v1/payment-links/{id}/cancel: cancelling a cancelled link again is 409 naming its status; nothing changes", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("cancel-again");
    const { reservation } = await createStay(t.ownerClient);
    const link = await createLink(t.ownerClient, reservation.id, { amount: 1000 });
    await expectMinimal("POST", CANCEL, await t.ownerClient.post(`/payment-links/${link.id}/cancel`), 204);
    const first = await t.ownerClient.get(`/payment-links/${link.id}`);
    const cancelled = await expectStatus<PaymentLink>("GET", LINK, first, 200);

    const again = await t.ownerClient.post(`/payment-links/${link.id}/cancel`, undefined, representation);
    assert.match((await expectProblem("POST", CANCEL, again, 409, "lifecycle-transition-refused")).detail, /cancelled/);
    const after = await t.ownerClient.get(`/payment-links/${link.id}`);
    assert.deepEqual(await expectStatus("GET", LINK, after, 200), cancelled, "nothing changed");
    assert.equal(after.headers.get("etag"), first.headers.get("etag"));
  }));

Deno.test("POST /v1/payment-links/{id}/cancel: a paid or expired link is 409 naming its status; nothing changes", () =>
  withFixture(async ({ sql, tenant }) => {
    const t = await tenant("cancel-final");
    const { reservation } = await createStay(t.ownerClient);
    const paid = await createLink(t.ownerClient, reservation.id, { amount: 1000 });
    await payThroughLink(sql, t.tenantId, paid);
    const expired = await createLink(t.ownerClient, reservation.id, { amount: 2000 });
    await expire(sql, expired);

    for (const [link, status] of [[paid, "paid"], [expired, "expired"]] as const) {
      const before = await readLink(t.ownerClient, link.id);
      assert.equal(before.status, status);
      const refused = await t.ownerClient.post(`/payment-links/${link.id}/cancel`);
      const problem = await expectProblem("POST", CANCEL, refused, 409, "lifecycle-transition-refused");
      assert.match(problem.detail, new RegExp(`${status} payment link can no longer change`));
      assert.deepEqual(await readLink(t.ownerClient, link.id), before, "nothing changed");
    }
    assert.equal((await readReservation(t.ownerClient, reservation.id)).body.amountPaid, 1000);
  }));

Deno.test("POST /v1/payment-links/{id}/cancel: 404 for unknown, malformed and other tenants' links; the link stays active", () =>
  withFixture(async ({ tenant }) => {
    const a = await tenant("cancel404-a");
    const b = await tenant("cancel404-b");
    const { reservation } = await createStay(a.ownerClient);
    const link = await createLink(a.ownerClient, reservation.id);
    for (const id of [link.id, UNKNOWN_ID, MALFORMED_ID]) {
      await expectProblem("POST", CANCEL, await b.ownerClient.post(`/payment-links/${id}/cancel`), 404, "not-found");
    }
    assert.deepEqual(await readLink(a.ownerClient, link.id), link);
  }));

// ---------------------------------------------------------------- role matrix

Deno.test("role matrix: payment links — owner, admin and staff each create a link and cancel it", () =>
  withFixture(async ({ tenant, memberOf }) => {
    const t = await tenant("link-roles");
    const admin = await memberOf(t, "admin");
    const staff = await memberOf(t, "staff");
    const { reservation } = await createStay(t.ownerClient);

    for (const member of [t.owner, admin, staff]) {
      const api = client(member, t.tenantId);
      const path = `/reservations/${reservation.id}/payment-link`;
      const response = await api.post(path, { amount: 1500 });
      await expectMinimal("POST", CREATE, response, 201);
      const { body: link } = await readBack<PaymentLink>(api, path, response, LINK);
      assert.deepEqual([link.amount, link.status], [1500, "active"]);

      await expectMinimal("POST", CANCEL, await api.post(`/payment-links/${link.id}/cancel`), 204);
      assert.equal((await readLink(api, link.id)).status, "cancelled");
    }
    const cancelled = await listLinks(client(staff, t.tenantId), "?status=cancelled");
    assert.equal(cancelled.pagination.total, 3);
  }));
