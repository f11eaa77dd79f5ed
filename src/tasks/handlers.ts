import type { Endpoint, SuccessDoc } from "../http/endpoint.ts";
import { conditionalUpdate, deleted, listResponse, locationOf, representation, written } from "../http/respond.ts";
import { idParams, listOf } from "../http/schemas.ts";
import { notFound, tenantEndpoint } from "../tenancy/endpoints.ts";
import type { RequestScope } from "../tenancy/request-scope.ts";
import { deleteTask, findTask, insertTask, listTasks, updateTask } from "./queries.ts";
import { changeTaskStatusBody, createTaskBody, listTasksQuery, task, updateTaskBody } from "./schema.ts";

const tag = "Tasks";
const missing = () => notFound("task");
const changed: SuccessDoc[] = [
  { status: 204, description: "Updated.", headers: ["ETag"] },
  { status: 200, description: "Updated (Prefer: return=representation).", schema: task, headers: ["ETag"] },
];

export function taskEndpoints(scope: RequestScope): Endpoint[] {
  return [
    tenantEndpoint(scope, {
      method: "GET", path: "/v1/tasks", operationId: "listTasks", tag, access: "member",
      summary: "List tasks, soonest due first; filter by status, property, unit, assignee and due time.",
      query: listTasksQuery,
      success: [{ status: 200, description: "A page of tasks.", schema: listOf(task) }],
    }, async ({ db, query }) => {
      const { data, pagination } = await listTasks(db, query, query);
      return listResponse(data, pagination);
    }),

    tenantEndpoint(scope, {
      method: "POST", path: "/v1/tasks", operationId: "createTask", tag, access: "member",
      summary: "Create a housekeeping or maintenance task.", body: createTaskBody, prefer: true, errors: [422],
      success: [{ status: 201, description: "Created.", schema: task, headers: ["Location", "ETag"] }],
    }, async ({ db, body, request }) => {
      const row = await insertTask(db, body);
      return await written(request, row, { created: { location: locationOf(request, `tasks/${row.id}`) } });
    }),

    tenantEndpoint(scope, {
      method: "GET", path: "/v1/tasks/{id}", operationId: "getTask", tag, access: "member",
      summary: "Read a task.", params: idParams,
      success: [{ status: 200, description: "The task.", schema: task, headers: ["ETag"] }],
    }, async ({ db, params }) => {
      const found = await findTask(db, params.id);
      if (!found) throw missing();
      return await representation(found);
    }),

    tenantEndpoint(scope, {
      method: "PATCH", path: "/v1/tasks/{id}", operationId: "updateTask", tag, access: "member",
      summary: "Change a task's details or assignee. A done or cancelled task no longer changes (409).",
      params: idParams, body: updateTaskBody, prefer: true, conditional: true, errors: [409, 422], success: changed,
    }, ({ db, params, body, request }) =>
      conditionalUpdate(request, {
        lock: () => findTask(db, params.id, { lock: true }),
        update: () => updateTask(db, params.id, body),
        notFound: missing,
      })),

    tenantEndpoint(scope, {
      method: "PATCH", path: "/v1/tasks/{id}/status", operationId: "changeTaskStatus", tag, access: "member",
      summary: "Move a task through its lifecycle (contract route): open ↔ in_progress, then done or cancelled.",
      params: idParams, body: changeTaskStatusBody, prefer: true, conditional: true, errors: [409], success: changed,
    }, ({ db, params, body, request }) =>
      conditionalUpdate(request, {
        lock: () => findTask(db, params.id, { lock: true }),
        update: () => updateTask(db, params.id, { status: body.status }),
        notFound: missing,
      })),

    tenantEndpoint(scope, {
      method: "DELETE", path: "/v1/tasks/{id}", operationId: "deleteTask", tag, access: "manager",
      summary: "Delete a task.", params: idParams, success: [{ status: 204, description: "Deleted." }],
    }, async ({ db, params }) => {
      const result = await deleteTask(db, params.id);
      if (result.numDeletedRows === 0n) throw missing();
      return deleted();
    }),
  ];
}
