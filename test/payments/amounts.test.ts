// The maxima of amounts (src/http/schemas.ts, supabase/migrations/*_amount_maxima.sql):
// a nightly price is at most 10^9 minor units, any other single amount (a total, a
// payment, a payment link) at most 10^12, and the payments of one reservation add up to at
// most 10^12. So nothing the schema keeps or sums passes what a client reads as a number
// (2^53 - 1), and the API never meets a bigint it refuses to read: one property's API key
// could otherwise pay a reservation past it and leave its tenant answering 500 for good.
import assert from "node:assert/strict";
import { type Client, expectInvalid, expectProblem, expectStatus, type Page, representation, type Schemas, withFixture } from "../support/api.ts";
import { apiDocument } from "../support/api-document.ts";
import { addDays, createGuest, createRatePlan, createStay, createUnit, type Reservation } from "../support/domain.ts";
import { external, issueApiKey } from "../support/integration.ts";

const MAX_AMOUNT = 1_000_000_000_000;
const MAX_NIGHTLY_PRICE = 1_000_000_000;

type Payment = Schemas["Payment"];

function payMember(api: Client, reservationId: string, amount: number) {
  return api.post(`/reservations/${reservationId}/payments`, { amount }, representation);
}

function payExternally(key: string, reservationId: string, amount: number, headers: Record<string, string> = {}) {
  return external("POST", `/reservations/${reservationId}/payments`, key, {
    body: { amount, currency: "EUR", method: "card", externalReference: crypto.randomUUID() },
    headers,
  });
}

// Every read of the reservation a member or the key's integration makes: all 200, with these sums.
async function readsOf(api: Client, key: string, reservationId: string, expected: { amountPaid: number; balance: number }) {
  const sums = (r: Reservation) => ({ amountPaid: r.amountPaid, balance: r.balance });
  const list = await expectStatus<Page<Reservation>>("GET", "/v1/reservations", await api.get("/reservations"), 200);
  assert.deepEqual(sums(list.data.find((r) => r.id === reservationId)!), expected, "the tenant's reservation list");
  const one = await expectStatus<Reservation>("GET", "/v1/reservations/{id}", await api.get(`/reservations/${reservationId}`), 200);
  assert.deepEqual(sums(one), expected, "the reservation");
  const theirs = await expectStatus<Page<Reservation>>("GET", "/v1/external/reservations", await external("GET", "/reservations", key), 200);
  assert.deepEqual(sums(theirs.data.find((r) => r.id === reservationId)!), expected, "the integration's list");
  const theirOne = await expectStatus<Reservation>("GET", "/v1/external/reservations/{id}",
    await external("GET", `/reservations/${reservationId}`, key), 200);
  assert.deepEqual(sums(theirOne), expected, "the integration's read");
  const payments = await expectStatus<Page<Payment>>("GET", "/v1/payments", await api.get(`/payments?reservationId=${reservationId}`), 200);
  assert.equal(payments.data.reduce((sum, payment) => sum + payment.amount, 0), expected.amountPaid, "the payments");
}

Deno.test("payments past 10^12 in all on one reservation are a 422 naming amount, on the member and the external route; every read of the tenant still answers", () =>
  withFixture(async ({ sql, tenant }) => {
    const a = await tenant("amounts");
    const api = a.ownerClient;
    const stay = await createStay(api, { status: "confirmed" });
    const id = stay.reservation.id;
    const key = (await issueApiKey(api, stay.property.id)).secret;
    const total = stay.reservation.totalAmount;

    await expectStatus<Payment>("POST", "/v1/reservations/{id}/payments", await payMember(api, id, MAX_AMOUNT - 1), 201);
    for (
      const [path, refused] of [
        ["/v1/external/reservations/{id}/payments", await payExternally(key, id, 2)],
        ["/v1/reservations/{id}/payments", await payMember(api, id, 2)],
      ] as const
    ) {
      const problem = await expectProblem("POST", path, refused, 422, "unprocessable");
      assert.deepEqual(problem.errors?.map((error) => error.path), ["amount"], problem.detail);
    }
    // An Idempotency-Key keeps no answer of a refusal: its retry is refused again, nothing replayed.
    const keyed = { "idempotency-key": crypto.randomUUID() };
    await expectProblem("POST", "/v1/external/reservations/{id}/payments", await payExternally(key, id, 2, keyed), 422, "unprocessable");
    const again = await payExternally(key, id, 2, keyed);
    await expectProblem("POST", "/v1/external/reservations/{id}/payments", again, 422, "unprocessable");
    assert.equal(again.headers.get("idempotent-replayed"), null);
    await readsOf(api, key, id, { amountPaid: MAX_AMOUNT - 1, balance: total - MAX_AMOUNT + 1 });

    // Exactly the maximum in all is taken, through the integration.
    assert.equal((await payExternally(key, id, 1)).status, 201);
    await expectProblem("POST", "/v1/reservations/{id}/payments", await payMember(api, id, 1), 422, "unprocessable");
    await readsOf(api, key, id, { amountPaid: MAX_AMOUNT, balance: total - MAX_AMOUNT });

    // A payment past what a client can read at all is a 400 before any query.
    await expectInvalid("POST", "/v1/external/reservations/{id}/payments", await payExternally(key, id, Number.MAX_SAFE_INTEGER), "amount");
    await expectInvalid("POST", "/v1/reservations/{id}/payments", await payMember(api, id, Number.MAX_SAFE_INTEGER), "amount");

    // The reservation's lifecycle goes on.
    const cancelled = await api.post(`/reservations/${id}/cancel`, {}, representation);
    assert.equal((await expectStatus<Reservation>("POST", "/v1/reservations/{id}/cancel", cancelled, 200)).status, "cancelled");
    await readsOf(api, key, id, { amountPaid: MAX_AMOUNT, balance: total - MAX_AMOUNT });
    const [stored] = await sql<{ amount_paid: string; payments: string }[]>`
      select r.amount_paid::text, (select count(*) from public.payments p where p.reservation_id = r.id)::text as payments
      from public.reservations r where r.id = ${id}`;
    assert.deepEqual({ ...stored }, { amount_paid: String(MAX_AMOUNT), payments: "2" });
  }));

Deno.test("an API key's payments cannot take a reservation past what a client can read: the reservation, the lists, the integration's reads and cancel all still answer", () =>
  withFixture(async ({ tenant }) => {
    const api = (await tenant("amounts")).ownerClient;
    const stay = await createStay(api, { status: "confirmed" });
    const key = (await issueApiKey(api, stay.property.id)).secret;
    // What a fuzzer sent: the largest safe integer, then one more.
    const largest = await payExternally(key, stay.reservation.id, Number.MAX_SAFE_INTEGER);
    const oneMore = await payExternally(key, stay.reservation.id, 1);

    await readsOf(api, key, stay.reservation.id, { amountPaid: 1, balance: stay.reservation.totalAmount - 1 });
    const cancelled = await api.post(`/reservations/${stay.reservation.id}/cancel`, {}, representation);
    await expectStatus("POST", "/v1/reservations/{id}/cancel", cancelled, 200);
    await expectInvalid("POST", "/v1/external/reservations/{id}/payments", largest, "amount");
    assert.equal(oneMore.status, 201);
  }));

Deno.test("each amount takes exactly its maximum and refuses one more: a nightly price 10^9, a total, a payment and a payment link 10^12", () =>
  withFixture(async ({ tenant }) => {
    const a = await tenant("amounts");
    const api = a.ownerClient;
    const key = async (propertyId: string) => (await issueApiKey(api, propertyId)).secret;

    // Rate plans, on creation and on change.
    const stay = await createStay(api, { status: "confirmed" });
    const plan = await createRatePlan(api, stay.property.id, { nightlyPrice: MAX_NIGHTLY_PRICE });
    assert.equal(plan.nightlyPrice, MAX_NIGHTLY_PRICE);
    const over = { propertyId: stay.property.id, name: "Too dear", code: "DEAR", currency: "EUR", nightlyPrice: MAX_NIGHTLY_PRICE + 1 };
    await expectInvalid("POST", "/v1/rate-plans", await api.post("/rate-plans", over), "nightlyPrice");
    await expectInvalid("PATCH", "/v1/rate-plans/{id}",
      await api.patch(`/rate-plans/${plan.id}`, { nightlyPrice: MAX_NIGHTLY_PRICE + 1 }), "nightlyPrice");

    // 365 nights at the most a night costs, priced by the database.
    const unit = await createUnit(api, stay.property.id);
    const guest = await createGuest(api);
    const year = await api.post("/reservations", {
      propertyId: stay.property.id, unitId: unit.id, guestId: guest.id, ratePlanId: plan.id, status: "confirmed",
      checkIn: "2028-01-01", checkOut: addDays("2028-01-01", 365),
    }, representation);
    const priced = await expectStatus<Reservation>("POST", "/v1/reservations", year, 201);
    assert.equal(priced.totalAmount, 365 * MAX_NIGHTLY_PRICE);
    const list = await expectStatus<Page<Reservation>>("GET", "/v1/reservations", await api.get("/reservations"), 200);
    assert.ok(list.data.some((r) => r.id === priced.id));

    // A reservation's total.
    const base = { propertyId: stay.property.id, guestId: guest.id, checkIn: "2029-01-01", checkOut: "2029-01-03" };
    const dear = await expectStatus<Reservation>("POST", "/v1/reservations",
      await api.post("/reservations", { ...base, totalAmount: MAX_AMOUNT }, representation), 201);
    assert.equal(dear.totalAmount, MAX_AMOUNT);
    await expectInvalid("POST", "/v1/reservations", await api.post("/reservations", { ...base, totalAmount: MAX_AMOUNT + 1 }), "totalAmount");
    await expectInvalid("PATCH", "/v1/reservations/{id}",
      await api.patch(`/reservations/${dear.id}`, { totalAmount: MAX_AMOUNT + 1 }), "totalAmount");

    // One payment, either way it is recorded.
    const secret = await key(stay.property.id);
    await expectInvalid("POST", "/v1/reservations/{id}/payments", await payMember(api, stay.reservation.id, MAX_AMOUNT + 1), "amount");
    await expectInvalid("POST", "/v1/external/reservations/{id}/payments",
      await payExternally(secret, stay.reservation.id, MAX_AMOUNT + 1), "amount");
    const member = await expectStatus<Payment>("POST", "/v1/reservations/{id}/payments", await payMember(api, stay.reservation.id, MAX_AMOUNT), 201);
    assert.equal(member.amount, MAX_AMOUNT);
    assert.equal((await payExternally(secret, dear.id, MAX_AMOUNT)).status, 201);

    // A payment link: given, and by default the balance, which is at most 10^12 too.
    const link = (amount?: number) =>
      api.post(`/reservations/${priced.id}/payment-link`, amount === undefined ? {} : { amount }, representation);
    await expectInvalid("POST", "/v1/reservations/{id}/payment-link", await link(MAX_AMOUNT + 1), "amount");
    const asked = await expectStatus<Schemas["PaymentLink"]>("POST", "/v1/reservations/{id}/payment-link", await link(MAX_AMOUNT), 201);
    assert.equal(asked.amount, MAX_AMOUNT);
    const owed = await expectStatus<Schemas["PaymentLink"]>("POST", "/v1/reservations/{id}/payment-link", await link(), 201);
    assert.equal(owed.amount, 365 * MAX_NIGHTLY_PRICE);
  }));

Deno.test("the document states each amount's maximum, and the least a balance can be", async () => {
  const document = await apiDocument() as unknown as { components: { schemas: Record<string, { properties: Record<string, unknown> }> } };
  type Bounded = { minimum?: number; maximum?: number; anyOf?: Bounded[] };
  const bounds = (schema: string, field: string) => {
    // A field that may be null is the number's schema or null's.
    const property = document.components.schemas[schema]!.properties[field] as Bounded;
    const { minimum, maximum } = property.anyOf?.find((member) => member.minimum !== undefined) ?? property;
    return [minimum, maximum];
  };
  assert.deepEqual(bounds("RatePlanCreate", "nightlyPrice"), [0, MAX_NIGHTLY_PRICE]);
  assert.deepEqual(bounds("RatePlan", "nightlyPrice"), [0, MAX_NIGHTLY_PRICE]);
  assert.deepEqual(bounds("ReservationCreate", "totalAmount"), [0, MAX_AMOUNT]);
  assert.deepEqual(bounds("Reservation", "totalAmount"), [0, MAX_AMOUNT]);
  assert.deepEqual(bounds("Reservation", "amountPaid"), [0, MAX_AMOUNT]);
  assert.deepEqual(bounds("Reservation", "balance"), [-MAX_AMOUNT, MAX_AMOUNT]);
  assert.deepEqual(bounds("PaymentCreate", "amount"), [1, MAX_AMOUNT]);
  assert.deepEqual(bounds("ExternalPaymentCreate", "amount"), [1, MAX_AMOUNT]);
  assert.deepEqual(bounds("Payment", "amount"), [1, MAX_AMOUNT]);
  assert.deepEqual(bounds("PaymentLinkCreate", "amount"), [1, MAX_AMOUNT]);
  assert.deepEqual(bounds("PaymentLink", "amount"), [1, MAX_AMOUNT]);
});
