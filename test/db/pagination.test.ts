// How a list counts its total (src/db/pagination.ts), on the stack's database through the
// request scope a GET runs in: the statements each count sends (recorded as the pool sends
// them), and the planner's estimate against EXPLAIN asked by hand in the same context.
// test/http/prefer.test.ts asks the same through the API.
import assert from "node:assert/strict";
import { createAccessTokenVerifier } from "../../src/auth/access-token.ts";
import { createDb } from "../../src/db/database.ts";
import { type CountMode, type Listed, OPAQUE_CONDITION_SELECTIVITY, type Page } from "../../src/db/pagination.ts";
import { createPool } from "../../src/db/pool.ts";
import type { Reads } from "../../src/db/reads.ts";
import { listGuests } from "../../src/guests/queries.ts";
import { listReservations, type ReservationFilter } from "../../src/reservations/queries.ts";
import { createRequestScope } from "../../src/tenancy/request-scope.ts";
import { type Client, type Fixture, withFixture } from "../support/api.ts";
import { insertRows, plannedByHand } from "../support/counts.ts";
import { createGuest, createProperty } from "../support/domain.ts";
import { stack } from "../support/stack.ts";

type Sent = { sql: string; parameters: unknown[] };

// A request scope over a pool of its own whose every statement is recorded as it is sent.
async function recordingScope(fixture: Fixture, label: string) {
  const tenant = await fixture.tenant(label);
  const pool = createPool(stack.dbUrl, { max: 1, generatedTypes: true });
  const sent: Sent[] = [];
  const reserve = pool.reserve.bind(pool);
  pool.reserve = (async () => {
    const connection = await reserve();
    const unsafe = connection.unsafe.bind(connection);
    connection.unsafe = ((sql: string, parameters: unknown[] = [], ...rest: unknown[]) => {
      sent.push({ sql, parameters });
      return (unsafe as (...args: unknown[]) => unknown)(sql, parameters, ...rest);
    }) as typeof connection.unsafe;
    return connection;
  }) as typeof pool.reserve;
  const db = createDb(pool);
  const scope = createRequestScope({
    db,
    verify: createAccessTokenVerifier({ jwksUrl: `${stack.authUrl}/.well-known/jwks.json`, now: () => Date.now() }),
  });
  const credentials = await scope.authenticate(new Request(stack.v1, { headers: { authorization: `Bearer ${tenant.owner.token}` } }));
  // The list's statements only: not BEGIN, the request's context or COMMIT.
  const read = async <T>(list: (db: Reads) => Promise<Listed<T>>) => {
    sent.length = 0;
    const listed = await scope.read(credentials, tenant.tenantId, ({ db }) => list(db), (role) => assert.equal(role, "owner"));
    return { listed, statements: sent.filter(({ sql }) => !/^(begin|commit)$/.test(sql) && !sql.includes("set_config")) };
  };
  return { tenant, read, close: () => db.destroy() };
}

// Where the rows of a tenant go: a property and a guest made through the API.
async function stays(api: { ownerClient: Client; tenantId: string }) {
  const property = await createProperty(api.ownerClient);
  const guest = await createGuest(api.ownerClient);
  return { tenantId: api.tenantId, propertyId: property.id, guestId: guest.id, currency: property.currency };
}

const pageOf = (count: CountMode | undefined, tenantId: string, limit = 10, offset = 0): Page => ({
  limit, offset, ...(count ? { count } : {}), scope: { reader: "member", tenantId },
});

Deno.test("the statements each count sends: exact counts in the page's, none counts nowhere, planned explains, estimated caps", () =>
  withFixture(async (fixture) => {
    const big = await recordingScope(fixture, "pagination-statements");
    try {
      const at = await stays(big.tenant);
      await insertRows(fixture.sql, at, { reservations: { confirmed: 1100, cancelled: 60 } });
      const confirmed: ReservationFilter = { status: ["confirmed"] };
      const cancelled: ReservationFilter = { status: ["cancelled"] };
      const list = (filter: ReservationFilter, count: CountMode | undefined, offset = 0) =>
        big.read((db) => listReservations(db, filter, pageOf(count, at.tenantId, 10, offset)));

      // Exact, asked or not: one statement, the count a sub-select of its own beside the
      // page, which stops at its last row; no window holds the matches. A filter the
      // status tallies hold sums them instead of counting.
      for (const count of [undefined, "exact"] as const) {
        const { listed, statements } = await list({ ...confirmed, guestId: at.guestId }, count);
        assert.equal(listed.pagination.total, 1100);
        assert.equal(statements.length, 1, count);
        assert.match(statements[0]!.sql, /\(select count\(\*\) from \(select 1 as "one" from "reservations" where "status" in \(\$1\) and "guest_id" = \$2\) as matching\) as "__total"/);
        assert.doesNotMatch(statements[0]!.sql, / over \(/);
        assert.equal(statements[0]!.parameters.at(-2), 10, "limit: the page");

        const tallied = await list(confirmed, count);
        assert.equal(tallied.listed.pagination.total, 1100);
        assert.equal(tallied.statements.length, 1, count);
        assert.match(tallied.statements[0]!.sql, /\(select coalesce\(sum\(reservations\), 0\)::integer as "reservations" from "reservation_status_tallies" where "status" in \(\$\d+\)\) as "__total"/);
        assert.doesNotMatch(tallied.statements[0]!.sql, /count\(/);
      }

      // A date range reads one range of the check-in index from `from` less the longest
      // stay, so it counts apart too: an index-only count of that range, no window.
      const during = await list({ from: "2031-01-01", to: "2040-01-01" }, "exact");
      assert.equal(during.listed.pagination.total, 1160);
      assert.equal(during.statements.length, 1);
      assert.match(during.statements[0]!.sql, /\) as matching\) as "__total"/);
      assert.doesNotMatch(during.statements[0]!.sql, / over \(/);
      assert.match(during.statements[0]!.sql, /max\(longest\.check_out - longest\.check_in\)/);

      // None: one statement with no count at all, one row more than the page.
      const none = await list(confirmed, "none");
      assert.deepEqual([none.listed.pagination.total, none.listed.pagination.hasMore, none.listed.data.length], [null, true, 10]);
      assert.equal(none.statements.length, 1);
      assert.doesNotMatch(none.statements[0]!.sql, /count/i);
      assert.equal(none.statements[0]!.parameters.at(-2), 11, "limit: the page and one row more");

      // Planned: the page without a count, then EXPLAIN of the list's query with the tenant
      // for the planner; it reads no row.
      const planned = await list(confirmed, "planned");
      assert.equal(planned.statements.length, 2);
      assert.doesNotMatch(planned.statements[0]!.sql, /count/i);
      const explain = planned.statements[1]!;
      assert.match(explain.sql, /^explain \(format json\) select 1 as "one" from "reservations" where .*"tenant_id" = \$\d+$/);
      assert.ok(explain.parameters.includes(at.tenantId), "the tenant, bound");

      // Estimated: below 1,001 the count is a sub-select of the page's statement that stops at
      // 1,001 rows; at 1,001, EXPLAIN as for planned.
      const few = await list(cancelled, "estimated");
      assert.equal(few.listed.pagination.total, 60);
      assert.equal(few.statements.length, 1);
      assert.match(few.statements[0]!.sql, /\(select count\(\*\) from \(select 1 as "one" from "reservations" .* limit \$\d+\) as matching\)/);
      assert.ok(few.statements[0]!.parameters.includes(1001));
      const many = await list(confirmed, "estimated");
      assert.ok(many.listed.pagination.total! >= 1001);
      assert.equal(many.statements.length, 2);
      assert.match(many.statements[1]!.sql, /^explain \(format json\)/);

      // Past the end no row carries a count: exact and estimated count in a statement of
      // their own, none still counts nothing.
      const pastExact = await list(confirmed, "exact", 2000);
      assert.deepEqual([pastExact.listed.data, pastExact.listed.pagination.total], [[], 1100]);
      assert.match(pastExact.statements[1]!.sql, /^select count\(\*\) as "n" from "reservations"/);
      const pastNone = await list(confirmed, "none", 2000);
      assert.deepEqual([pastNone.listed.data, pastNone.listed.pagination.total, pastNone.statements.length], [[], null, 1]);
      const pastFew = await list(cancelled, "estimated", 100);
      assert.deepEqual([pastFew.listed.data, pastFew.listed.pagination.total, pastFew.statements.length], [[], 60, 2]);
      assert.match(pastFew.statements[1]!.sql, /^select \(select count\(\*\) from \(.* limit \$\d+\) as matching\) as "n"/);
    } finally {
      await big.close();
    }
  }));

// The policies' sub-select the planner cannot evaluate (see OPAQUE_CONDITION_SELECTIVITY):
// a member's membership or role, an integration's scope.
const opaque = /\(\s*SELECT private\.request_is_(member|manager)\(\) AS request_is_(member|manager)\)/g;
const opaqueScope = /\(\s*SELECT private\.request_has_scope\('\{[a-z:,]+\}'::text\[\]\) AS request_has_scope\)/g;
const opaqueAllProperties = /\(\s*SELECT private\.request_all_properties\(\) AS request_all_properties\)/g;

Deno.test("a member's read policies each end in one condition the planner cannot estimate; an integration's holds two", () =>
  withFixture(async ({ sql }) => {
    // Every table a session API list reads, and the one the integration API lists.
    const tables = ["access_codes", "api_keys", "guests", "inbox_messages", "notification_preferences", "notifications",
      "payment_links", "payments", "properties", "push_subscriptions", "rate_plans", "reservations", "tasks", "units",
      "webhook_deliveries", "webhook_events", "webhook_subscriptions"];
    const policies = await sql<{ tablename: string; roles: string[]; qual: string }[]>`
      select tablename, roles, qual from pg_policies
      where schemaname = 'public' and cmd in ('SELECT', 'ALL') and tablename = any(${tables})
        and roles && array['authenticated', 'api_integration']::name[]`;
    for (const table of tables) {
      const members = policies.filter((policy) => policy.tablename === table && policy.roles.includes("authenticated"));
      assert.equal(members.length, 1, `${table}: one read policy for members`);
      assert.equal(members[0]!.qual.match(opaque)?.length, 1, `${table}: ${members[0]!.qual}`);
    }
    const integration = policies.filter((policy) => policy.tablename === "reservations" && policy.roles.includes("api_integration"));
    assert.equal(integration.length, 1);
    assert.equal(integration[0]!.qual.match(opaque), null, integration[0]!.qual);
    assert.equal(integration[0]!.qual.match(opaqueScope)?.length, 1, integration[0]!.qual);
    assert.equal(integration[0]!.qual.match(opaqueAllProperties)?.length, 1, integration[0]!.qual);
    assert.equal(OPAQUE_CONDITION_SELECTIVITY, 0.5);
  }));

Deno.test("planned is EXPLAIN's estimate with the tenant where the planner sees it: near the truth for a big tenant, apart from a small one's", () =>
  withFixture(async (fixture) => {
    const big = await recordingScope(fixture, "pagination-big");
    const small = await recordingScope(fixture, "pagination-small");
    try {
      const bigAt = await stays(big.tenant);
      await insertRows(fixture.sql, bigAt, { reservations: { confirmed: 1100, cancelled: 60 }, guests: 1100 });
      const smallAt = await stays(small.tenant);
      await insertRows(fixture.sql, smallAt, { reservations: { confirmed: 30 }, guests: 29 });

      const check = async (
        scope: Awaited<ReturnType<typeof recordingScope>>,
        tenantId: string,
        list: (db: Reads, page: Page) => Promise<Listed<unknown>>,
        query: string,
        parameters: string[],
      ) => {
        const byHand = () =>
          plannedByHand(fixture.sql, { role: "authenticated", userId: scope.tenant.owner.id, tenantId }, query, [tenantId, ...parameters]);
        const before = await byHand();
        const { listed } = await scope.read((db) => list(db, pageOf("planned", tenantId, 1)));
        const after = await byHand();
        // The member's policy halves the plan's rows (see the test above); the page's first
        // row and the one after it are there whatever the plan says.
        const expected = [before, after].map((rows) => Math.max(Math.round(rows / OPAQUE_CONDITION_SELECTIVITY), 2));
        assert.ok(expected.includes(listed.pagination.total!), `${query}: ${listed.pagination.total} is twice EXPLAIN's ${before} (${after})`);
        return listed.pagination.total!;
      };
      const reservations = (filter: ReservationFilter) => (db: Reads, page: Page) => listReservations(db, filter, page);
      const all = "select 1 from public.reservations where tenant_id = $1";
      const bigAll = await check(big, bigAt.tenantId, reservations({}), all, []);
      const smallAll = await check(small, smallAt.tenantId, reservations({}), all, []);
      assert.ok(bigAll >= 1160 / 2 && bigAll <= 1160 * 2, `within a factor of 2 of 1,160: ${bigAll}`);
      assert.ok(smallAll < bigAll / 10, `30 against 1,160: ${smallAll} against ${bigAll}`);

      // One status is `status in ($2)`, which Postgres reads as `status = $2`.
      const byStatus = "select 1 from public.reservations where tenant_id = $1 and status = $2";
      const bigConfirmed = await check(big, bigAt.tenantId, reservations({ status: ["confirmed"] }), byStatus, ["confirmed"]);
      const smallConfirmed = await check(small, smallAt.tenantId, reservations({ status: ["confirmed"] }), byStatus, ["confirmed"]);
      assert.ok(smallConfirmed < bigConfirmed, `${smallConfirmed} against ${bigConfirmed}`);

      const guests = (db: Reads, page: Page) => listGuests(db, page, page);
      const bigGuests = await check(big, bigAt.tenantId, guests, "select 1 from public.guests where tenant_id = $1", []);
      assert.ok(bigGuests >= 1101 / 2 && bigGuests <= 1101 * 2, `within a factor of 2 of 1,101: ${bigGuests}`);
    } finally {
      await big.close();
      await small.close();
    }
  }));
