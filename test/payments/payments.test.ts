// Payments end to end through the gateway: recording one against a reservation
// (POST /v1/reservations/{id}/payments, src/reservations/handlers.ts), reading them
// (src/payments/handlers.ts), how the reservation's amountPaid and balance follow, and
// who may record. The rules are supabase/migrations/20261122000600_payments.sql.
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
  representation,
  type Schemas,
  UNKNOWN_ID,
  withFixture,
} from "../support/api.ts";
import { createGuest, createProperty, createReservation, createStay, instant, readReservation } from "../support/domain.ts";

const RECORD = "/v1/reservations/{id}/payments";
const PAYMENTS = "/v1/payments";
const PAYMENT = "/v1/payments/{id}";

type Payment = Schemas["Payment"];

async function recordPayment(api: Client, reservationId: string, body: Record<string, unknown>): Promise<Payment> {
  const response = await api.post(`/reservations/${reservationId}/payments`, body, representation);
  return await expectStatus<Payment>("POST", RECORD, response, 201);
}

const listPayments = (api: Client, query = "") => listPage<Payment>(api, PAYMENTS, query);

// A payment the API cannot record (it records only manual ones): one made through a
// payment link, as the payment page would, with the admin connection.
async function insertLinkPayment(
  sql: postgres.Sql,
  tenantId: string,
  reservationId: string,
  receivedAt: string,
): Promise<{ paymentId: string; linkId: string }> {
  const [link] = await sql<{ id: string }[]>`
    insert into public.payment_links (tenant_id, reservation_id, amount, currency)
    values (${tenantId}, ${reservationId}, 2500, null) returning id`;
  const [payment] = await sql<{ id: string }[]>`
    insert into public.payments (tenant_id, reservation_id, payment_link_id, amount, currency, source, received_at)
    values (${tenantId}, ${reservationId}, ${link!.id}, 2500, null, 'payment_link', ${receivedAt}) returning id`;
  return { paymentId: payment!.id, linkId: link!.id };
}

// One reported by a payment system through the external API.
async function insertExternalPayment(sql: postgres.Sql, tenantId: string, reservationId: string, receivedAt: string) {
  const [payment] = await sql<{ id: string }[]>`
    insert into public.payments (tenant_id, reservation_id, amount, currency, source, external_reference, received_at)
    values (${tenantId}, ${reservationId}, 1500, null, 'external', ${`psp-${crypto.randomUUID()}`}, ${receivedAt})
    returning id`;
  return payment!.id;
}

// ---------------------------------------------------------------- POST /v1/reservations/{id}/payments

Deno.test("POST /v1/reservations/{id}/payments with return=representation: 201, the payment, Location and ETag; the balance follows", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("pay");
    const { reservation } = await createStay(t.ownerClient);
    const { body: before } = await readReservation(t.ownerClient, reservation.id);
    assert.deepEqual([before.totalAmount, before.amountPaid, before.balance], [36000, 0, 36000]);

    const input = {
      amount: 10000,
      currency: "EUR",
      method: "cash",
      externalReference: `desk-${crypto.randomUUID().slice(0, 8)}`,
      receivedAt: "2027-03-10T18:30:00+01:00",
      notes: "Deposit taken at the desk",
    };
    const response = await t.ownerClient.post(`/reservations/${reservation.id}/payments`, input, representation);
    const created = await expectStatus<Payment>("POST", RECORD, response, 201);
    assert.deepEqual(
      { ...created, id: undefined, receivedAt: instant(created.receivedAt), createdAt: undefined, updatedAt: undefined },
      {
        ...input,
        reservationId: reservation.id,
        paymentLinkId: null,
        source: "manual",
        receivedAt: "2027-03-10T17:30:00.000Z",
        id: undefined,
        createdAt: undefined,
        updatedAt: undefined,
      },
    );
    assert.equal(created.createdAt, created.updatedAt);
    assert.equal(response.headers.get("preference-applied"), "return=representation");
    assert.match(response.headers.get("etag") ?? "", /^"[A-Za-z0-9_-]+"$/);

    const { location, body } = await readBack(t.ownerClient, `/reservations/${reservation.id}/payments`, response, PAYMENT);
    assert.equal(location, `/payments/${created.id}`);
    assert.deepEqual(body, created);

    const { body: after } = await readReservation(t.ownerClient, reservation.id);
    assert.deepEqual(after, { ...before, amountPaid: 10000, balance: 26000, updatedAt: after.updatedAt });
  }));

Deno.test("POST /v1/reservations/{id}/payments without Prefer: 201 with Location, ETag and the new id; currency, card and now by default", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("pay-min");
    // A reservation priced in dollars, at a property that takes dollars.
    const property = await createProperty(t.ownerClient, { timezone: "America/New_York", currency: "USD" });
    const guest = await createGuest(t.ownerClient);
    const reservation = await createReservation(t.ownerClient, { propertyId: property.id, guestId: guest.id }, {
      totalAmount: 50000,
    });
    assert.equal(reservation.currency, "USD");

    const path = `/reservations/${reservation.id}/payments`;
    const response = await t.ownerClient.post(path, { amount: 12345 });
    await expectMinimal("POST", RECORD, response, 201);
    const { location, body: payment } = await readBack<Payment>(t.ownerClient, path, response, PAYMENT);
    assert.match(location, /^\/payments\/[0-9a-f-]{36}$/);
    assert.deepEqual(
      { ...payment, id: undefined, receivedAt: undefined, createdAt: undefined, updatedAt: undefined },
      {
        reservationId: reservation.id,
        paymentLinkId: null,
        amount: 12345,
        currency: "USD",
        method: "card",
        source: "manual",
        externalReference: null,
        notes: null,
        id: undefined,
        receivedAt: undefined,
        createdAt: undefined,
        updatedAt: undefined,
      },
    );
    // Received when it was recorded: the same instant as the row's creation.
    assert.equal(payment.receivedAt, payment.createdAt);
    assert.ok(Math.abs(Date.parse(payment.receivedAt) - Date.now()) < 60_000, payment.receivedAt);

    // A second payment adds to the first.
    await expectMinimal("POST", RECORD, await t.ownerClient.post(path, { amount: 7655, method: "bank_transfer" }), 201);
    const { body: after } = await readReservation(t.ownerClient, reservation.id);
    assert.deepEqual([after.amountPaid, after.balance], [20000, 30000]);
  }));

Deno.test("POST /v1/reservations/{id}/payments: 400 for a bad amount, an unknown field or a bad method; nothing is recorded", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("pay400");
    const { reservation } = await createStay(t.ownerClient);
    const before = await readReservation(t.ownerClient, reservation.id);
    const path = `/reservations/${reservation.id}/payments`;
    const cases: [unknown, string][] = [
      [{ amount: 0 }, "amount"],
      [{ amount: -500 }, "amount"],
      [{ amount: 12.5 }, "amount"],
      [{ amount: "100" }, "amount"],
      [{}, "amount"],
      [{ amount: 100, method: "cheque" }, "method"],
      [{ amount: 100, method: "CARD" }, "method"],
      [{ amount: 100, tip: 5 }, "tip"],
      [{ amount: 100, source: "external" }, "source"],
      [{ amount: 100, currency: "eur" }, "currency"],
      [{ amount: 100, receivedAt: "yesterday" }, "receivedAt"],
      [{ amount: 100, receivedAt: "2027-03-10T18:30:00" }, "receivedAt"],
      [{ amount: 100, externalReference: "" }, "externalReference"],
      [{ amount: 100, notes: "x".repeat(1001) }, "notes"],
    ];
    for (const [body, field] of cases) {
      await expectInvalid("POST", RECORD, await t.ownerClient.post(path, body), field, JSON.stringify(body));
    }
    await expectProblem("POST", RECORD, await t.ownerClient.post(path), 400, "validation");

    assert.deepEqual(await readReservation(t.ownerClient, reservation.id), before, "nothing changed");
    assert.equal((await listPayments(t.ownerClient)).pagination.total, 0);
  }));

Deno.test("POST /v1/reservations/{id}/payments: a currency other than the reservation's is 422; nothing is recorded", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("pay-currency");
    const { reservation } = await createStay(t.ownerClient);
    assert.equal(reservation.currency, "EUR");
    const before = await readReservation(t.ownerClient, reservation.id);
    const refused = await t.ownerClient.post(`/reservations/${reservation.id}/payments`, { amount: 1000, currency: "USD" });
    const problem = await expectProblem("POST", RECORD, refused, 422, "unprocessable");
    assert.deepEqual(await readReservation(t.ownerClient, reservation.id), before, "nothing changed");
    assert.equal((await listPayments(t.ownerClient)).pagination.total, 0);
    // The client sent a currency, not a reference: the problem says what is wrong with it.
    assert.match(problem.detail, /currency/i);
  }));

Deno.test("POST /v1/reservations/{id}/payments: 409 for an external reference the tenant already recorded; another tenant may use it", () =>
  withFixture(async ({ tenant }) => {
    const a = await tenant("pay-ref-a");
    const b = await tenant("pay-ref-b");
    const { reservation } = await createStay(a.ownerClient);
    const externalReference = `terminal-${crypto.randomUUID()}`;
    await recordPayment(a.ownerClient, reservation.id, { amount: 5000, externalReference });
    const before = await readReservation(a.ownerClient, reservation.id);

    const again = await a.ownerClient.post(`/reservations/${reservation.id}/payments`, { amount: 5000, externalReference });
    assert.match((await expectProblem("POST", RECORD, again, 409, "already-exists")).detail, /external reference/);
    assert.deepEqual(await readReservation(a.ownerClient, reservation.id), before, "nothing changed");
    assert.equal((await listPayments(a.ownerClient)).pagination.total, 1);

    const { reservation: elsewhere } = await createStay(b.ownerClient);
    const other = await recordPayment(b.ownerClient, elsewhere.id, { amount: 5000, externalReference });
    assert.equal(other.externalReference, externalReference);
  }));

Deno.test("POST /v1/reservations/{id}/payments: a cancelled reservation still takes a payment, and its balance follows", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("pay-cancelled");
    const { reservation } = await createStay(t.ownerClient);
    const cancel = await t.ownerClient.post(`/reservations/${reservation.id}/cancel`, { reason: "Guest fell ill" });
    await expectMinimal("POST", "/v1/reservations/{id}/cancel", cancel, 204);
    const { body: before } = await readReservation(t.ownerClient, reservation.id);
    assert.equal(before.status, "cancelled");

    // A cancellation fee, say: the database has no rule against it.
    const payment = await recordPayment(t.ownerClient, reservation.id, { amount: 5000 });
    assert.equal(payment.reservationId, reservation.id);
    const { body: after } = await readReservation(t.ownerClient, reservation.id);
    assert.deepEqual(after, { ...before, amountPaid: 5000, balance: 31000, updatedAt: after.updatedAt });
  }));

Deno.test("POST /v1/reservations/{id}/payments: an overpayment is recorded and leaves a negative balance", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("pay-over");
    const { reservation } = await createStay(t.ownerClient);
    await recordPayment(t.ownerClient, reservation.id, { amount: 30000 });
    await recordPayment(t.ownerClient, reservation.id, { amount: 10000, method: "cash" });
    const { body: after } = await readReservation(t.ownerClient, reservation.id);
    assert.deepEqual([after.totalAmount, after.amountPaid, after.balance], [36000, 40000, -4000]);
  }));

Deno.test("POST /v1/reservations/{id}/payments: 404 for unknown, malformed and other tenants' reservations", () =>
  withFixture(async ({ tenant }) => {
    const a = await tenant("pay404-a");
    const b = await tenant("pay404-b");
    const { reservation } = await createStay(a.ownerClient);
    const before = await readReservation(a.ownerClient, reservation.id);
    for (const id of [UNKNOWN_ID, MALFORMED_ID, reservation.id]) {
      const response = await b.ownerClient.post(`/reservations/${id}/payments`, { amount: 1000 });
      assert.match((await expectProblem("POST", RECORD, response, 404, "not-found")).detail, /No such/);
    }
    assert.deepEqual(await readReservation(a.ownerClient, reservation.id), before, "nothing changed");
    assert.equal((await listPayments(a.ownerClient)).pagination.total, 0);
    assert.equal((await listPayments(b.ownerClient)).pagination.total, 0);
  }));

// ---------------------------------------------------------------- GET /v1/payments

Deno.test("GET /v1/payments: the tenant's payments newest first, paged, filtered by reservation and source", () =>
  withFixture(async ({ sql, tenant, memberOf }) => {
    const t = await tenant("list");
    const other = await tenant("list-other");
    const staff = await memberOf(t, "staff");
    const { reservation: a, property } = await createStay(t.ownerClient);
    const b = await createReservation(t.ownerClient, { propertyId: property.id, guestId: a.guestId }, { totalAmount: 20000 });

    const p1 = await recordPayment(t.ownerClient, a.id, { amount: 1000, receivedAt: "2027-01-01T09:00:00Z" });
    const p2 = await recordPayment(t.ownerClient, a.id, { amount: 2000, receivedAt: "2027-01-03T09:00:00Z" });
    const p3 = await recordPayment(t.ownerClient, b.id, { amount: 3000, receivedAt: "2027-01-02T09:00:00Z" });
    const viaLink = await insertLinkPayment(sql, t.tenantId, a.id, "2027-01-04T09:00:00Z");
    const external = await insertExternalPayment(sql, t.tenantId, b.id, "2027-01-02T09:00:00Z");
    const { reservation: elsewhere } = await createStay(other.ownerClient);
    await recordPayment(other.ownerClient, elsewhere.id, { amount: 1000, receivedAt: "2027-01-05T09:00:00Z" });

    // Equal receipt times are ordered by id.
    const tied = [p3.id, external].sort();
    const api = client(staff, t.tenantId);
    const all = await expectPaging((query) => listPayments(api, query), [viaLink.paymentId, p2.id, ...tied, p1.id], [
      "?limit=2&offset=1",
      "?offset=10",
    ]);
    const linked = all.data[0]!;
    assert.deepEqual(
      [linked.source, linked.paymentLinkId, linked.amount, linked.currency, linked.reservationId],
      ["payment_link", viaLink.linkId, 2500, "EUR", a.id],
    );
    assert.deepEqual(all.data.find((p) => p.id === p2.id), p2);

    const ofA = await listPayments(api, `?reservationId=${a.id}`);
    assert.deepEqual(ofA.data.map((p) => p.id), [viaLink.paymentId, p2.id, p1.id]);
    assert.equal(ofA.pagination.total, 3);
    const manual = await listPayments(api, "?source=manual");
    assert.deepEqual(manual.data.map((p) => p.id), [p2.id, p3.id, p1.id]);
    const notManual = await listPayments(api, "?source=payment_link,external");
    assert.deepEqual(notManual.data.map((p) => [p.id, p.source]), [[viaLink.paymentId, "payment_link"], [external, "external"]]);
    const spaced = await listPayments(api, "?source=external,%20payment_link");
    assert.deepEqual(spaced.data.map((p) => p.id), [viaLink.paymentId, external]);
    const both = await listPayments(api, `?reservationId=${b.id}&source=manual`);
    assert.deepEqual(both.data.map((p) => p.id), [p3.id]);
    assert.equal(both.pagination.total, 1);
    assert.deepEqual(await listPayments(api, `?reservationId=${elsewhere.id}`), {
      data: [],
      pagination: { limit: 20, offset: 0, total: 0, hasMore: false },
    });

    // The amounts reached the reservations: manual, link and external alike.
    assert.deepEqual([(await readReservation(api, a.id)).body.amountPaid, (await readReservation(api, b.id)).body.amountPaid], [5500, 4500]);
  }));

Deno.test("GET /v1/payments: 400 for a bad query", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("list400");
    const cases: [string, string][] = [
      ["source=refund", "source.0"],
      ["source=manual,refund", "source.1"],
      ["source=", "source.0"],
      ["reservationId=abc", "reservationId"],
      ["limit=0", "limit"],
      ["limit=101", "limit"],
      ["limit=abc", "limit"],
      ["offset=-1", "offset"],
      ["sort=receivedAt", "sort"],
      ["source=manual&source=external", "source"],
    ];
    for (const [query, field] of cases) {
      await expectInvalid("GET", PAYMENTS, await t.ownerClient.get(`/payments?${query}`), field, query);
    }
  }));

// ---------------------------------------------------------------- GET /v1/payments/{id}

Deno.test("GET /v1/payments/{id}: 200 with the ETag the write gave; unknown, malformed and other tenants' ids are 404", () =>
  withFixture(async ({ tenant, memberOf }) => {
    const a = await tenant("get-a");
    const b = await tenant("get-b");
    const staff = await memberOf(a, "staff");
    await addMember(b.ownerClient, staff, "staff");
    const { reservation } = await createStay(a.ownerClient);
    const written = await a.ownerClient.post(`/reservations/${reservation.id}/payments`, { amount: 4200 }, representation);
    const payment = await expectStatus<Payment>("POST", RECORD, written, 201);

    const read = await client(staff, a.tenantId).get(`/payments/${payment.id}`);
    assert.deepEqual(await expectStatus("GET", PAYMENT, read, 200), payment);
    assert.equal(read.headers.get("etag"), written.headers.get("etag"));

    const inB = client(staff, b.tenantId);
    for (const id of [payment.id, UNKNOWN_ID, MALFORMED_ID]) {
      await expectProblem("GET", PAYMENT, await inB.get(`/payments/${id}`), 404, "not-found");
    }
  }));

// ---------------------------------------------------------------- role matrix

Deno.test("role matrix: payments — owner, admin and staff each record a payment and read it", () =>
  withFixture(async ({ tenant, memberOf }) => {
    const t = await tenant("roles");
    const admin = await memberOf(t, "admin");
    const staff = await memberOf(t, "staff");
    const { reservation } = await createStay(t.ownerClient);

    let paid = 0;
    for (const [member, amount] of [[t.owner, 1000], [admin, 2000], [staff, 3000]] as const) {
      const api = client(member, t.tenantId);
      const path = `/reservations/${reservation.id}/payments`;
      const response = await api.post(path, { amount, method: "cash" });
      await expectMinimal("POST", RECORD, response, 201);
      const { body: payment } = await readBack<Payment>(api, path, response, PAYMENT);
      assert.deepEqual([payment.amount, payment.method], [amount, "cash"]);
      paid += amount;
      const { body: now } = await readReservation(api, reservation.id);
      assert.deepEqual([now.amountPaid, now.balance], [paid, 36000 - paid]);
    }
    assert.equal((await listPayments(client(staff, t.tenantId))).pagination.total, 3);
  }));
