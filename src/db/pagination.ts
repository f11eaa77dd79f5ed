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

export type Page = { limit: number; offset: number };

// One query for the page and the total (a window count); only a page past the end,
// which has no row to carry the count, costs a second one.
export async function paginate<TB extends keyof DB, O>(
  query: SelectQueryBuilder<DB, TB, O>,
  page: Page,
): Promise<{ data: O[]; pagination: Pagination }> {
  const rows = await query.select(sql<number>`count(*) over ()`.as("__total"))
    .limit(page.limit).offset(page.offset).execute();
  let total = rows[0]?.__total ?? 0;
  if (rows.length === 0 && page.offset > 0) {
    const counted = await query.clearSelect().clearOrderBy().select(sql<number>`count(*)`.as("n")).executeTakeFirst();
    total = counted?.n ?? 0;
  }
  const data = rows.map(({ __total: _, ...row }) => row as O);
  return { data, pagination: { limit: page.limit, offset: page.offset, total } };
}
