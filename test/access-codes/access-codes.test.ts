// Door access codes end to end through the gateway: every route under
// /v1/reservations/{id}/access-codes (src/reservations/handlers.ts), the default code
// and validity window in the property's time zone, the shared-code rule, revocation,
// codes of stays that ended, and who may write. The rules are
// supabase/migrations/20261122000800_access_codes.sql.
import assert from "node:assert/strict";
import { addMember, type Client, client, expectInvalid, expectMinimal, expectPaging, expectProblem, expectStatus, expectUnprocessable, listPage, MALFORMED_ID, readBack, readOne, representation, type Schemas, UNKNOWN_ID, withFixture } from "../support/api.ts";
import { createGuest, createProperty, createReservation, createStay, instant, type Reservation } from "../support/domain.ts";

const CODES = "/v1/reservations/{id}/access-codes";
const CODE = "/v1/reservations/{id}/access-codes/{codeId}";
const REVOKE = "/v1/reservations/{id}/access-codes/{codeId}/revoke";

type AccessCode = Schemas["AccessCode"];

async function createCode(api: Client, reservationId: string, body: Record<string, unknown> = {}): Promise<AccessCode> {
  const response = await api.post(`/reservations/${reservationId}/access-codes`, body, representation);
  return await expectStatus<AccessCode>("POST", CODES, response, 201);
}

const readCode = async (api: Client, reservationId: string, codeId: string) =>
  (await readOne<AccessCode>(api, CODE, { id: reservationId, codeId })).body;
const listCodes = (api: Client, reservationId: string, query = "") => listPage<AccessCode>(api, CODES, query, { id: reservationId });

// A stay at a property without a unit (a code needs none), on the given nights.
async function stayAt(api: Client, propertyId: string, checkIn: string, checkOut: string): Promise<Reservation> {
  const guest = await createGuest(api);
  return await createReservation(api, { propertyId, guestId: guest.id }, { checkIn, checkOut });
}

async function step(api: Client, reservationId: string, action: string): Promise<void> {
  const response = await api.post(`/reservations/${reservationId}/${action}`, action === "cancel" ? {} : undefined);
  await expectMinimal("POST", `/v1/reservations/{id}/${action}`, response, 204);
}

// ---------------------------------------------------------------- POST /v1/reservations/{id}/access-codes

Deno.test("POST /v1/reservations/{id}/access-codes with return=representation: 201, six digits from check-in to check-out in Lisbon", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("code");
    // Lisbon moves to summer time on 28 March 2027: arrival is at UTC+0, departure at UTC+1.
    const { property, reservation } = await createStay(t.ownerClient, { checkIn: "2027-03-26", checkOut: "2027-03-29" });
    assert.deepEqual([property.timezone, property.checkInTime, property.checkOutTime], ["Europe/Lisbon", "15:00:00", "11:00:00"]);

    const path = `/reservations/${reservation.id}/access-codes`;
    const response = await t.ownerClient.post(path, {}, representation);
    const code = await expectStatus<AccessCode>("POST", CODES, response, 201);
    assert.equal(response.headers.get("preference-applied"), "return=representation");
    assert.match(code.code, /^[0-9]{6}$/);
    assert.deepEqual(
      {
        ...code,
        id: undefined,
        code: undefined,
        validFrom: instant(code.validFrom),
        validUntil: instant(code.validUntil),
        createdAt: undefined,
        updatedAt: undefined,
      },
      {
        reservationId: reservation.id,
        propertyId: property.id,
        validFrom: "2027-03-26T15:00:00.000Z",
        validUntil: "2027-03-29T10:00:00.000Z",
        status: "active",
        revokedAt: null,
        id: undefined,
        code: undefined,
        createdAt: undefined,
        updatedAt: undefined,
      },
    );
    assert.equal(code.createdAt, code.updatedAt);

    const { location, body } = await readBack(t.ownerClient, path, response, CODE);
    assert.equal(location, `/reservations/${reservation.id}/access-codes/${code.id}`);
    assert.deepEqual(body, code);
  }));

Deno.test("POST /v1/reservations/{id}/access-codes without Prefer: 201 with Location, ETag and the new id; New York's own check-in and check-out times", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("code-ny");
    const property = await createProperty(t.ownerClient, {
      timezone: "America/New_York",
      currency: "USD",
      checkInTime: "16:30",
      checkOutTime: "10:00",
    });
    // New York moves to daylight time on 14 March 2027: arrival at UTC-5, departure at UTC-4.
    const reservation = await stayAt(t.ownerClient, property.id, "2027-03-12", "2027-03-16");
    const path = `/reservations/${reservation.id}/access-codes`;
    const response = await t.ownerClient.post(path, {});
    await expectMinimal("POST", CODES, response, 201);
    const { location, body: code } = await readBack<AccessCode>(t.ownerClient, path, response, CODE);
    assert.match(location, new RegExp(`^/reservations/${reservation.id}/access-codes/[0-9a-f-]{36}$`));
    assert.match(code.code, /^[0-9]{6}$/);
    assert.deepEqual(
      [code.propertyId, instant(code.validFrom), instant(code.validUntil), code.status, code.revokedAt],
      [property.id, "2027-03-12T21:30:00.000Z", "2027-03-16T14:00:00.000Z", "active", null],
    );
  }));

Deno.test("POST /v1/reservations/{id}/access-codes: an explicit code and window; either end alone keeps the other default", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("code-explicit");
    const { reservation } = await createStay(t.ownerClient, { checkIn: "2027-03-26", checkOut: "2027-03-29" });
    const given = await createCode(t.ownerClient, reservation.id, {
      code: "0042",
      validFrom: "2027-03-26T12:00:00Z",
      validUntil: "2027-03-29T12:00:00+01:00",
    });
    assert.deepEqual(
      [given.code, instant(given.validFrom), instant(given.validUntil), given.status],
      ["0042", "2027-03-26T12:00:00.000Z", "2027-03-29T11:00:00.000Z", "active"],
    );
    const longest = await createCode(t.ownerClient, reservation.id, { code: "123456789012" });
    assert.equal(longest.code, "123456789012");

    const early = await createCode(t.ownerClient, reservation.id, { code: "5150", validFrom: "2027-03-26T09:00:00Z" });
    assert.deepEqual([instant(early.validFrom), instant(early.validUntil)], ["2027-03-26T09:00:00.000Z", "2027-03-29T10:00:00.000Z"]);
    const late = await createCode(t.ownerClient, reservation.id, { code: "5151", validUntil: "2027-03-29T13:00:00Z" });
    assert.deepEqual([instant(late.validFrom), instant(late.validUntil)], ["2027-03-26T15:00:00.000Z", "2027-03-29T13:00:00.000Z"]);
  }));

Deno.test("POST /v1/reservations/{id}/access-codes: 422 for validUntil not after validFrom, 400 for a bad code or an unknown field; nothing is created", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("code400");
    const { reservation } = await createStay(t.ownerClient, { checkIn: "2027-03-26", checkOut: "2027-03-29" });
    const path = `/reservations/${reservation.id}/access-codes`;
    // The document's schema takes both; the rule between them is stated in words.
    for (const body of [
      { validFrom: "2027-03-26T15:00:00Z", validUntil: "2027-03-26T15:00:00Z" },
      { validFrom: "2027-03-27T15:00:00Z", validUntil: "2027-03-26T15:00:00Z" },
    ]) {
      await expectUnprocessable("POST", CODES, await t.ownerClient.post(path, body), "validUntil", JSON.stringify(body));
    }
    const cases: [unknown, string][] = [
      [{ code: "123" }, "code"],
      [{ code: "1234567890123" }, "code"],
      [{ code: "12a456" }, "code"],
      [{ code: " 123456" }, "code"],
      [{ code: 123456 }, "code"],
      [{ validFrom: "tomorrow" }, "validFrom"],
      [{ validUntil: "2027-03-29" }, "validUntil"],
      [{ pin: "1234" }, "pin"],
      [{ status: "revoked" }, "status"],
      [{ propertyId: reservation.propertyId }, "propertyId"],
    ];
    for (const [body, field] of cases) {
      await expectInvalid("POST", CODES, await t.ownerClient.post(path, body), field, JSON.stringify(body));
    }
    await expectProblem("POST", CODES, await t.ownerClient.post(path), 400, "validation");
    assert.equal((await listCodes(t.ownerClient, reservation.id)).pagination.total, 0);
  }));

Deno.test("POST /v1/reservations/{id}/access-codes: 422 when one end given alone falls on the wrong side of the default other", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("code422");
    const { reservation } = await createStay(t.ownerClient, { checkIn: "2027-03-26", checkOut: "2027-03-29" });
    const path = `/reservations/${reservation.id}/access-codes`;
    // The default window is 2027-03-26T15:00Z to 2027-03-29T10:00Z.
    await expectProblem("POST", CODES, await t.ownerClient.post(path, { validUntil: "2027-03-20T00:00:00Z" }), 422, "unprocessable");
    await expectProblem("POST", CODES, await t.ownerClient.post(path, { validFrom: "2027-03-29T10:00:00Z" }), 422, "unprocessable");
    assert.equal((await listCodes(t.ownerClient, reservation.id)).pagination.total, 0);
  }));

Deno.test("POST /v1/reservations/{id}/access-codes: a window given with offsets is valid when its end is the later instant, even if it sorts first as text", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("code-instants");
    const { reservation } = await createStay(t.ownerClient, { checkIn: "2027-03-26", checkOut: "2027-03-29" });
    // 16:00+01:00 is 15:00Z, half an hour before 15:30Z.
    const valid = await createCode(t.ownerClient, reservation.id, {
      code: "7070",
      validFrom: "2027-03-26T16:00:00+01:00",
      validUntil: "2027-03-26T15:30:00Z",
    });
    assert.deepEqual([instant(valid.validFrom), instant(valid.validUntil)], ["2027-03-26T15:00:00.000Z", "2027-03-26T15:30:00.000Z"]);
  }));

Deno.test("POST /v1/reservations/{id}/access-codes: a window given with offsets whose end is the earlier instant is a 422 like any other", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("code-instants-400");
    const { reservation } = await createStay(t.ownerClient, { checkIn: "2027-03-26", checkOut: "2027-03-29" });
    const path = `/reservations/${reservation.id}/access-codes`;
    // 16:00+02:00 is 14:00Z, an hour before 15:00Z, though it sorts after it as text.
    const backwards = await t.ownerClient.post(path, { validFrom: "2027-03-26T15:00:00Z", validUntil: "2027-03-26T16:00:00+02:00" });
    assert.equal((await listCodes(t.ownerClient, reservation.id)).pagination.total, 0, "nothing was created");
    const problem = await expectProblem("POST", CODES, backwards, 422, "unprocessable");
    assert.deepEqual(problem.errors?.map((error) => error.path), ["validUntil"]);
  }));

Deno.test("POST /v1/reservations/{id}/access-codes: 409 for a code active at the property in an overlapping window; other cases share it", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("code409");
    const property = await createProperty(t.ownerClient);
    const first = await stayAt(t.ownerClient, property.id, "2027-03-26", "2027-03-29");
    const second = await stayAt(t.ownerClient, property.id, "2027-03-28", "2027-03-31");
    const digits = "482913";
    const taken = await createCode(t.ownerClient, first.id, { code: digits });

    // The second stay's default window (from 2027-03-28T14:00Z) overlaps the first's (to 2027-03-29T10:00Z).
    const clash = await t.ownerClient.post(`/reservations/${second.id}/access-codes`, { code: digits });
    assert.match((await expectProblem("POST", CODES, clash, 409, "access-code-in-use")).detail, /already opens/);
    const sameStay = await t.ownerClient.post(`/reservations/${first.id}/access-codes`, { code: digits });
    await expectProblem("POST", CODES, sameStay, 409, "access-code-in-use");
    assert.equal((await listCodes(t.ownerClient, second.id)).pagination.total, 0);
    assert.deepEqual((await listCodes(t.ownerClient, first.id)).data, [taken]);

    // From the moment the first window closes, the same digits are free.
    const after = await createCode(t.ownerClient, second.id, { code: digits, validFrom: taken.validUntil });
    assert.equal(instant(after.validFrom), "2027-03-29T10:00:00.000Z");
    // Another property's door may use them at the same time.
    const elsewhere = await createProperty(t.ownerClient);
    const there = await stayAt(t.ownerClient, elsewhere.id, "2027-03-26", "2027-03-29");
    assert.equal((await createCode(t.ownerClient, there.id, { code: digits })).code, digits);
    // A revoked code no longer holds them.
    await expectMinimal("POST", REVOKE, await t.ownerClient.post(`/reservations/${first.id}/access-codes/${taken.id}/revoke`), 204);
    const reissued = await createCode(t.ownerClient, first.id, { code: digits });
    assert.deepEqual([reissued.code, reissued.status], [digits, "active"]);
  }));

Deno.test("POST /v1/reservations/{id}/access-codes: 404 for unknown, malformed and other tenants' reservations", () =>
  withFixture(async ({ tenant }) => {
    const a = await tenant("code404-a");
    const b = await tenant("code404-b");
    const { reservation } = await createStay(a.ownerClient);
    for (const id of [UNKNOWN_ID, MALFORMED_ID, reservation.id]) {
      await expectProblem("POST", CODES, await b.ownerClient.post(`/reservations/${id}/access-codes`, {}), 404, "not-found");
    }
    assert.equal((await listCodes(a.ownerClient, reservation.id)).pagination.total, 0);
  }));

Deno.test("access codes follow the stay: a checked-in stay gets one; checking out, cancelling or a no-show revokes them and new ones are 409", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("code-lifecycle");
    const { reservation: stay } = await createStay(t.ownerClient, { status: "confirmed" });
    const before = await createCode(t.ownerClient, stay.id, { code: "1111" });
    await step(t.ownerClient, stay.id, "check-in");
    const during = await createCode(t.ownerClient, stay.id, { code: "2222" });
    assert.equal((await readCode(t.ownerClient, stay.id, before.id)).status, "active");
    await step(t.ownerClient, stay.id, "check-out");
    for (const code of [before, during]) {
      const now = await readCode(t.ownerClient, stay.id, code.id);
      assert.equal(now.status, "revoked");
      assert.ok(now.revokedAt !== null && Date.parse(now.revokedAt) >= Date.parse(during.createdAt), JSON.stringify(now));
    }
    const checkedOut = await t.ownerClient.post(`/reservations/${stay.id}/access-codes`, {});
    assert.match((await expectProblem("POST", CODES, checkedOut, 409, "lifecycle-transition-refused")).detail, /checked_out/);

    const { reservation: called } = await createStay(t.ownerClient);
    const code = await createCode(t.ownerClient, called.id);
    await step(t.ownerClient, called.id, "cancel");
    assert.equal((await readCode(t.ownerClient, called.id, code.id)).status, "revoked");
    const cancelled = await t.ownerClient.post(`/reservations/${called.id}/access-codes`, {});
    assert.match((await expectProblem("POST", CODES, cancelled, 409, "lifecycle-transition-refused")).detail, /cancelled/);

    const { reservation: missed } = await createStay(t.ownerClient, { status: "confirmed" });
    await step(t.ownerClient, missed.id, "no-show");
    const noShow = await t.ownerClient.post(`/reservations/${missed.id}/access-codes`, { code: "3333" });
    assert.match((await expectProblem("POST", CODES, noShow, 409, "lifecycle-transition-refused")).detail, /no_show/);

    assert.equal((await listCodes(t.ownerClient, stay.id)).pagination.total, 2);
    assert.equal((await listCodes(t.ownerClient, called.id)).pagination.total, 1);
    assert.equal((await listCodes(t.ownerClient, missed.id)).pagination.total, 0);
  }));

// ---------------------------------------------------------------- GET /v1/reservations/{id}/access-codes

Deno.test("GET /v1/reservations/{id}/access-codes: the reservation's codes oldest first, paged; 404 for another's reservation; 400 for a bad query", () =>
  withFixture(async ({ tenant, memberOf }) => {
    const t = await tenant("codes");
    const other = await tenant("codes-other");
    const staff = await memberOf(t, "staff");
    const { reservation, property } = await createStay(t.ownerClient);
    const c1 = await createCode(t.ownerClient, reservation.id, { code: "111111" });
    const c2 = await createCode(t.ownerClient, reservation.id, { code: "222222" });
    const c3 = await createCode(t.ownerClient, reservation.id, { code: "333333" });
    const neighbour = await stayAt(t.ownerClient, property.id, "2027-04-01", "2027-04-03");
    const theirs = await createCode(t.ownerClient, neighbour.id, { code: "444444" });

    const api = client(staff, t.tenantId);
    const all = await expectPaging((query) => listCodes(api, reservation.id, query), [c1.id, c2.id, c3.id], ["?limit=2&offset=1", "?offset=3"]);
    assert.deepEqual(all.data, [c1, c2, c3]);
    assert.deepEqual((await listCodes(api, neighbour.id)).data, [theirs]);

    const bad: [string, string][] = [
      ["limit=0", "limit"],
      ["limit=101", "limit"],
      ["offset=-1", "offset"],
      ["status=active", "status"],
      ["code=111111", "code"],
    ];
    for (const [query, field] of bad) {
      const response = await api.get(`/reservations/${reservation.id}/access-codes?${query}`);
      await expectInvalid("GET", CODES, response, field, query);
    }
    for (const id of [UNKNOWN_ID, MALFORMED_ID, reservation.id]) {
      await expectProblem("GET", CODES, await other.ownerClient.get(`/reservations/${id}/access-codes`), 404, "not-found");
    }
  }));

// ---------------------------------------------------------------- GET /v1/reservations/{id}/access-codes/{codeId}

Deno.test("GET /v1/reservations/{id}/access-codes/{codeId}: 200 with the ETag the write gave; 404 under another reservation or tenant", () =>
  withFixture(async ({ tenant, memberOf }) => {
    const a = await tenant("code-get-a");
    const b = await tenant("code-get-b");
    const staff = await memberOf(a, "staff");
    await addMember(b.ownerClient, staff, "staff");
    const { reservation, property } = await createStay(a.ownerClient);
    const written = await a.ownerClient.post(`/reservations/${reservation.id}/access-codes`, {}, representation);
    const code = await expectStatus<AccessCode>("POST", CODES, written, 201);
    const neighbour = await stayAt(a.ownerClient, property.id, "2027-04-01", "2027-04-03");

    const inA = client(staff, a.tenantId);
    const read = await inA.get(`/reservations/${reservation.id}/access-codes/${code.id}`);
    assert.deepEqual(await expectStatus("GET", CODE, read, 200), code);
    assert.equal(read.headers.get("etag"), written.headers.get("etag"));

    const missing = [
      [inA, neighbour.id, code.id],
      [inA, reservation.id, UNKNOWN_ID],
      [inA, reservation.id, MALFORMED_ID],
      [inA, MALFORMED_ID, code.id],
      [client(staff, b.tenantId), reservation.id, code.id],
    ] as const;
    for (const [api, reservationId, codeId] of missing) {
      const response = await api.get(`/reservations/${reservationId}/access-codes/${codeId}`);
      await expectProblem("GET", CODE, response, 404, "not-found");
    }
  }));

// ---------------------------------------------------------------- POST .../access-codes/{codeId}/revoke

Deno.test("POST /v1/reservations/{id}/access-codes/{codeId}/revoke: 204 with an ETag, or 200 with the code; status revoked and revokedAt stamped", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("revoke");
    const { reservation } = await createStay(t.ownerClient);
    const code = await createCode(t.ownerClient, reservation.id, { code: "9090" });
    const path = `/reservations/${reservation.id}/access-codes/${code.id}`;

    const { etag } = await expectMinimal("POST", REVOKE, await t.ownerClient.post(`${path}/revoke`), 204);
    const read = await t.ownerClient.get(path);
    const revoked = await expectStatus<AccessCode>("GET", CODE, read, 200);
    assert.equal(read.headers.get("etag"), etag);
    assert.deepEqual(revoked, { ...code, status: "revoked", revokedAt: revoked.revokedAt, updatedAt: revoked.updatedAt });
    assert.ok(revoked.revokedAt !== null);
    assert.equal(revoked.revokedAt, revoked.updatedAt);
    assert.ok(Date.parse(revoked.revokedAt) >= Date.parse(code.createdAt));

    const another = await createCode(t.ownerClient, reservation.id, { code: "9191" });
    const response = await t.ownerClient.post(`/reservations/${reservation.id}/access-codes/${another.id}/revoke`, undefined, representation);
    const body = await expectStatus<AccessCode>("POST", REVOKE, response, 200);
    assert.equal(response.headers.get("preference-applied"), "return=representation");
    assert.deepEqual([body.id, body.code, body.status], [another.id, "9191", "revoked"]);
    assert.ok(body.revokedAt !== null);
    const again = await t.ownerClient.get(`/reservations/${reservation.id}/access-codes/${another.id}`);
    assert.deepEqual(await expectStatus("GET", CODE, again, 200), body);
    assert.equal(again.headers.get("etag"), response.headers.get("etag"));

    // Revoking a code leaves the reservation as it was.
    assert.equal(
      (await expectStatus<Reservation>("GET", "/v1/reservations/{id}", await t.ownerClient.get(`/reservations/${reservation.id}`), 200)).status,
      "pending",
    );
  }));

Deno.test("POST /v1/reservations/{id}/access-codes/{codeId}/revoke: revoking a revoked code is 409 naming its status; nothing changes", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("revoke-again");
    const { reservation } = await createStay(t.ownerClient);
    const code = await createCode(t.ownerClient, reservation.id);
    const path = `/reservations/${reservation.id}/access-codes/${code.id}`;
    await expectMinimal("POST", REVOKE, await t.ownerClient.post(`${path}/revoke`), 204);
    const first = await t.ownerClient.get(path);
    const revoked = await expectStatus<AccessCode>("GET", CODE, first, 200);

    const again = await t.ownerClient.post(`${path}/revoke`, undefined, representation);
    assert.match((await expectProblem("POST", REVOKE, again, 409, "lifecycle-transition-refused")).detail, /revoked/);
    const after = await t.ownerClient.get(path);
    assert.deepEqual(await expectStatus("GET", CODE, after, 200), revoked, "nothing changed");
    assert.equal(after.headers.get("etag"), first.headers.get("etag"));
  }));

Deno.test("POST /v1/reservations/{id}/access-codes/{codeId}/revoke: 404 under another reservation or tenant, or for unknown ids; the code stays active", () =>
  withFixture(async ({ tenant }) => {
    const a = await tenant("revoke404-a");
    const b = await tenant("revoke404-b");
    const { reservation, property } = await createStay(a.ownerClient);
    const code = await createCode(a.ownerClient, reservation.id);
    const neighbour = await stayAt(a.ownerClient, property.id, "2027-04-01", "2027-04-03");
    const missing = [
      [a.ownerClient, neighbour.id, code.id],
      [a.ownerClient, reservation.id, UNKNOWN_ID],
      [a.ownerClient, reservation.id, MALFORMED_ID],
      [a.ownerClient, UNKNOWN_ID, code.id],
      [b.ownerClient, reservation.id, code.id],
    ] as const;
    for (const [api, reservationId, codeId] of missing) {
      const response = await api.post(`/reservations/${reservationId}/access-codes/${codeId}/revoke`);
      await expectProblem("POST", REVOKE, response, 404, "not-found");
    }
    assert.deepEqual(await readCode(a.ownerClient, reservation.id, code.id), code);
  }));

// ---------------------------------------------------------------- role matrix

Deno.test("role matrix: access codes — owner, admin and staff each issue a code and revoke it", () =>
  withFixture(async ({ tenant, memberOf }) => {
    const t = await tenant("code-roles");
    const admin = await memberOf(t, "admin");
    const staff = await memberOf(t, "staff");
    const { reservation } = await createStay(t.ownerClient);
    const path = `/reservations/${reservation.id}/access-codes`;

    for (const [member, digits] of [[t.owner, "100001"], [admin, "100002"], [staff, "100003"]] as const) {
      const api = client(member, t.tenantId);
      const response = await api.post(path, { code: digits });
      await expectMinimal("POST", CODES, response, 201);
      const { body: code } = await readBack<AccessCode>(api, path, response, CODE);
      assert.deepEqual([code.code, code.status], [digits, "active"]);

      await expectMinimal("POST", REVOKE, await api.post(`${path}/${code.id}/revoke`), 204);
      assert.equal((await readCode(api, reservation.id, code.id)).status, "revoked");
    }
    const all = await listCodes(client(staff, t.tenantId), reservation.id);
    assert.deepEqual(all.data.map((c) => [c.code, c.status]), [["100001", "revoked"], ["100002", "revoked"], ["100003", "revoked"]]);
  }));
