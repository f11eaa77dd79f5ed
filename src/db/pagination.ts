import { type SelectQueryBuilder, sql } from "kysely";
import { z } from "zod";
import type { Pagination } from "../http/respond.ts";
import type { DB } from "./database.ts";

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

export type Page = { limit: number; offset: number };

// The total rides on the rows as a window count (`__total`); only a page past the end,
// which has no row to carry it, costs a second query, `count`.
export async function pageWithTotal<T>(
  rows: (T & { __total: number })[],
  page: Page,
  count: () => Promise<number>,
): Promise<{ data: T[]; pagination: Pagination }> {
  const total = rows[0]?.__total ?? (page.offset > 0 ? await count() : 0);
  const data = rows.map(({ __total: _, ...row }) => row as T);
  return { data, pagination: { limit: page.limit, offset: page.offset, total } };
}

// One query for the page and the total.
export async function paginate<TB extends keyof DB, O>(
  query: SelectQueryBuilder<DB, TB, O>,
  page: Page,
): Promise<{ data: O[]; pagination: Pagination }> {
  const rows = await query.select(sql<number>`count(*) over ()`.as("__total"))
    .limit(page.limit).offset(page.offset).execute();
  return await pageWithTotal<O>(rows, page, async () => {
    const counted = await query.clearSelect().clearOrderBy().select(sql<number>`count(*)`.as("n")).executeTakeFirst();
    return counted?.n ?? 0;
  });
}
