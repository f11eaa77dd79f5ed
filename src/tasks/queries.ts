import type { Transaction } from "kysely";
import type { z } from "zod";
import { camelSelection, snakeKeys } from "../db/columns.ts";
import type { DB } from "../db/database.ts";
import { type Page, paginate } from "../db/pagination.ts";
import type { Reads } from "../db/reads.ts";
import type { createTaskBody, listTasksQuery, taskStatuses, updateTaskBody } from "./schema.ts";

const columns = camelSelection([
  "id", "property_id", "unit_id", "reservation_id", "type", "title", "description", "assignee_id", "due_at", "priority",
  "status", "started_at", "completed_at", "cancelled_at", "created_at", "updated_at",
]);

// Soonest due first; undated work after everything with a date.
export function listTasks(db: Reads, filter: z.output<typeof listTasksQuery>, page: Page) {
  let query = db.selectFrom("tasks").select(columns).orderBy("due_at", (order) => order.asc().nullsLast()).orderBy("id");
  if (filter.status) query = query.where("status", "in", filter.status);
  if (filter.propertyId) query = query.where("property_id", "=", filter.propertyId);
  if (filter.unitId) query = query.where("unit_id", "=", filter.unitId);
  if (filter.assigneeId) query = query.where("assignee_id", "=", filter.assigneeId);
  if (filter.dueBefore) query = query.where("due_at", "<", filter.dueBefore);
  if (filter.dueAfter) query = query.where("due_at", ">=", filter.dueAfter);
  return paginate(query, page, { tenant: ["tenant_id"] });
}

export function findTask(db: Reads, id: string) {
  return db.selectFrom("tasks").select(columns).where("id", "=", id).executeTakeFirst();
}

// The same under lock, held until the write's transaction ends: for a conditional update.
export function lockTask(db: Transaction<DB>, id: string) {
  return db.selectFrom("tasks").select(columns).where("id", "=", id).forUpdate().executeTakeFirst();
}

export function insertTask(db: Transaction<DB>, input: z.output<typeof createTaskBody>) {
  return db.insertInto("tasks").values(snakeKeys(input)).returning(columns).executeTakeFirstOrThrow();
}

export function updateTask(
  db: Transaction<DB>,
  id: string,
  input: z.output<typeof updateTaskBody> | { status: (typeof taskStatuses)[number] },
) {
  return db.updateTable("tasks").set(snakeKeys(input)).where("id", "=", id).returning(columns).executeTakeFirst();
}

export function deleteTask(db: Transaction<DB>, id: string) {
  return db.deleteFrom("tasks").where("id", "=", id).executeTakeFirst();
}
