// POST /v1/external/reservations/{id}/payments (src/external/handlers.ts): a payment
// system records money on its property's reservations. A retry, by externalReference
// or by Idempotency-Key, records nothing new, however many arrive at once.
import assert from "node:assert/strict";
import type postgres from "postgres";
import { expectInvalid, expectProblem, expectStatus, MALFORMED_ID, UNKNOWN_ID, withFixture } from "../support/api.ts";
import { createStay, type Reservation } from "../support/domain.ts";
import { external, issueApiKey } from "../support/integration.ts";

const PAY = "/v1/external/reservations/{id}/payments";
const REPRESENTATION = { prefer: "return=representation" };

type Payment = { id: string; reservationId: string; amount: number; currency: string; method: string; source: string; externalReference: string };

function pay(key: string, reservationId: string, body: unknown, headers: Record<string, string> = {}) {
  return external("POST", `/reservations/${reservationId}/payments`, key, { body, headers });
}

async function paymentsOf(sql: postgres.Sql, reservationId: string): Promise<{ amount: number; external_reference: string }[]> {
  const rows = await sql<{ amount: number; external_reference: string }[]>`
    select amount::int, external_reference from public.payments where reservation_id = ${reservationId} order by created_at`;
  return rows.map((row) => ({ ...row }));
}

async function balanceOf(key: string, reservationId: string): Promise<number> {
  const response = await external("GET", `/reservations/${reservationId}`, key);
  return (await expectStatus<Reservation>("GET", "/v1/external/reservations/{id}", response, 200)).balance;
}

Deno.test("a payment answers 201 with Location and no body, or with it under Prefer; it is external, and the balance follows", () =>
  withFixture(async ({ sql, tenant }) => {
    const a = await tenant("psp");
    const stay = await createStay(a.ownerClient, { status: "confirmed" });
    const key = await issueApiKey(a.ownerClient, stay.property.id);
    const before = await balanceOf(key.secret, stay.reservation.id);

    const minimal = await pay(key.secret, stay.reservation.id, { amount: 5000, currency: "EUR", method: "card", externalReference: "psp-1" });
    assert.equal(await expectStatus("POST", PAY, minimal, 201), undefined, "the contract documents this body empty");
    assert.equal(minimal.headers.get("idempotent-replayed"), null);
    // Location names the payment where the key reads it.
    const location = minimal.headers.get("location") ?? "";
    assert.match(location, /^\.\.\/\.\.\/\.\.\/external\/payments\/[0-9a-f-]{36}$/);
    const recorded = await external("GET", `/payments/${location.split("/").at(-1)}`, key.secret);
    const first = await expectStatus<Payment>("GET", "/v1/external/payments/{id}", recorded, 200);
    assert.deepEqual({ amount: first.amount, source: first.source, reservationId: first.reservationId }, {
      amount: 5000, source: "external", reservationId: stay.reservation.id,
    });

    const full = await pay(key.secret, stay.reservation.id, {
      amount: 2500, currency: "EUR", method: "bank_transfer", externalReference: "psp-2", receivedAt: "2027-03-01T10:00:00+01:00",
    }, REPRESENTATION);
    const payment = await expectStatus<Payment & { receivedAt: string }>("POST", PAY, full, 201);
    assert.equal(full.headers.get("preference-applied"), "return=representation");
    assert.deepEqual(
      { reservationId: payment.reservationId, amount: payment.amount, currency: payment.currency, method: payment.method, source: payment.source },
      { reservationId: stay.reservation.id, amount: 2500, currency: "EUR", method: "bank_transfer", source: "external" },
    );
    assert.equal(new Date(payment.receivedAt).toISOString(), "2027-03-01T09:00:00.000Z");
    assert.equal(await balanceOf(key.secret, stay.reservation.id), before - 7500);
    assert.deepEqual(await paymentsOf(sql, stay.reservation.id), [
      { amount: 5000, external_reference: "psp-1" },
      { amount: 2500, external_reference: "psp-2" },
    ]);
  }));

Deno.test("a payment in another currency is a 422; a malformed body is a 400; neither records anything", () =>
  withFixture(async ({ sql, tenant }) => {
    const a = await tenant("psp");
    const stay = await createStay(a.ownerClient, { status: "confirmed" });
    const key = await issueApiKey(a.ownerClient, stay.property.id);
    const valid = { amount: 5000, currency: "EUR", method: "card", externalReference: "psp-1" };

    const currency = await expectProblem("POST", PAY, await pay(key.secret, stay.reservation.id, { ...valid, currency: "USD" }), 422, "unprocessable");
    assert.match(currency.detail, /EUR/);
    assert.deepEqual(currency.errors?.map((error) => error.path), ["currency"]);
    for (const [body, field] of [
      [{ ...valid, externalReference: undefined }, "externalReference"],
      [{ ...valid, method: undefined }, "method"],
      [{ ...valid, amount: 0 }, "amount"],
      [{ ...valid, amount: 1.5 }, "amount"],
      [{ ...valid, currency: "eur" }, "currency"],
      [{ ...valid, source: "manual" }, "source"],
      [{ ...valid, receivedAt: "now" }, "receivedAt"],
    ] as const) {
      await expectInvalid("POST", PAY, await pay(key.secret, stay.reservation.id, body), field, JSON.stringify(body));
    }
    assert.deepEqual(await paymentsOf(sql, stay.reservation.id), []);
  }));

Deno.test("a key of one property cannot pay another property's or another tenant's reservation: 404 and nothing recorded", () =>
  withFixture(async ({ sql, tenant }) => {
    const a = await tenant("psp");
    const b = await tenant("other");
    const stay = await createStay(a.ownerClient, { status: "confirmed" });
    const hillside = await createStay(a.ownerClient, { status: "confirmed" });
    const theirs = await createStay(b.ownerClient, { status: "confirmed" });
    const key = await issueApiKey(a.ownerClient, stay.property.id);
    const body = { amount: 5000, currency: "EUR", method: "card", externalReference: "psp-x" };

    const unknown = await expectProblem("POST", PAY, await pay(key.secret, crypto.randomUUID(), body), 404, "not-found");
    for (const target of [hillside.reservation.id, theirs.reservation.id]) {
      const problem = await expectProblem("POST", PAY, await pay(key.secret, target, body), 404, "not-found");
      assert.deepEqual(problem, unknown);
      // An Idempotency-Key changes nothing about that.
      const keyed = await pay(key.secret, target, body, { "idempotency-key": crypto.randomUUID() });
      assert.deepEqual(await expectProblem("POST", PAY, keyed, 404), unknown);
    }
    assert.deepEqual(await paymentsOf(sql, hillside.reservation.id), []);
    assert.deepEqual(await paymentsOf(sql, theirs.reservation.id), []);
    assert.equal((await sql`select 1 from public.idempotency_keys where tenant_id = ${a.tenantId}`).length, 0,
      "a refused request keeps no idempotency key");
  }));

Deno.test("the same externalReference again returns the first payment and records nothing; a different payment under it is a 409", () =>
  withFixture(async ({ sql, tenant }) => {
    const a = await tenant("psp");
    const stay = await createStay(a.ownerClient, { status: "confirmed" });
    const key = await issueApiKey(a.ownerClient, stay.property.id);
    const body = { amount: 5000, currency: "EUR", method: "card", externalReference: "psp-1" };

    const first = await expectStatus<Payment>("POST", PAY, await pay(key.secret, stay.reservation.id, body, REPRESENTATION), 201);
    const retried = await pay(key.secret, stay.reservation.id, body, REPRESENTATION);
    assert.deepEqual(await expectStatus<Payment>("POST", PAY, retried, 201), first, "the first payment");
    assert.equal(retried.headers.get("idempotent-replayed"), "true");
    const minimal = await pay(key.secret, stay.reservation.id, body);
    assert.equal(await expectStatus("POST", PAY, minimal, 201), undefined);
    assert.equal(minimal.headers.get("idempotent-replayed"), "true");

    const other = await createStay(a.ownerClient, { status: "confirmed", checkIn: "2027-08-01", checkOut: "2027-08-03" });
    const elsewhereKey = await issueApiKey(a.ownerClient, other.property.id);
    for (const [label, response] of [
      ["another amount", await pay(key.secret, stay.reservation.id, { ...body, amount: 5001 })],
      ["another method", await pay(key.secret, stay.reservation.id, { ...body, method: "cash" })],
      ["a reservation of another property", await pay(elsewhereKey.secret, other.reservation.id, body)],
    ] as const) {
      const problem = await expectProblem("POST", PAY, response, 409, "external-reference-reused");
      assert.match(problem.detail, /externalReference/, label);
    }
    assert.deepEqual(await paymentsOf(sql, stay.reservation.id), [{ amount: 5000, external_reference: "psp-1" }]);
    assert.deepEqual(await paymentsOf(sql, other.reservation.id), []);
  }));

Deno.test("Idempotency-Key: a retry replays the first answer; a different body under it is a 409; after 24 hours it is free again", () =>
  withFixture(async ({ sql, tenant }) => {
    const a = await tenant("psp");
    const stay = await createStay(a.ownerClient, { status: "confirmed" });
    const key = await issueApiKey(a.ownerClient, stay.property.id);
    const idempotency = { "idempotency-key": crypto.randomUUID() };
    const body = { amount: 5000, currency: "EUR", method: "card", externalReference: "psp-1" };

    const first = await pay(key.secret, stay.reservation.id, body, { ...idempotency, ...REPRESENTATION });
    const payment = await expectStatus<Payment>("POST", PAY, first, 201);
    // The retry asks for no representation, and still gets the first answer, byte for byte.
    const retried = await pay(key.secret, stay.reservation.id, body, idempotency);
    assert.equal(await expectStatus<Payment>("POST", PAY, retried.clone(), 201).then((p) => p.id), payment.id);
    assert.equal(await retried.text(), JSON.stringify(payment));
    assert.equal(retried.headers.get("idempotent-replayed"), "true");
    assert.equal(retried.headers.get("etag"), first.headers.get("etag"));

    const conflict = await pay(key.secret, stay.reservation.id, { ...body, externalReference: "psp-2" }, idempotency);
    assert.match((await expectProblem("POST", PAY, conflict, 422, "idempotency-key-reused")).detail, /different request/);
    await expectInvalid("POST", PAY, await pay(key.secret, stay.reservation.id, body, { "idempotency-key": "x".repeat(256) }),
      "Idempotency-Key");

    // A failed request claims nothing: the corrected retry under the same key is recorded.
    const failing = { "idempotency-key": crypto.randomUUID() };
    await expectProblem("POST", PAY, await pay(key.secret, stay.reservation.id, { ...body, currency: "USD", externalReference: "psp-3" }, failing), 422, "unprocessable");
    await expectStatus("POST", PAY, await pay(key.secret, stay.reservation.id, { ...body, externalReference: "psp-3" }, failing), 201);

    // Keys are the API key's own: another key may use the same one for its own request.
    const second = await issueApiKey(a.ownerClient, stay.property.id);
    await expectStatus("POST", PAY, await pay(second.secret, stay.reservation.id, { ...body, externalReference: "psp-4" }, idempotency), 201);

    await sql`update public.idempotency_keys set created_at = now() - interval '25 hours' where key = ${idempotency["idempotency-key"]}`;
    const reused = await pay(key.secret, stay.reservation.id, { ...body, externalReference: "psp-5" }, idempotency);
    assert.equal(await expectStatus("POST", PAY, reused, 201), undefined);
    assert.equal(reused.headers.get("idempotent-replayed"), null);

    assert.deepEqual((await paymentsOf(sql, stay.reservation.id)).map((row) => row.external_reference), ["psp-1", "psp-3", "psp-4", "psp-5"]);
  }));

Deno.test("20 concurrent retries record one payment, by externalReference and by Idempotency-Key", () =>
  withFixture(async ({ sql, tenant }) => {
    const a = await tenant("psp");
    const stay = await createStay(a.ownerClient, { status: "confirmed" });
    const key = await issueApiKey(a.ownerClient, stay.property.id);
    const body = { amount: 1000, currency: "EUR", method: "card", externalReference: "psp-burst" };
    const before = await balanceOf(key.secret, stay.reservation.id);

    const byReference = await Promise.all(Array.from({ length: 20 }, () => pay(key.secret, stay.reservation.id, body, REPRESENTATION)));
    const ids = new Set<string>();
    for (const response of byReference) ids.add((await expectStatus<Payment>("POST", PAY, response, 201)).id);
    assert.equal(ids.size, 1, "every answer is the one payment");
    assert.equal(byReference.filter((response) => response.headers.get("idempotent-replayed") === null).length, 1, "one recorded it");

    const idempotency = { "idempotency-key": crypto.randomUUID() };
    const keyedBody = { ...body, externalReference: "psp-burst-2" };
    // Half ask for the representation: only a replay of the first answer gives all 20 the same one.
    const byKey = await Promise.all(Array.from({ length: 20 }, (_, i) =>
      pay(key.secret, stay.reservation.id, keyedBody, i % 2 === 0 ? idempotency : { ...idempotency, ...REPRESENTATION })));
    const statuses = new Set(byKey.map((response) => response.status));
    assert.equal(statuses.size, 1, `one answer for all: ${[...statuses]}`);
    const texts = new Set<string>();
    for (const response of byKey) texts.add(await response.clone().text());
    assert.equal(texts.size, 1, "the same body for all");
    for (const response of byKey) await expectStatus("POST", PAY, response, [...statuses][0]!);
    assert.equal(byKey.filter((response) => response.headers.get("idempotent-replayed") === "true").length, 19);

    assert.deepEqual(await paymentsOf(sql, stay.reservation.id), [
      { amount: 1000, external_reference: "psp-burst" },
      { amount: 1000, external_reference: "psp-burst-2" },
    ]);
    assert.equal(await balanceOf(key.secret, stay.reservation.id), before - 2000);
  }));

Deno.test("a payment read by the key: its property's; another property's or tenant's answers as an unknown id", () =>
  withFixture(async ({ tenant }) => {
    const a = await tenant("psp-read");
    const b = await tenant("psp-other");
    const stay = await createStay(a.ownerClient, { status: "confirmed" });
    const hillside = await createStay(a.ownerClient, { status: "confirmed" });
    const theirs = await createStay(b.ownerClient, { status: "confirmed" });
    const key = await issueApiKey(a.ownerClient, stay.property.id);
    const hillsideKey = await issueApiKey(a.ownerClient, hillside.property.id);
    const theirKey = await issueApiKey(b.ownerClient, theirs.property.id);
    const body = { amount: 1200, currency: "EUR", method: "card" };
    const paymentId = async (secret: string, reservationId: string, externalReference: string) => {
      const response = await pay(secret, reservationId, { ...body, externalReference }, REPRESENTATION);
      return (await expectStatus<Payment>("POST", PAY, response, 201)).id;
    };
    const ours = await paymentId(key.secret, stay.reservation.id, "read-1");
    const hillsides = await paymentId(hillsideKey.secret, hillside.reservation.id, "read-2");
    const others = await paymentId(theirKey.secret, theirs.reservation.id, "read-3");

    const ONE_PAYMENT = "/v1/external/payments/{id}";
    const read = await expectStatus<Payment>("GET", ONE_PAYMENT, await external("GET", `/payments/${ours}`, key.secret), 200);
    assert.deepEqual({ id: read.id, externalReference: read.externalReference }, { id: ours, externalReference: "read-1" });
    const unknown = await expectProblem("GET", ONE_PAYMENT, await external("GET", `/payments/${UNKNOWN_ID}`, key.secret), 404, "not-found");
    for (const [label, id] of [["another property's", hillsides], ["another tenant's", others], ["a malformed id", MALFORMED_ID]]) {
      const problem = await expectProblem("GET", ONE_PAYMENT, await external("GET", `/payments/${id}`, key.secret), 404, "not-found");
      assert.deepEqual(problem, unknown, `${label} answers as an unknown id`);
    }
  }));
