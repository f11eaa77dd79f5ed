import { type RawBuilder, type SelectQueryBuilder, sql, type StringReference } from "kysely";
import { z } from "zod";
import type { DB } from "./database.ts";

// `total` is null under Prefer: count=none; `hasMore` says whether a page follows this one.
export type Pagination = { limit: number; offset: number; total: number | null; hasMore: boolean };

export const MAX_PAGE_SIZE = 100;
export const DEFAULT_PAGE_SIZE = 20;

// A whole number in a query string, written plainly: digits, no sign, no leading zero, no
// spaces (so `offset=` or `limit=1e2` is a 400, not 0 or 100). The document types it as the
// integer it stands for.
export function queryInteger(min: number, max: number, description: string) {
  return z.string().regex(/^(0|[1-9][0-9]*)$/, `A whole number from ${min} to ${max}.`).transform(Number)
    .pipe(z.number().int().min(min).max(max))
    .meta({ type: "integer", minimum: min, maximum: max, description });
}

// The query parameters every list takes.
export const pageQuery = {
  limit: queryInteger(1, MAX_PAGE_SIZE, `Items per page, 1 to ${MAX_PAGE_SIZE}.`).default(DEFAULT_PAGE_SIZE),
  offset: queryInteger(0, 1_000_000, "Items to skip.").default(0),
};

// A list's query that takes paging and nothing else.
export const pageOnly = z.strictObject(pageQuery);

// How a list counts its total, as a client asks with Prefer: count=<mode>
// (src/http/prefer.ts; docs/api.md, Lists: pages and counts):
// - exact, the default: every matching row, counted by the page's own statement (see
//   paginate for how).
// - none: nothing. The page's statement has no count; it fetches one row more than the
//   page, which tells whether more follow.
// - planned: the planner's estimate of the matching rows, from EXPLAIN of the list's
//   query, one statement more.
// - estimated: exact up to ESTIMATED_EXACT_UP_TO rows, counted by the page's statement
//   with a count that stops one row past it; above, the planned count, one statement more.
export const countModes = ["exact", "planned", "estimated", "none"] as const;
export type CountMode = (typeof countModes)[number];

// count=estimated's total is exact up to this many rows; above, it is the planner's
// estimate, never below one more than this, so a client can tell which it got.
export const ESTIMATED_EXACT_UP_TO = 1000;

// Whom a list is read for, as values: a member of the tenant (the session API) or an
// integration (an API key's property). Row-level security compares each row with the
// request's settings through sub-selects whose values the planner cannot know when it
// plans, so it would estimate every tenant's share of a table alike. An estimate adds the
// tenant (and property) as plain predicates, which select nothing the policies do not,
// bound as parameters: the planner plans the statement for their values and reads the
// tenant's share from the table's statistics.
export type Scope = { reader: "member" | "integration"; tenantId: string; propertyId?: string };

// `count` is exact unless said; without `scope` an estimate is the planner's guess for any tenant.
export type Page = { limit: number; offset: number; count?: CountMode; scope?: Scope };

// Where a list's query holds what Scope names: the tenant column of each table it reads
// (each under its own policy), and the property column where it has one.
export type ScopeColumns<TB extends keyof DB> = { tenant: StringReference<DB, TB>[]; property?: StringReference<DB, TB> };

// What the planner takes a condition to let through when it cannot estimate it: PostgreSQL's
// default for a boolean it cannot evaluate while planning. A member's read policies each end
// in one such condition, a sub-select of the caller's membership or role
// (private.request_is_member() or request_is_manager()), which row-level security keeps on
// each row so that no row is looked at before it passes: the planner halves the rows of
// every table under such a policy. The estimate is corrected by that much for each table
// the query reads. An integration's read policy holds two: the sub-select of its key's
// scopes (private.request_has_scope()), and whether the key acts for all of the tenant's
// properties (private.request_all_properties()), or'd with the key's list of properties,
// which the planner takes to pass somewhere between half the rows and all of them: its
// estimate is corrected twice, and lands between the truth and twice it.
// test/db/pagination.test.ts holds the policies to this.
export const OPAQUE_CONDITION_SELECTIVITY = 0.5;

// A page, and how its total was counted.
export type Listed<T> = { data: T[]; pagination: Pagination; counted: CountMode };

// An exact page: the total rides on the rows (`__total`); only a page past the end,
// which has no row to carry it, costs a second query, `count`.
export async function pageWithTotal<T>(
  rows: (T & { __total: number })[],
  page: Page,
  count: () => Promise<number>,
): Promise<Listed<T>> {
  const total = rows[0]?.__total ?? (page.offset > 0 ? await count() : 0);
  const data = rows.map(({ __total: _, ...row }) => row as T);
  const hasMore = page.offset + data.length < total;
  return { data, pagination: { limit: page.limit, offset: page.offset, total, hasMore }, counted: "exact" };
}

// A page fetched with one row more than it holds (`limit + 1`): that row, dropped, says
// more follow. `total` is whatever the mode counted, or null. An estimate is kept to what
// the page shows: at least the rows up to its end (and one more when more follow), and
// on the last page exactly those; past the end, at most the offset.
export function pageAhead<T>(rows: T[], page: Page, total: number | null, counted: CountMode): Listed<T> {
  const data = rows.slice(0, page.limit);
  const hasMore = rows.length > page.limit;
  const seen = page.offset + data.length;
  const atLeast = data.length > 0 ? seen + (hasMore ? 1 : 0) : 0;
  const atMost = hasMore ? Infinity : seen;
  const kept = total === null ? null : Math.min(Math.max(total, atLeast), atMost);
  return { data, pagination: { limit: page.limit, offset: page.offset, total: kept, hasMore }, counted };
}

type Plan = { "QUERY PLAN": [{ Plan: { "Plan Rows": number } }] };

// The planner's estimate of the rows `query` matches: its plan's top row count, planned
// under the request's context like the page (the policies apply to the estimate too),
// with the request's scope as predicates the planner can read. EXPLAIN runs nothing.
async function plannedRows<TB extends keyof DB, O>(
  query: SelectQueryBuilder<DB, TB, O>,
  scope: Scope | undefined,
  columns: ScopeColumns<TB>,
): Promise<number> {
  let visible = query.clearSelect().clearOrderBy().select(sql<number>`1`.as("one"));
  if (scope) {
    for (const tenant of columns.tenant) visible = visible.where(sql.ref<string>(tenant), "=", scope.tenantId);
    if (scope.propertyId && columns.property) visible = visible.where(sql.ref<string>(columns.property), "=", scope.propertyId);
  }
  const [explained] = await visible.explain<Plan>("json");
  const rows = explained?.["QUERY PLAN"][0].Plan["Plan Rows"];
  if (rows === undefined) throw new Error("EXPLAIN answered no plan");
  const opaque = scope ? columns.tenant.length * (scope.reader === "integration" ? 2 : 1) : 0;
  return Math.round(rows / OPAQUE_CONDITION_SELECTIVITY ** opaque);
}

// How many rows `query` matches, as a sub-select, counting no further than `upTo` if given.
function countOf<TB extends keyof DB, O>(query: SelectQueryBuilder<DB, TB, O>, upTo?: number) {
  const matching = query.clearSelect().clearOrderBy().select(sql<number>`1`.as("one"));
  return sql<number>`(select count(*) from ${upTo === undefined ? matching : matching.limit(upTo)} as matching)`;
}

// One page of `query` and its total, counted as `page.count` says (see CountMode). The
// default, exact, is one statement, and so is none; planned and estimated may cost one
// more, the planner's estimate. `keptTotal`, where the list's filters allow one, is a
// sub-select of a total the database keeps (a tally), which the exact page reads in place
// of counting the matches: it must equal their count in any snapshot.
export async function paginate<TB extends keyof DB, O>(
  query: SelectQueryBuilder<DB, TB, O>,
  page: Page,
  columns: ScopeColumns<TB>,
  keptTotal?: RawBuilder<number>,
): Promise<Listed<O>> {
  const count = page.count ?? "exact";
  if (count === "exact") {
    // The count is a sub-select of its own, run once, that counts the matches and nothing
    // else: where the list's order comes from an index, the page stops at its last row and
    // the count reads only what it needs, often the index alone. A window count over the
    // page's rows would make the page read and hold every matching row, columns and all,
    // before it cuts the page: on a large tenant that spilled to temporary files and took
    // most of the statement's time.
    const total = keptTotal ?? countOf(query);
    const rows = await query.select(total.as("__total")).limit(page.limit).offset(page.offset).execute();
    return await pageWithTotal<O>(rows, page, async () => {
      const counted = await query.clearSelect().clearOrderBy().select(sql<number>`count(*)`.as("n")).executeTakeFirst();
      return counted?.n ?? 0;
    });
  }
  if (count === "estimated") {
    // The capped count is a sub-select the page's statement runs once. A page past the
    // end has no row to carry it: a statement of its own asks for it on the list's first
    // row, and no row at all means none matched.
    const capped = countOf(query, ESTIMATED_EXACT_UP_TO + 1);
    const rows = await query.select(capped.as("__counted")).limit(page.limit + 1).offset(page.offset).execute();
    const counted = rows[0]?.__counted ?? (page.offset > 0
      ? (await query.clearSelect().clearOrderBy().select(capped.as("n")).limit(1).executeTakeFirst())?.n ?? 0
      : 0);
    const total = counted <= ESTIMATED_EXACT_UP_TO
      ? counted
      : Math.max(await plannedRows(query, page.scope, columns), ESTIMATED_EXACT_UP_TO + 1);
    return pageAhead(rows.map(({ __counted: _, ...row }) => row as O), page, total, "estimated");
  }
  const rows = await query.limit(page.limit + 1).offset(page.offset).execute();
  const total = count === "planned" ? await plannedRows(query, page.scope, columns) : null;
  return pageAhead(rows, page, total, count);
}
