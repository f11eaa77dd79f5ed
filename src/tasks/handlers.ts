import type { Endpoint } from "../http/endpoint.ts";
import { changedResponses, resourceEndpoints } from "../http/resource-endpoints.ts";
import { conditionalUpdate } from "../http/respond.ts";
import { idParams } from "../http/schemas.ts";
import { tenantEndpoint } from "../http/session-endpoints.ts";
import type { RequestScope } from "../http/request-scope.ts";
import { deleteTask, findTask, insertTask, listTasks, lockTask, updateTask } from "./queries.ts";
import { changeTaskStatusBody, createTaskBody, listTasksQuery, task, updateTaskBody } from "./schema.ts";

export function taskEndpoints(scope: RequestScope): Endpoint[] {
  const tasks = resourceEndpoints(scope, {
    tag: "Tasks", collection: "tasks", schema: task,
    name: { one: "Task", many: "Tasks" }, noun: { one: "task", many: "tasks" },
  });
  return [
    tasks.list({
      access: "member", query: listTasksQuery,
      summary: "List tasks, soonest due first; filter by status, property, unit, assignee and due time.",
    }, listTasks),
    tasks.create({ access: "member", summary: "Create a housekeeping or maintenance task.", body: createTaskBody, problems: ["unknown-reference", "unprocessable"] },
      insertTask),
    tasks.get({ access: "member", summary: "Read a task." }, findTask),
    tasks.update({
      access: "member", body: updateTaskBody, problems: ["lifecycle-transition-refused", "unknown-reference", "unprocessable"],
      summary: "Change a task's details or assignee. A done or cancelled task no longer changes (409).",
    }, { lock: lockTask, update: updateTask }),

    tenantEndpoint(scope, {
      method: "PATCH", path: "/v1/tasks/{id}/status", operationId: "changeTaskStatus", tag: "Tasks", access: "member",
      summary: "Move a task through its lifecycle: open ↔ in_progress, then done or cancelled.",
      params: idParams, resource: "task", body: changeTaskStatusBody, prefer: true, conditional: true, problems: ["lifecycle-transition-refused"],
      success: changedResponses(task),
    }, ({ db, params, body, request, missing }) =>
      conditionalUpdate(request, {
        lock: () => lockTask(db, params.id),
        update: () => updateTask(db, params.id, { status: body.status }),
        notFound: missing,
      })),

    tasks.remove({ access: "manager", summary: "Delete a task." }, deleteTask),
  ];
}
