// Tasks end to end through the gateway: every route of src/tasks/handlers.ts, the
// lifecycle the database keeps (supabase/migrations/20261122000700_tasks.sql), who may
// write, the list's order, paging and filters, and the cleaning task a check-out leaves.
// Every response is checked against the served OpenAPI document.
import assert from "node:assert/strict";
import {
  addMember,
  type Client,
  client,
  expectInvalid,
  expectMinimal,
  expectPaging,
  expectProblem,
  expectStatus,
  listPage,
  MALFORMED_ID,
  readBack,
  readOne,
  representation,
  type Schemas,
  unique,
  UNKNOWN_ID,
  withFixture,
} from "../support/api.ts";
import { createProperty, createStay, createUnit, type Reservation } from "../support/domain.ts";

const TASKS = "/v1/tasks";
const TASK = "/v1/tasks/{id}";
const TASK_STATUS = "/v1/tasks/{id}/status";

type TaskStatus = Task["status"];

type Task = Schemas["Task"];

const STATUSES: TaskStatus[] = ["open", "in_progress", "done", "cancelled"];

async function createTask(api: Client, propertyId: string, fields: Record<string, unknown> = {}): Promise<Task> {
  const response = await api.post("/tasks", { propertyId, type: "maintenance", title: unique("Fix the tap"), ...fields }, representation);
  return await expectStatus<Task>("POST", TASKS, response, 201);
}

const readTask = (api: Client, id: string) => readOne<Task>(api, TASK, { id });

async function moveTask(api: Client, id: string, status: TaskStatus): Promise<Task> {
  const response = await api.patch(`/tasks/${id}/status`, { status }, representation);
  return await expectStatus<Task>("PATCH", TASK_STATUS, response, 200);
}

// A task in `status`, reached through the API the way a client gets there.
async function taskIn(api: Client, propertyId: string, status: TaskStatus): Promise<Task> {
  const created = await createTask(api, propertyId, { status: status === "in_progress" || status === "done" ? "in_progress" : "open" });
  return status === "done" || status === "cancelled" ? await moveTask(api, created.id, status) : created;
}

const listTasks = (api: Client, query = "") => listPage<Task>(api, TASKS, query);

const byId = (a: Task, b: Task) => (a.id < b.id ? -1 : 1);
const ids = (tasks: Task[]) => tasks.map((task) => task.id);
const at = (timestamp: string) => encodeURIComponent(timestamp);

// ---------------------------------------------------------------- POST /v1/tasks

Deno.test("POST /v1/tasks with return=representation: 201, the task, Location and ETag; in_progress stamps startedAt", () =>
  withFixture(async ({ tenant, memberOf }) => {
    const t = await tenant("task-create");
    const staff = await memberOf(t, "staff");
    const stay = await createStay(t.ownerClient);
    const input = {
      propertyId: stay.property.id,
      unitId: stay.unit.id,
      reservationId: stay.reservation.id,
      type: "inspection",
      title: "  Check the smoke alarm  ",
      description: "Beeps at night.",
      assigneeId: staff.id,
      dueAt: "2027-03-10T11:30:00+01:00",
      priority: "high",
      status: "in_progress",
    };
    const response = await t.ownerClient.post("/tasks", input, representation);
    const created = await expectStatus<Task>("POST", TASKS, response, 201);
    assert.deepEqual(created, {
      ...input,
      title: "Check the smoke alarm",
      dueAt: "2027-03-10T10:30:00+00:00",
      id: created.id,
      startedAt: created.createdAt,
      completedAt: null,
      cancelledAt: null,
      createdAt: created.createdAt,
      updatedAt: created.createdAt,
    });
    assert.ok(Math.abs(Date.parse(created.createdAt) - Date.now()) < 60_000, "stamped now");
    assert.equal(response.headers.get("preference-applied"), "return=representation");
    const { location, body } = await readBack(t.ownerClient, "/tasks", response, TASK);
    assert.equal(location, `/tasks/${created.id}`);
    assert.deepEqual(body, created);
  }));

Deno.test("POST /v1/tasks without Prefer: 201 with Location, ETag and the new id; priority normal and status open by default", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("task-create-min");
    const property = await createProperty(t.ownerClient);
    const title = unique("Replace the bulb");
    const response = await t.ownerClient.post("/tasks", { propertyId: property.id, type: "other", title });
    await expectMinimal("POST", TASKS, response, 201);
    const { location, body: task } = await readBack<Task>(t.ownerClient, "/tasks", response, TASK);
    assert.match(location, /^\/tasks\/[0-9a-f-]{36}$/);
    assert.deepEqual(task, {
      id: location.slice("/tasks/".length),
      propertyId: property.id,
      unitId: null,
      reservationId: null,
      type: "other",
      title,
      description: null,
      assigneeId: null,
      dueAt: null,
      priority: "normal",
      status: "open",
      startedAt: null,
      completedAt: null,
      cancelledAt: null,
      createdAt: task.createdAt,
      updatedAt: task.createdAt,
    });
  }));

Deno.test("POST /v1/tasks: 400 for missing, unknown or invalid fields, and for a task created done or cancelled", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("task-create400");
    const property = await createProperty(t.ownerClient);
    const valid = { propertyId: property.id, type: "cleaning", title: "Clean room 1" };
    const cases: [unknown, string][] = [
      [{ type: "cleaning", title: "x" }, "propertyId"],
      [{ ...valid, propertyId: "p-1" }, "propertyId"],
      [{ propertyId: property.id, title: "x" }, "type"],
      [{ ...valid, type: "laundry" }, "type"],
      [{ ...valid, priority: "critical" }, "priority"],
      [{ ...valid, title: "   " }, "title"],
      [{ ...valid, title: "x".repeat(201) }, "title"],
      [{ ...valid, description: "x".repeat(4001) }, "description"],
      [{ ...valid, status: "done" }, "status"],
      [{ ...valid, status: "cancelled" }, "status"],
      [{ ...valid, status: "closed" }, "status"],
      [{ ...valid, dueAt: "tomorrow" }, "dueAt"],
      [{ ...valid, dueAt: "2027-03-10" }, "dueAt"],
      [{ ...valid, dueAt: "2027-03-10T10:00:00" }, "dueAt"],
      [{ ...valid, assigneeId: "someone" }, "assigneeId"],
      [{ ...valid, unitId: 7 }, "unitId"],
      [{ ...valid, colour: "red" }, "colour"],
      [{ ...valid, startedAt: "2027-03-10T10:00:00Z" }, "startedAt"],
    ];
    for (const [body, path] of cases) {
      await expectInvalid("POST", TASKS, await t.ownerClient.post("/tasks", body), path, JSON.stringify(body));
    }
    await expectProblem("POST", TASKS, await t.ownerClient.post("/tasks"), 400, "validation");
    assert.equal((await listTasks(t.ownerClient)).pagination.total, 0, "nothing was created");
  }));

Deno.test("POST /v1/tasks: 422 for a unit or reservation of another property or tenant, and for an unknown property", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("task-create422");
    const other = await tenant("task-create422-other");
    const property = await createProperty(t.ownerClient);
    const elsewhere = await createStay(t.ownerClient);
    const foreign = await createStay(other.ownerClient);
    const valid = { propertyId: property.id, type: "maintenance", title: "Fix the shower" };
    const cases: Record<string, unknown>[] = [
      { ...valid, unitId: elsewhere.unit.id },
      { ...valid, reservationId: elsewhere.reservation.id },
      { ...valid, propertyId: elsewhere.property.id, unitId: elsewhere.unit.id, reservationId: foreign.reservation.id },
      { ...valid, unitId: foreign.unit.id },
      { ...valid, propertyId: foreign.property.id },
      { ...valid, propertyId: UNKNOWN_ID },
    ];
    for (const body of cases) {
      const problem = await expectProblem("POST", TASKS, await t.ownerClient.post("/tasks", body), 422, "unknown-reference");
      assert.match(problem.detail, /referenced record does not exist/, JSON.stringify(body));
    }
    assert.equal((await listTasks(t.ownerClient)).pagination.total, 0, "nothing was created");
    assert.equal((await listTasks(other.ownerClient)).pagination.total, 0, "nothing was created in the other tenant");
  }));

Deno.test("POST /v1/tasks: the assignee must be a member of the tenant; a stranger or another tenant's member is a 422", () =>
  withFixture(async ({ user, tenant }) => {
    const t = await tenant("task-assignee");
    const other = await tenant("task-assignee-other");
    const staff = await user("staff");
    const stranger = await user("stranger");
    const otherStaff = await user("other-staff");
    await addMember(t.ownerClient, staff, "staff");
    await addMember(other.ownerClient, otherStaff, "staff");
    const property = await createProperty(t.ownerClient);

    for (const assigneeId of [stranger.id, otherStaff.id, other.owner.id, UNKNOWN_ID]) {
      const response = await t.ownerClient.post("/tasks", { propertyId: property.id, type: "cleaning", title: "Clean", assigneeId });
      const problem = await expectProblem("POST", TASKS, response, 422, "unknown-reference");
      assert.match(problem.detail, /referenced record does not exist/);
    }
    assert.equal((await listTasks(t.ownerClient)).pagination.total, 0, "nothing was created");

    const assigned = await createTask(t.ownerClient, property.id, { assigneeId: staff.id });
    assert.equal(assigned.assigneeId, staff.id);
    const owners = await createTask(t.ownerClient, property.id, { assigneeId: t.owner.id });
    assert.equal(owners.assigneeId, t.owner.id);
  }));

// ---------------------------------------------------------------- GET /v1/tasks/{id}

Deno.test("GET /v1/tasks/{id}: 200 with an ETag for a member; unknown, malformed and other tenants' ids are 404", () =>
  withFixture(async ({ tenant, memberOf }) => {
    const a = await tenant("task-get-a");
    const b = await tenant("task-get-b");
    const staff = await memberOf(a, "staff");
    await addMember(b.ownerClient, staff, "staff");
    const property = await createProperty(a.ownerClient);
    const task = await createTask(a.ownerClient, property.id);

    const read = await client(staff, a.tenantId).get(`/tasks/${task.id}`);
    assert.deepEqual(await expectStatus("GET", TASK, read, 200), task);
    assert.match(read.headers.get("etag") ?? "", /^"[A-Za-z0-9_-]+"$/);

    const inB = client(staff, b.tenantId);
    const problems = [];
    for (const id of [task.id, UNKNOWN_ID, MALFORMED_ID]) {
      problems.push(await expectProblem("GET", TASK, await inB.get(`/tasks/${id}`), 404, "not-found"));
    }
    assert.deepEqual(problems[0], problems[1], "another tenant's task reads like an unknown one");
    assert.deepEqual(problems[0], problems[2]);
  }));

// ---------------------------------------------------------------- PATCH /v1/tasks/{id}/status

Deno.test("PATCH /v1/tasks/{id}/status: every pair of statuses, with the stamps each step leaves", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("task-lifecycle");
    const property = await createProperty(t.ownerClient);
    const allowed: Record<TaskStatus, TaskStatus[]> = {
      open: ["open", "in_progress", "done", "cancelled"],
      in_progress: ["open", "in_progress", "done", "cancelled"],
      done: [],
      cancelled: [],
    };
    for (const from of STATUSES) {
      for (const to of STATUSES) {
        const step = `${from} -> ${to}`;
        const task = await taskIn(t.ownerClient, property.id, from);
        const before = await readTask(t.ownerClient, task.id);
        const response = await t.ownerClient.patch(`/tasks/${task.id}/status`, { status: to });
        if (allowed[from].includes(to)) {
          const { etag } = await expectMinimal("PATCH", TASK_STATUS, response, 204);
          const after = await readTask(t.ownerClient, task.id);
          assert.equal(after.etag, etag, `${step}: the ETag is the new representation's`);
          const stamped = after.body.updatedAt;
          assert.deepEqual(after.body, {
            ...before.body,
            status: to,
            startedAt: to === "in_progress" ? before.body.startedAt ?? stamped : before.body.startedAt,
            completedAt: to === "done" ? stamped : null,
            cancelledAt: to === "cancelled" ? stamped : null,
            updatedAt: stamped,
          }, step);
          assert.ok(Date.parse(stamped) >= Date.parse(before.body.updatedAt), `${step}: updatedAt moves forward`);
        } else {
          const problem = await expectProblem("PATCH", TASK_STATUS, response, 409, "lifecycle-transition-refused");
          // The detail names the status the task is in (and it is final).
          assert.match(problem.detail, new RegExp(`\\b${from}\\b`), `${step}: ${problem.detail}`);
          const after = await readTask(t.ownerClient, task.id);
          assert.deepEqual(after.body, before.body, `${step}: nothing changed`);
          assert.equal(after.etag, before.etag);
        }
      }
    }
  }));

Deno.test("PATCH /v1/tasks/{id}/status: a task back to open keeps when it was first started; stamps across a full cycle", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("task-cycle");
    const property = await createProperty(t.ownerClient);
    const task = await createTask(t.ownerClient, property.id);
    assert.equal(task.startedAt, null);
    const started = await moveTask(t.ownerClient, task.id, "in_progress");
    assert.deepEqual([started.status, started.startedAt], ["in_progress", started.updatedAt]);
    const paused = await moveTask(t.ownerClient, task.id, "open");
    assert.deepEqual([paused.status, paused.startedAt, paused.completedAt], ["open", started.startedAt, null]);
    const resumed = await moveTask(t.ownerClient, task.id, "in_progress");
    assert.equal(resumed.startedAt, started.startedAt, "the first start is kept");
    const done = await moveTask(t.ownerClient, task.id, "done");
    assert.deepEqual(
      [done.status, done.startedAt, done.completedAt, done.cancelledAt],
      ["done", started.startedAt, done.updatedAt, null],
    );

    const dropped = await moveTask(t.ownerClient, (await createTask(t.ownerClient, property.id, { status: "in_progress" })).id, "cancelled");
    assert.deepEqual(
      [dropped.status, dropped.startedAt, dropped.completedAt, dropped.cancelledAt],
      ["cancelled", dropped.createdAt, null, dropped.updatedAt],
    );
  }));

Deno.test("PATCH /v1/tasks/{id}/status: 200 with the task under Prefer; If-Match guards the step; 400 for a bad body", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("task-status");
    const property = await createProperty(t.ownerClient);
    const task = await createTask(t.ownerClient, property.id);
    const path = `/tasks/${task.id}/status`;
    const { etag: etag0 } = await readTask(t.ownerClient, task.id);

    const bad: [unknown, string][] = [
      [{}, "status"],
      [{ status: "closed" }, "status"],
      [{ status: null }, "status"],
      [{ status: "DONE" }, "status"],
      [{ status: "done", note: "all good" }, "note"],
      [{ status: "done", completedAt: "2027-03-10T10:00:00Z" }, "completedAt"],
      [{ title: "x" }, "status"],
      [["done"], "(body)"],
      ["done", "(body)"],
    ];
    for (const [body, field] of bad) {
      await expectInvalid("PATCH", TASK_STATUS, await t.ownerClient.patch(path, body), field, JSON.stringify(body));
    }
    await expectInvalid("PATCH", TASK_STATUS, await t.ownerClient.patch(path), "(body)", "no body");
    assert.deepEqual(await readTask(t.ownerClient, task.id), { body: task, etag: etag0 }, "nothing changed");

    const moved = await t.ownerClient.patch(path, { status: "in_progress" }, { ...representation, "if-match": etag0 });
    const started = await expectStatus<Task>("PATCH", TASK_STATUS, moved, 200);
    assert.equal(moved.headers.get("preference-applied"), "return=representation");
    assert.deepEqual(started, { ...task, status: "in_progress", startedAt: started.updatedAt, updatedAt: started.updatedAt });
    const etag1 = moved.headers.get("etag")!;
    assert.notEqual(etag1, etag0);
    assert.deepEqual(await readTask(t.ownerClient, task.id), { body: started, etag: etag1 });

    const stale = await t.ownerClient.patch(path, { status: "done" }, { "if-match": etag0 });
    await expectProblem("PATCH", TASK_STATUS, stale, 412, "stale-etag");
    assert.equal(stale.headers.get("etag"), etag1, "a 412 names the current ETag");
    assert.deepEqual(await readTask(t.ownerClient, task.id), { body: started, etag: etag1 }, "nothing changed");

    const { etag: etag2 } = await expectMinimal(
      "PATCH", TASK_STATUS, await t.ownerClient.patch(path, { status: "done" }, { "if-match": etag1 }), 204,
    );
    const finished = await readTask(t.ownerClient, task.id);
    assert.equal(finished.body.status, "done");
    assert.equal(finished.etag, etag2);

    // A stale tag is a 412 even on a final task: the precondition is checked first.
    const late = await t.ownerClient.patch(path, { status: "open" }, { "if-match": etag1 });
    await expectProblem("PATCH", TASK_STATUS, late, 412, "stale-etag");
    const current = await t.ownerClient.patch(path, { status: "open" }, { "if-match": etag2 });
    assert.match((await expectProblem("PATCH", TASK_STATUS, current, 409, "lifecycle-transition-refused")).detail, /\bdone\b/);
    assert.deepEqual(await readTask(t.ownerClient, task.id), finished, "nothing changed");
  }));

Deno.test("PATCH /v1/tasks/{id}/status: 404 for unknown, malformed and other tenants' ids", () =>
  withFixture(async ({ tenant }) => {
    const a = await tenant("task-status404-a");
    const b = await tenant("task-status404-b");
    const task = await createTask(a.ownerClient, (await createProperty(a.ownerClient)).id);
    for (const id of [UNKNOWN_ID, MALFORMED_ID]) {
      await expectProblem("PATCH", TASK_STATUS, await a.ownerClient.patch(`/tasks/${id}/status`, { status: "done" }), 404, "not-found");
    }
    const withTag = await a.ownerClient.patch(`/tasks/${UNKNOWN_ID}/status`, { status: "done" }, { "if-match": '"x"' });
    await expectProblem("PATCH", TASK_STATUS, withTag, 404, "not-found");
    await expectProblem("PATCH", TASK_STATUS, await b.ownerClient.patch(`/tasks/${task.id}/status`, { status: "done" }), 404, "not-found");
    assert.deepEqual((await readTask(a.ownerClient, task.id)).body, task, "nothing changed");
  }));

// ---------------------------------------------------------------- PATCH /v1/tasks/{id}

Deno.test("PATCH /v1/tasks/{id}: partial, 204 with an ETag or 200 with the task; If-Match guards the write", () =>
  withFixture(async ({ tenant, memberOf }) => {
    const t = await tenant("task-patch");
    const staff = await memberOf(t, "staff");
    const stay = await createStay(t.ownerClient);
    const task = await createTask(t.ownerClient, stay.property.id, { description: "Drips", dueAt: "2027-03-10T10:00:00Z" });
    const path = `/tasks/${task.id}`;
    const { etag: etag0 } = await readTask(t.ownerClient, task.id);

    const { etag: etag1 } = await expectMinimal(
      "PATCH", TASK, await t.ownerClient.patch(path, { title: "Fix the kitchen tap" }, { "if-match": etag0 }), 204,
    );
    const first = await readTask(t.ownerClient, task.id);
    assert.deepEqual(first.body, { ...task, title: "Fix the kitchen tap", updatedAt: first.body.updatedAt }, "only the title changed");
    assert.equal(first.etag, etag1);
    assert.notEqual(etag1, etag0);

    const stale = await t.ownerClient.patch(path, { priority: "urgent" }, { "if-match": etag0 });
    await expectProblem("PATCH", TASK, stale, 412, "stale-etag");
    assert.equal(stale.headers.get("etag"), etag1, "a 412 names the current ETag");
    const weak = await t.ownerClient.patch(path, { priority: "urgent" }, { "if-match": `W/${etag1}` });
    await expectProblem("PATCH", TASK, weak, 412, "stale-etag");
    assert.deepEqual(await readTask(t.ownerClient, task.id), first, "nothing changed");

    const changes = {
      unitId: stay.unit.id,
      reservationId: stay.reservation.id,
      type: "inspection",
      description: null,
      assigneeId: staff.id,
      dueAt: "2027-03-11T09:15:00-02:00",
      priority: "urgent",
    };
    const full = await t.ownerClient.patch(path, changes, { ...representation, "if-match": etag1 });
    const updated = await expectStatus<Task>("PATCH", TASK, full, 200);
    assert.equal(full.headers.get("preference-applied"), "return=representation");
    assert.deepEqual(updated, {
      ...first.body,
      ...changes,
      dueAt: "2027-03-11T11:15:00+00:00",
      updatedAt: updated.updatedAt,
    });
    assert.deepEqual(await readTask(t.ownerClient, task.id), { body: updated, etag: full.headers.get("etag")! });

    const cleared = await t.ownerClient.patch(path, { unitId: null, reservationId: null, assigneeId: null, dueAt: null }, {
      ...representation,
      "if-match": "*",
    });
    const unset = await expectStatus<Task>("PATCH", TASK, cleared, 200);
    assert.deepEqual(unset, {
      ...updated,
      unitId: null,
      reservationId: null,
      assigneeId: null,
      dueAt: null,
      updatedAt: unset.updatedAt,
    });
  }));

Deno.test("PATCH /v1/tasks/{id}: 400 for an empty, unknown or invalid body, and for status (it has its own route)", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("task-patch400");
    const property = await createProperty(t.ownerClient);
    const task = await createTask(t.ownerClient, property.id);
    const path = `/tasks/${task.id}`;
    const before = await readTask(t.ownerClient, task.id);
    const cases: [unknown, string][] = [
      [{}, "(body)"],
      [{ status: "in_progress" }, "status"],
      [{ status: "done", title: "Done" }, "status"],
      [{ propertyId: property.id }, "propertyId"],
      [{ startedAt: "2027-03-10T10:00:00Z" }, "startedAt"],
      [{ colour: "red" }, "colour"],
      [{ title: "" }, "title"],
      [{ title: null }, "title"],
      [{ type: "laundry" }, "type"],
      [{ priority: "critical" }, "priority"],
      [{ priority: null }, "priority"],
      [{ dueAt: "next week" }, "dueAt"],
      [{ assigneeId: "someone" }, "assigneeId"],
      [{ description: "x".repeat(4001) }, "description"],
    ];
    for (const [body, where] of cases) {
      await expectInvalid("PATCH", TASK, await t.ownerClient.patch(path, body), where, JSON.stringify(body));
    }
    await expectProblem("PATCH", TASK, await t.ownerClient.patch(path), 400, "validation");
    assert.deepEqual(await readTask(t.ownerClient, task.id), before, "nothing changed");
  }));

Deno.test("PATCH /v1/tasks/{id}: 422 for a unit or reservation of another property and for an assignee who is not a member", () =>
  withFixture(async ({ user, tenant, memberOf }) => {
    const t = await tenant("task-patch422");
    const other = await tenant("task-patch422-other");
    const otherStaff = await memberOf(other, "staff", "other-staff");
    const stranger = await user("stranger");
    const property = await createProperty(t.ownerClient);
    const unit = await createUnit(t.ownerClient, property.id);
    const elsewhere = await createStay(t.ownerClient);
    const task = await createTask(t.ownerClient, property.id, { unitId: unit.id });
    const before = await readTask(t.ownerClient, task.id);
    const cases = [
      { unitId: elsewhere.unit.id },
      { reservationId: elsewhere.reservation.id },
      { assigneeId: stranger.id },
      { assigneeId: otherStaff.id },
      { assigneeId: other.owner.id },
    ];
    for (const body of cases) {
      const problem = await expectProblem("PATCH", TASK, await t.ownerClient.patch(`/tasks/${task.id}`, body), 422, "unknown-reference");
      assert.match(problem.detail, /referenced record does not exist/, JSON.stringify(body));
    }
    assert.deepEqual(await readTask(t.ownerClient, task.id), before, "nothing changed");
  }));

Deno.test("PATCH /v1/tasks/{id}: a done or cancelled task no longer changes (409, naming its status)", () =>
  withFixture(async ({ tenant, memberOf }) => {
    const t = await tenant("task-patch409");
    const staff = await memberOf(t, "staff");
    const property = await createProperty(t.ownerClient);
    for (const status of ["done", "cancelled"] as const) {
      const task = await taskIn(t.ownerClient, property.id, status);
      const before = await readTask(t.ownerClient, task.id);
      for (const body of [{ title: "Renamed" }, { assigneeId: staff.id }, { priority: task.priority }, { dueAt: null }]) {
        const response = await t.ownerClient.patch(`/tasks/${task.id}`, body);
        const problem = await expectProblem("PATCH", TASK, response, 409, "lifecycle-transition-refused");
        assert.match(problem.detail, new RegExp(`\\b${status}\\b`), problem.detail);
      }
      const tagged = await t.ownerClient.patch(`/tasks/${task.id}`, { title: "Renamed" }, { "if-match": before.etag });
      await expectProblem("PATCH", TASK, tagged, 409, "lifecycle-transition-refused");
      assert.deepEqual(await readTask(t.ownerClient, task.id), before, `${status}: nothing changed`);
    }
  }));

Deno.test("PATCH /v1/tasks/{id}: 404 for unknown, malformed and other tenants' ids", () =>
  withFixture(async ({ tenant }) => {
    const a = await tenant("task-patch404-a");
    const b = await tenant("task-patch404-b");
    const task = await createTask(a.ownerClient, (await createProperty(a.ownerClient)).id);
    await expectProblem("PATCH", TASK, await a.ownerClient.patch(`/tasks/${UNKNOWN_ID}`, { title: "x" }), 404, "not-found");
    await expectProblem("PATCH", TASK, await a.ownerClient.patch(`/tasks/${UNKNOWN_ID}`, { title: "x" }, { "if-match": '"x"' }), 404);
    await expectProblem("PATCH", TASK, await a.ownerClient.patch(`/tasks/${MALFORMED_ID}`, { title: "x" }), 404, "not-found");
    await expectProblem("PATCH", TASK, await b.ownerClient.patch(`/tasks/${task.id}`, { title: "x" }), 404, "not-found");
    assert.deepEqual((await readTask(a.ownerClient, task.id)).body, task, "nothing changed");
  }));

// ---------------------------------------------------------------- assignees

Deno.test("tasks: reassigning to another member works; a member leaving the tenant unassigns their open and finished tasks", () =>
  withFixture(async ({ tenant, memberOf }) => {
    const t = await tenant("task-leave");
    const first = await memberOf(t, "staff", "first");
    const second = await memberOf(t, "admin", "second");
    const property = await createProperty(t.ownerClient);
    const open = await createTask(t.ownerClient, property.id, { assigneeId: first.id });
    const reassigned = await t.ownerClient.patch(`/tasks/${open.id}`, { assigneeId: second.id }, representation);
    assert.equal((await expectStatus<Task>("PATCH", TASK, reassigned, 200)).assigneeId, second.id);
    await expectMinimal("PATCH", TASK, await t.ownerClient.patch(`/tasks/${open.id}`, { assigneeId: first.id }), 204);

    const finished = await createTask(t.ownerClient, property.id, { assigneeId: first.id, status: "in_progress" });
    await moveTask(t.ownerClient, finished.id, "done");
    const kept = await createTask(t.ownerClient, property.id, { assigneeId: second.id });

    const leave = await t.ownerClient.delete(`/tenants/${t.tenantId}/members/${first.id}`);
    await expectStatus("DELETE", "/v1/tenants/{tenantId}/members/{userId}", leave, 204);
    const after = await listTasks(t.ownerClient);
    const assignees = Object.fromEntries(after.data.map((task) => [task.id, [task.assigneeId, task.status]]));
    assert.deepEqual(assignees, {
      [open.id]: [null, "open"],
      [finished.id]: [null, "done"],
      [kept.id]: [second.id, "open"],
    });
  }));

Deno.test("tasks: deleting a reservation (a mistake) unlinks its open and finished tasks, which stay as they were", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("task-unlink");
    const stay = await createStay(t.ownerClient);
    const link = { reservationId: stay.reservation.id, unitId: stay.unit.id };
    const open = await createTask(t.ownerClient, stay.property.id, link);
    const done = await taskIn(t.ownerClient, stay.property.id, "in_progress");
    await expectMinimal("PATCH", TASK, await t.ownerClient.patch(`/tasks/${done.id}`, link), 204);
    const finished = await moveTask(t.ownerClient, done.id, "done");

    const removed = await t.ownerClient.delete(`/reservations/${stay.reservation.id}`);
    await expectStatus("DELETE", "/v1/reservations/{id}", removed, 204);
    const after = await listTasks(t.ownerClient);
    const summary = Object.fromEntries(after.data.map((task) => [task.id, [task.reservationId, task.unitId, task.status, task.completedAt]]));
    assert.deepEqual(summary, {
      [open.id]: [null, stay.unit.id, "open", null],
      [finished.id]: [null, stay.unit.id, "done", finished.completedAt],
    });
  }));

// ---------------------------------------------------------------- DELETE /v1/tasks/{id}

Deno.test("DELETE /v1/tasks/{id}: 204, then 404; staff are refused and nothing changes; unknown and malformed ids are 404", () =>
  withFixture(async ({ tenant, memberOf }) => {
    const t = await tenant("task-delete");
    const b = await tenant("task-delete-b");
    const staff = await memberOf(t, "staff");
    const property = await createProperty(t.ownerClient);
    const task = await createTask(t.ownerClient, property.id);
    const before = await readTask(t.ownerClient, task.id);

    const staffApi = client(staff, t.tenantId);
    const refused = await staffApi.delete(`/tasks/${task.id}`);
    assert.match((await expectProblem("DELETE", TASK, refused, 403, "forbidden")).detail, /owners and admins/);
    await expectProblem("DELETE", TASK, await staffApi.delete(`/tasks/${UNKNOWN_ID}`), 403, "forbidden");
    await expectProblem("DELETE", TASK, await b.ownerClient.delete(`/tasks/${task.id}`), 404, "not-found");
    assert.deepEqual(await readTask(t.ownerClient, task.id), before, "nothing changed");

    await expectStatus("DELETE", TASK, await t.ownerClient.delete(`/tasks/${task.id}`), 204);
    await expectProblem("GET", TASK, await t.ownerClient.get(`/tasks/${task.id}`), 404, "not-found");
    await expectProblem("DELETE", TASK, await t.ownerClient.delete(`/tasks/${task.id}`), 404, "not-found");
    await expectProblem("DELETE", TASK, await t.ownerClient.delete(`/tasks/${UNKNOWN_ID}`), 404, "not-found");
    await expectProblem("DELETE", TASK, await t.ownerClient.delete(`/tasks/${MALFORMED_ID}`), 404, "not-found");
    assert.equal((await listTasks(t.ownerClient)).pagination.total, 0);

    // Finished tasks are deleted the same way.
    const done = await taskIn(t.ownerClient, property.id, "done");
    await expectStatus("DELETE", TASK, await t.ownerClient.delete(`/tasks/${done.id}`), 204);
    await expectProblem("GET", TASK, await t.ownerClient.get(`/tasks/${done.id}`), 404, "not-found");
  }));

// ---------------------------------------------------------------- role matrix

Deno.test("role matrix: tasks — staff create, edit, move and read tasks but may not delete; owner and admin do all", () =>
  withFixture(async ({ tenant, memberOf }) => {
    const t = await tenant("task-roles");
    const admin = await memberOf(t, "admin");
    const staff = await memberOf(t, "staff");
    const property = await createProperty(t.ownerClient);

    for (const member of [t.owner, admin, staff]) {
      const api = client(member, t.tenantId);
      const created = await createTask(api, property.id, { assigneeId: member.id });
      const edited = await api.patch(`/tasks/${created.id}`, { priority: "high" }, representation);
      assert.equal((await expectStatus<Task>("PATCH", TASK, edited, 200)).priority, "high");
      await expectMinimal("PATCH", TASK_STATUS, await api.patch(`/tasks/${created.id}/status`, { status: "in_progress" }), 204);
      assert.equal((await moveTask(api, created.id, "done")).status, "done");
      const read = await readTask(api, created.id);
      assert.deepEqual([read.body.status, read.body.priority, read.body.assigneeId], ["done", "high", member.id]);
      assert.ok(ids((await listTasks(api)).data).includes(created.id));
      if (member === staff) {
        await expectProblem("DELETE", TASK, await api.delete(`/tasks/${created.id}`), 403, "forbidden");
        assert.deepEqual(await readTask(api, created.id), read, "nothing changed");
      } else {
        await expectStatus("DELETE", TASK, await api.delete(`/tasks/${created.id}`), 204);
        await expectProblem("GET", TASK, await api.get(`/tasks/${created.id}`), 404, "not-found");
      }
    }
    const left = await listTasks(t.ownerClient);
    assert.equal(left.pagination.total, 1, "only staff's task is left");
    assert.equal(left.data[0]!.assigneeId, staff.id);
  }));

// ---------------------------------------------------------------- GET /v1/tasks

Deno.test("GET /v1/tasks: soonest due first, ties by id, undated last; paged with the total; filtered", () =>
  withFixture(async ({ tenant, memberOf }) => {
    const t = await tenant("task-list");
    const other = await tenant("task-list-other");
    const staff = await memberOf(t, "staff");
    const api = client(staff, t.tenantId);
    const p1 = await createProperty(t.ownerClient);
    const p2 = await createProperty(t.ownerClient);
    const u1 = await createUnit(t.ownerClient, p1.id);
    const u2 = await createUnit(t.ownerClient, p1.id);
    const u3 = await createUnit(t.ownerClient, p2.id);

    const t1 = await createTask(api, p1.id, { unitId: u1.id, dueAt: "2027-03-10T10:00:00Z", assigneeId: staff.id });
    const t2 = await createTask(api, p1.id, { unitId: u2.id, dueAt: "2027-03-10T11:00:00+01:00", status: "in_progress" });
    const t3 = await createTask(api, p2.id, { unitId: u3.id, dueAt: "2027-03-09T08:00:00Z" });
    const t4 = await createTask(api, p1.id);
    const t5 = await moveTask(api, (await createTask(api, p1.id, { unitId: u1.id })).id, "done");
    const t6 = await moveTask(api, (await createTask(api, p2.id, { dueAt: "2027-03-11T00:00:00Z", assigneeId: staff.id })).id, "cancelled");
    const otherProperty = await createProperty(other.ownerClient);
    await createTask(other.ownerClient, otherProperty.id, { dueAt: "2027-03-09T09:00:00Z" });

    const tied = [t1, t2].sort(byId);
    const undated = [t4, t5].sort(byId);
    const ordered = [t3, ...tied, t6, ...undated];

    const all = await expectPaging((query) => listTasks(api, query), ids(ordered), [
      "?limit=2&offset=1",
      "?limit=4&offset=4",
      "?offset=10",
      "?limit=100",
    ]);
    assert.deepEqual(all.data, ordered, "the tenant's tasks, in order, as GET /tasks/{id} reads them");

    const expectations: [string, Task[]][] = [
      ["status=open", [t3, t1, t4]],
      ["status=in_progress", [t2]],
      ["status=done,cancelled", [t6, t5]],
      ["status=in_progress,open", [t3, ...tied, t4]],
      ["status=open, done", [t3, t1, ...undated]],
      [`propertyId=${p2.id}`, [t3, t6]],
      [`unitId=${u1.id}`, [t1, t5]],
      [`unitId=${u3.id}`, [t3]],
      [`assigneeId=${staff.id}`, [t1, t6]],
      [`assigneeId=${t.owner.id}`, []],
      [`propertyId=${p1.id}&status=open`, [t1, t4]],
      [`propertyId=${otherProperty.id}`, []],
      [`propertyId=${UNKNOWN_ID}`, []],
      // dueAfter is inclusive, dueBefore exclusive; instants compare whatever their offset.
      [`dueAfter=${at("2027-03-10T10:00:00Z")}`, [...tied, t6]],
      [`dueAfter=${at("2027-03-10T11:00:00+01:00")}`, [...tied, t6]],
      [`dueAfter=${at("2027-03-10T10:00:00.001Z")}`, [t6]],
      [`dueBefore=${at("2027-03-10T10:00:00Z")}`, [t3]],
      [`dueBefore=${at("2027-03-10T09:00:00-01:00")}`, [t3]],
      [`dueBefore=${at("2027-03-10T10:00:00.001Z")}`, [t3, ...tied]],
      [`dueAfter=${at("2027-03-09T08:00:00Z")}&dueBefore=${at("2027-03-11T00:00:00Z")}`, [t3, ...tied]],
      [`dueAfter=${at("2027-03-11T00:00:00Z")}&dueBefore=${at("2027-03-09T00:00:00Z")}`, []],
      [`dueAfter=${at("2027-03-09T00:00:00Z")}&status=open&limit=1`, [t3]],
    ];
    for (const [query, expected] of expectations) {
      const result = await listTasks(api, `?${query}`);
      const limit = query.includes("limit=1") ? 1 : 20;
      const total = query.includes("limit=1") ? 2 : expected.length;
      assert.deepEqual(ids(result.data), ids(expected), query);
      assert.deepEqual(result.pagination, { limit, offset: 0, total, hasMore: limit < total }, query);
    }
  }));

Deno.test("GET /v1/tasks: 400 for a bad query", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("task-list400");
    const cases: [string, string][] = [
      // A list's error names the bad item.
      ["status=closed", "status.0"],
      ["status=", "status.0"],
      ["status=open,closed", "status.1"],
      ["status=open&status=done", "status"],
      ["propertyId=p-1", "propertyId"],
      ["unitId=1", "unitId"],
      ["assigneeId=me", "assigneeId"],
      ["dueBefore=2027-03-10", "dueBefore"],
      ["dueBefore=2027-03-10T10:00:00", "dueBefore"],
      ["dueAfter=yesterday", "dueAfter"],
      ["limit=0", "limit"],
      ["limit=101", "limit"],
      ["limit=abc", "limit"],
      ["offset=-1", "offset"],
      // An unknown parameter is named by its key.
      ["sort=dueAt", "sort"],
      ["reservationId=" + UNKNOWN_ID, "reservationId"],
    ];
    for (const [query, field] of cases) {
      await expectInvalid("GET", TASKS, await t.ownerClient.get(`/tasks?${query}`), field, query);
    }
  }));

// ---------------------------------------------------------------- check-out's cleaning task

Deno.test("check-out leaves an open cleaning task for the unit and the reservation, due at the property's check-in time", () =>
  withFixture(async ({ tenant, memberOf }) => {
    const t = await tenant("task-checkout");
    const staff = await memberOf(t, "staff");
    const api = client(staff, t.tenantId);
    const stay = await createStay(t.ownerClient, { status: "confirmed" });
    const id = stay.reservation.id;

    await expectMinimal("POST", "/v1/reservations/{id}/check-in", await api.post(`/reservations/${id}/check-in`), 204);
    assert.equal((await listTasks(api)).pagination.total, 0, "checking in makes no task");
    const out = await api.post(`/reservations/${id}/check-out`, undefined, representation);
    const checkedOut = await expectStatus<Reservation>("POST", "/v1/reservations/{id}/check-out", out, 200);
    assert.equal(checkedOut.status, "checked_out");

    const list = await listTasks(api, `?status=open&propertyId=${stay.property.id}`);
    assert.equal(list.pagination.total, 1);
    const cleaning = list.data[0]!;
    assert.deepEqual(cleaning, {
      id: cleaning.id,
      propertyId: stay.property.id,
      unitId: stay.unit.id,
      reservationId: id,
      type: "cleaning",
      title: `Clean ${stay.unit.name} after ${stay.reservation.confirmationCode}`,
      description: null,
      assigneeId: null,
      // Departure 2027-03-13 at 15:00 in Lisbon, which is UTC+0 in March before summer time.
      dueAt: "2027-03-13T15:00:00+00:00",
      priority: "normal",
      status: "open",
      startedAt: null,
      completedAt: null,
      cancelledAt: null,
      createdAt: cleaning.createdAt,
      updatedAt: cleaning.createdAt,
    });
    assert.deepEqual(ids((await listTasks(api, `?unitId=${stay.unit.id}`)).data), [cleaning.id]);
    assert.deepEqual((await readTask(api, cleaning.id)).body, cleaning);

    // Staff work it like any other task.
    assert.equal((await moveTask(api, cleaning.id, "in_progress")).status, "in_progress");
    assert.equal((await moveTask(api, cleaning.id, "done")).status, "done");
  }));
