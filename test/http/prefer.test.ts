// Prefer: count=... on the lists, through the API (src/http/prefer.ts, src/db/pagination.ts):
// what `total` and `hasMore` are under each count, that Preference-Applied names the
// count honoured, and pages past the end. test/db/pagination.test.ts shows the statements
// each count sends.
import assert from "node:assert/strict";
import { type Client, expectStatus, type Fixture, type Page, pathOf, withFixture } from "../support/api.ts";
import { insertRows, plannedByHand } from "../support/counts.ts";
import { OPAQUE_CONDITION_SELECTIVITY } from "../../src/db/pagination.ts";
import { createGuest, createProperty, type Guest, type Reservation } from "../support/domain.ts";
import { external, issueApiKey } from "../support/integration.ts";

type Answer<T> = Page<T> & { applied: string | null };

async function listed<T>(template: string, response: Response): Promise<Answer<T>> {
  const page = await expectStatus<Page<T>>("GET", template, response, 200);
  return { ...page, applied: response.headers.get("preference-applied") };
}

function lister<T>(api: Client, template: string, params: Record<string, string> = {}) {
  return async (query: string, prefer?: string) =>
    await listed<T>(template, await api.get(`${pathOf(template, params)}${query}`, undefined, prefer === undefined ? {} : { prefer }));
}

const ids = (page: Page<{ id: string }>) => page.data.map((row) => row.id);

// A tenant with 1,100 confirmed and 60 cancelled reservations and 1,050 guests besides
// the one its stays are for, and a tenant with 30 confirmed ones and 3 guests.
async function bigAndSmall(fixture: Fixture) {
  const big = await fixture.tenant("counts-big");
  const small = await fixture.tenant("counts-small");
  const at = async (api: Client, tenantId: string) => {
    const property = await createProperty(api);
    const guest = await createGuest(api);
    return { tenantId, propertyId: property.id, guestId: guest.id, currency: property.currency };
  };
  const bigAt = await at(big.ownerClient, big.tenantId);
  await insertRows(fixture.sql, bigAt, { reservations: { confirmed: 1100, cancelled: 60 }, guests: 1050 });
  const smallAt = await at(small.ownerClient, small.tenantId);
  await insertRows(fixture.sql, smallAt, { reservations: { confirmed: 30 }, guests: 2 });
  return { big, small, bigAt, smallAt };
}

Deno.test("GET /v1/reservations?status=: each count's total and Preference-Applied; hasMore whatever the count; pages past the end", () =>
  withFixture(async (fixture) => {
    const { big, small } = await bigAndSmall(fixture);
    const list = lister<Reservation>(big.ownerClient, "/v1/reservations");
    const confirmed = "?status=confirmed&limit=10&offset=20";

    const plain = await list(confirmed);
    assert.deepEqual([plain.pagination, plain.applied], [{ limit: 10, offset: 20, total: 1100, hasMore: true }, null], "exact by default");
    const exact = await list(confirmed, "count=exact");
    assert.deepEqual([exact.pagination, exact.applied], [plain.pagination, "count=exact"]);

    const none = await list(confirmed, "count=none");
    assert.deepEqual([none.pagination, none.applied], [{ limit: 10, offset: 20, total: null, hasMore: true }, "count=none"]);
    assert.deepEqual(ids(none), ids(exact), "the same page");

    // Estimates: the planner's, for this tenant. test/db/pagination.test.ts compares them
    // with EXPLAIN; here, that they are estimates and are told apart from counts.
    const planned = await list(confirmed, "count=planned");
    assert.equal(planned.applied, "count=planned");
    assert.ok(Number.isInteger(planned.pagination.total) && planned.pagination.total! >= 31, `${planned.pagination.total}`);
    assert.deepEqual(ids(planned), ids(exact));
    const estimated = await list(confirmed, "count=estimated");
    assert.equal(estimated.applied, "count=estimated");
    assert.ok(estimated.pagination.total! > 1000, `above 1,000 an estimate, never below 1,001: ${estimated.pagination.total}`);
    assert.equal(estimated.pagination.hasMore, true);
    const cancelled = await list("?status=cancelled&limit=10", "count=estimated");
    assert.deepEqual(cancelled.pagination, { limit: 10, offset: 0, total: 60, hasMore: true }, "up to 1,000, exact");
    const theirs = await lister<Reservation>(small.ownerClient, "/v1/reservations")("?status=confirmed&limit=10", "count=estimated");
    assert.deepEqual(theirs.pagination, { limit: 10, offset: 0, total: 30, hasMore: true }, "the other tenant's, exact");

    // The last page: no row follows, and an estimate is what the page shows.
    for (const prefer of [undefined, "count=exact", "count=planned", "count=estimated"]) {
      const last = await list("?status=cancelled&limit=25&offset=50", prefer);
      assert.deepEqual(last.pagination, { limit: 25, offset: 50, total: 60, hasMore: false }, prefer);
      assert.equal(last.data.length, 10);
    }
    assert.deepEqual((await list("?status=cancelled&limit=25&offset=50", "count=none")).pagination,
      { limit: 25, offset: 50, total: null, hasMore: false });
    assert.equal((await list("?status=cancelled&limit=10&offset=50", "count=none")).pagination.hasMore, false, "ten left, ten fetched");
    assert.equal((await list("?status=cancelled&limit=10&offset=49", "count=none")).pagination.hasMore, true);

    // Past the end: no row, and each count still answers for the list.
    const past = "?status=confirmed&limit=10&offset=5000";
    assert.deepEqual((await list(past)).pagination, { limit: 10, offset: 5000, total: 1100, hasMore: false });
    assert.deepEqual((await list(past, "count=none")).pagination, { limit: 10, offset: 5000, total: null, hasMore: false });
    const pastPlanned = await list(past, "count=planned");
    assert.deepEqual([pastPlanned.data, pastPlanned.pagination.hasMore, pastPlanned.applied], [[], false, "count=planned"]);
    assert.ok(pastPlanned.pagination.total! <= 5000);
    const pastEstimated = await list(past, "count=estimated");
    assert.deepEqual([pastEstimated.data, pastEstimated.pagination.hasMore], [[], false]);
    assert.ok(pastEstimated.pagination.total! > 1000, `${pastEstimated.pagination.total}`);
    assert.deepEqual((await list("?status=cancelled&offset=100", "count=estimated")).pagination,
      { limit: 20, offset: 100, total: 60, hasMore: false }, "counted past the end, exactly");
  }));

Deno.test("Prefer with several preferences: the count among them is honoured, the first of two, and an unknown count is none", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("counts-preferences");
    for (let i = 0; i < 3; i++) await createGuest(t.ownerClient);
    const list = lister<Guest>(t.ownerClient, "/v1/guests");
    const cases: [string, number | null, string | null][] = [
      ["return=representation, count=none", null, "count=none"],
      ["respond-async; wait=5, COUNT=NONE", null, "count=none"],
      ["count=none, count=exact", null, "count=none"],
      ["count=exact, count=none", 3, "count=exact"],
      ["count=sometimes", 3, null],
      ["count=sometimes, count=none", 3, null],
      ["return=representation", 3, null],
      ["count", 3, null],
    ];
    for (const [prefer, total, applied] of cases) {
      const page = await list("?limit=2", prefer);
      assert.deepEqual([page.pagination, page.applied], [{ limit: 2, offset: 0, total, hasMore: true }, applied], prefer);
    }
  }));

Deno.test("GET /v1/guests: each count, a big tenant's estimate and a small one's, and a search", () =>
  withFixture(async (fixture) => {
    const { big, small } = await bigAndSmall(fixture);
    const list = lister<Guest>(big.ownerClient, "/v1/guests");
    assert.deepEqual((await list("?limit=5")).pagination, { limit: 5, offset: 0, total: 1051, hasMore: true });
    assert.deepEqual((await list("?limit=5", "count=none")).pagination, { limit: 5, offset: 0, total: null, hasMore: true });
    const estimated = await list("?limit=5", "count=estimated");
    assert.ok(estimated.pagination.total! > 1000 && estimated.applied === "count=estimated", `${estimated.pagination.total}`);
    // A search sorts every match to find its page and counts them as it goes: an estimate
    // or a plan would cost more than the exact count it already has, which it answers
    // without Preference-Applied. Only none leaves the total out.
    for (const count of ["count=estimated", "count=planned", "count=exact"]) {
      const searched = await list("?q=guest%20000&limit=5&offset=95", count);
      assert.deepEqual([searched.pagination, searched.data.length, searched.applied],
        [{ limit: 5, offset: 95, total: 99, hasMore: false }, 4, count === "count=exact" ? "count=exact" : null],
        `Guest 00001 to Guest 00099, exactly: ${count}`);
    }
    const searchedPastTheEnd = await list("?q=guest%20000&limit=5&offset=120", "count=planned");
    assert.deepEqual([searchedPastTheEnd.pagination, searchedPastTheEnd.data], [{ limit: 5, offset: 120, total: 99, hasMore: false }, []]);
    const searchedUncounted = await list("?q=guest%20000&limit=5&offset=90", "count=none");
    assert.deepEqual([searchedUncounted.pagination, searchedUncounted.data.length, searchedUncounted.applied],
      [{ limit: 5, offset: 90, total: null, hasMore: true }, 5, "count=none"]);

    // The planner reads each tenant's share of the table from its statistics.
    const bigPlanned = (await list("?limit=1", "count=planned")).pagination.total!;
    const smallPlanned = (await lister<Guest>(small.ownerClient, "/v1/guests")("?limit=1", "count=planned")).pagination.total!;
    assert.ok(bigPlanned >= 1051 / 2 && bigPlanned <= 1051 * 2, `within a factor of 2 of 1,051: ${bigPlanned}`);
    assert.ok(smallPlanned < bigPlanned / 10, `a tenant of 3 guests: ${smallPlanned}`);
  }));

Deno.test("GET /v1/external/reservations: each count for the key's property, the planner's estimate as EXPLAIN gives it to the key", () =>
  withFixture(async (fixture) => {
    const { big, bigAt } = await bigAndSmall(fixture);
    // Another property of the same tenant, whose reservations the key does not see.
    const other = await createProperty(big.ownerClient);
    await insertRows(fixture.sql, { ...bigAt, propertyId: other.id }, { reservations: { confirmed: 200 } });
    const key = await issueApiKey(big.ownerClient, bigAt.propertyId);
    const list = async (query: string, prefer?: string) =>
      await listed<Reservation>("/v1/external/reservations",
        await external("GET", `/reservations${query}`, key.secret, { headers: prefer === undefined ? {} : { prefer } }));

    assert.deepEqual((await list("?limit=5")).pagination, { limit: 5, offset: 0, total: 1160, hasMore: true });
    assert.deepEqual((await list("?status=cancelled&limit=5", "count=exact")).applied, "count=exact");
    const none = await list("?limit=5&offset=1158", "count=none");
    assert.deepEqual([none.pagination, none.data.length, none.applied], [{ limit: 5, offset: 1158, total: null, hasMore: false }, 2, "count=none"]);
    assert.deepEqual((await list("?status=cancelled&limit=5", "count=estimated")).pagination, { limit: 5, offset: 0, total: 60, hasMore: true });
    assert.ok((await list("?limit=5", "count=estimated")).pagination.total! > 1000);

    // An integration's policy holds two conditions the planner cannot estimate, the key's
    // scope and whether it acts for all properties (see OPAQUE_CONDITION_SELECTIVITY): the
    // estimate is the plan's, with the key's tenant and property where the planner sees
    // them, corrected for both.
    const byHand = () =>
      plannedByHand(fixture.sql, { role: "api_integration", tenantId: bigAt.tenantId, propertyId: bigAt.propertyId },
        "select 1 from public.reservations where tenant_id = $1 and property_id = $2", [bigAt.tenantId, bigAt.propertyId]);
    const before = await byHand();
    const planned = await list("?limit=5", "count=planned");
    const after = await byHand();
    assert.equal(planned.applied, "count=planned");
    const expected = [before, after].map((rows) => Math.round(rows / OPAQUE_CONDITION_SELECTIVITY ** 2));
    assert.ok(expected.includes(planned.pagination.total!), `${planned.pagination.total} is four times EXPLAIN's ${before} (${after})`);
    assert.ok(planned.pagination.total! >= 1160 / 2 && planned.pagination.total! <= 1160 * 2, `${planned.pagination.total}`);
  }));

Deno.test("the tenant and member lists count exactly or not at all: a planned or estimated count is answered exact and not announced", () =>
  withFixture(async (fixture) => {
    const t = await fixture.tenant("counts-tenants");
    await fixture.memberOf(t, "staff");
    const tenants = lister<{ tenantId: string }>(t.ownerClient, "/v1/tenants");
    const members = lister<{ userId: string }>(t.ownerClient, "/v1/tenants/{tenantId}/members", { tenantId: t.tenantId });
    for (const prefer of ["count=planned", "count=estimated"]) {
      const mine = await tenants("", prefer);
      assert.deepEqual([mine.pagination, mine.applied], [{ limit: 20, offset: 0, total: 1, hasMore: false }, null], prefer);
      const theirs = await members("?limit=1", prefer);
      assert.deepEqual([theirs.pagination, theirs.applied], [{ limit: 1, offset: 0, total: 2, hasMore: true }, null], prefer);
    }
    for (const [list, total] of [[tenants, 1], [members, 2]] as const) {
      const none = await list("?limit=1", "count=none");
      assert.deepEqual([none.pagination, none.applied], [{ limit: 1, offset: 0, total: null, hasMore: total > 1 }, "count=none"]);
      const past = await list("?offset=3", "count=exact");
      assert.deepEqual([past.pagination, past.applied], [{ limit: 20, offset: 3, total, hasMore: false }, "count=exact"]);
    }
  }));
