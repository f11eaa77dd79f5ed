import { type SelectQueryBuilder, sql } from "kysely";
import { z } from "zod";
import type { Pagination } from "../http/respond.ts";
import type { DB } from "./database.ts";

export const MAX_PAGE_SIZE = 100;
export const DEFAULT_PAGE_SIZE = 20;

// The query parameters every list takes.
export const pageQuery = {
  limit: z.coerce.number().int().min(1).max(MAX_PAGE_SIZE).default(DEFAULT_PAGE_SIZE)
    .meta({ description: `Items per page, 1 to ${MAX_PAGE_SIZE}.` }),
  offset: z.coerce.number().int().min(0).max(1_000_000).default(0)
    .meta({ description: "Items to skip." }),
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
