import { z } from "zod";
import { pageQuery } from "../db/pagination.ts";
import { id, oneOrMany, patchOf, text, timestamp, timestampInput } from "../http/schemas.ts";

export const taskTypes = ["cleaning", "maintenance", "inspection", "other"] as const;
export const taskPriorities = ["low", "normal", "high", "urgent"] as const;
export const taskStatuses = ["open", "in_progress", "done", "cancelled"] as const;

const editable = {
  unitId: id.nullable(),
  reservationId: id.nullable(),
  type: z.enum(taskTypes),
  title: text(200),
  description: z.string().max(4000).nullable(),
  assigneeId: id.nullable().meta({ description: "A member of the tenant." }),
  dueAt: timestampInput.nullable(),
  priority: z.enum(taskPriorities),
};

export const createTaskBody = z.strictObject({
  ...editable,
  propertyId: id,
  unitId: editable.unitId.optional(),
  reservationId: editable.reservationId.optional(),
  description: editable.description.optional(),
  assigneeId: editable.assigneeId.optional(),
  dueAt: editable.dueAt.optional(),
  priority: editable.priority.default("normal"),
  status: z.enum(["open", "in_progress"]).default("open"),
}).meta({ id: "TaskCreate" });

// Status has its own route, so that a field edit never moves the lifecycle by accident.
export const updateTaskBody = patchOf(editable).meta({ id: "TaskUpdate" });

export const changeTaskStatusBody = z.strictObject({ status: z.enum(taskStatuses) }).meta({ id: "TaskStatusChange" });

export const task = z.object({
  id,
  propertyId: id,
  unitId: id.nullable(),
  reservationId: id.nullable(),
  type: z.enum(taskTypes),
  title: z.string(),
  description: z.string().nullable(),
  assigneeId: id.nullable(),
  dueAt: timestamp.nullable(),
  priority: z.enum(taskPriorities),
  status: z.enum(taskStatuses),
  startedAt: timestamp.nullable(),
  completedAt: timestamp.nullable(),
  cancelledAt: timestamp.nullable(),
  createdAt: timestamp,
  updatedAt: timestamp,
}).meta({ id: "Task" });

export const listTasksQuery = z.strictObject({
  ...pageQuery,
  status: oneOrMany(taskStatuses).optional(),
  propertyId: id.optional(),
  unitId: id.optional(),
  assigneeId: id.optional(),
  dueBefore: timestampInput.optional().meta({ description: "Tasks due before this instant." }),
  dueAfter: timestampInput.optional().meta({ description: "Tasks due at or after this instant." }),
});
