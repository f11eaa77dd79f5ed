// Postgres restarted under load, through the gateway: requests in flight answer 503 with
// the problem body (never a 500, never a hang), the function recovers by itself within
// seconds, and no write is lost or doubled. src/db/connection-loss.ts is what makes it so.
import assert from "node:assert/strict";
import {
  absorbingOrphanedConnectionErrors,
  endsSession,
  isDatabaseUnavailable,
  poisonsPool,
} from "../../src/db/connection-loss.ts";
import { createPool, fixedPool, renewablePool } from "../../src/db/pool.ts";
import { expectProblem, withFixture } from "../support/api.ts";
import { createStay, readReservation } from "../support/domain.ts";
import { refusingPooler } from "../support/refusing-pooler.ts";
import { adminSql } from "../support/session.ts";
import { stack } from "../support/stack.ts";

// No request may take longer than this, however the restart falls.
const BOUNDED_MS = 20_000;

async function stackDb(action: "stop" | "start") {
  const { success, stderr } = await new Deno.Command("bash", {
    args: [new URL("../../scripts/stack.sh", import.meta.url).pathname, "db", action],
    stdout: "null",
  }).output();
  assert.ok(success, `stack.sh db ${action}: ${new TextDecoder().decode(stderr)}`);
}

type Outcome = { kind: "read" | "write"; name: string; status: number; ms: number; response: Response };

Deno.test("Postgres restarted while requests are in flight: 2xx or 503 with the problem body, bounded, then recovered; every write once or not at all", () =>
  withFixture(async ({ tenant, sql }) => {
    const { ownerClient: api, tenantId } = await tenant("db-restart");
    const stay = await createStay(api);
    const run = crypto.randomUUID().slice(0, 8);
    const outcomes: Outcome[] = [];
    let sequence = 0;
    const send = async (kind: Outcome["kind"]) => {
      const name = `Restart-${run}-${sequence++}`;
      const started = performance.now();
      const response = kind === "read"
        ? await api.get(`/reservations/${stay.reservation.id}`)
        : await api.post("/guests", { firstName: "Rita", lastName: name });
      outcomes.push({ kind, name, status: response.status, ms: performance.now() - started, response });
    };

    // One request surely in flight when Postgres stops: a PATCH waiting on a row lock
    // another session holds. The lock holder's session ends with the restart too.
    const before = await readReservation(api, stay.reservation.id);
    const locker = adminSql();
    let lockHeld!: () => void, releaseLock!: () => void;
    const holding = new Promise<void>((resolve) => lockHeld = resolve);
    const released = new Promise<void>((resolve) => releaseLock = resolve);
    const held = locker.begin(async (tx) => {
      await tx`select id from public.reservations where id = ${stay.reservation.id} for update`;
      lockHeld();
      await released; // after the restart, which has ended this session
    }).catch(() => {});
    await holding;
    const blockedStarted = performance.now();
    const blocked = api.patch(`/reservations/${stay.reservation.id}`, { notes: "never saved" })
      .then((response) => ({ response, ms: performance.now() - blockedStarted }));
    for (let waited = 0;; waited += 50) {
      const [waiting] = await sql<{ count: number }[]>`
        select count(*)::int as count from pg_catalog.pg_stat_activity
        where wait_event_type = 'Lock' and application_name like 'pms-api%'`;
      if ((waiting?.count ?? 0) > 0) break;
      assert.ok(waited < 5_000, "the PATCH never reached the lock");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }

    let restarted = false;
    const restart = (async () => {
      await new Promise((resolve) => setTimeout(resolve, 300));
      await stackDb("stop");
      await new Promise((resolve) => setTimeout(resolve, 1500));
      await stackDb("start");
      restarted = true;
    })();
    const load = (async () => {
      while (!restarted) await Promise.all(Array.from({ length: 8 }, (_, i) => send(i % 2 === 0 ? "read" : "write")));
    })();
    await Promise.all([restart, load]);
    const { response: blockedResponse, ms: blockedMs } = await blocked;
    releaseLock();
    await held;
    await locker.end({ timeout: 0 });

    // Recovery: within a few seconds the API answers again, and then keeps answering.
    const deadline = Date.now() + 10_000;
    for (;;) {
      const response = await api.get(`/reservations/${stay.reservation.id}`);
      if (response.status === 200) break;
      assert.equal(response.status, 503, "while recovering, only 503");
      assert.ok(Date.now() < deadline, "the API did not recover within 10 s of the restart");
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const after = await Promise.all(Array.from({ length: 20 }, () => api.get(`/reservations/${stay.reservation.id}`)));
    assert.deepEqual(after.map((response) => response.status), Array(20).fill(200), "every request after recovery succeeds");

    // The request in flight when Postgres stopped: 503, bounded, and nothing of it saved.
    await expectProblem("PATCH", "/v1/reservations/{id}", blockedResponse, 503, "service-unavailable");
    assert.match(blockedResponse.headers.get("retry-after") ?? "", /^\d+$/);
    assert.ok(blockedMs < BOUNDED_MS, `the PATCH in flight took ${Math.round(blockedMs)} ms`);
    const afterRestart = await readReservation(api, stay.reservation.id);
    assert.equal(afterRestart.body.notes, before.body.notes, "nothing of the PATCH in flight was saved");

    // Through a transaction pooler, a request that arrives while Postgres is down may
    // simply wait for it; one whose transaction was open answers 503.
    const unavailable = outcomes.filter((outcome) => outcome.status === 503);
    for (const outcome of outcomes) {
      assert.ok([200, 201, 503].includes(outcome.status), `${outcome.kind} answered ${outcome.status}`);
      assert.ok(outcome.ms < BOUNDED_MS, `${outcome.kind} took ${Math.round(outcome.ms)} ms`);
    }
    for (const { kind, response } of unavailable) {
      const [method, path] = kind === "read" ? ["GET", "/v1/reservations/{id}"] : ["POST", "/v1/guests"];
      await expectProblem(method, path, response, 503, "service-unavailable");
      assert.match(response.headers.get("retry-after") ?? "", /^\d+$/);
    }

    // Every created guest is stored once; a write that answered 503 is stored once or not at all.
    const stored = await sql<{ last_name: string; count: number }[]>`
      select last_name, count(*)::int as count from public.guests
      where tenant_id = ${tenantId} and last_name like ${`Restart-${run}-%`} group by last_name`;
    const copies = new Map(stored.map((row) => [row.last_name, row.count]));
    for (const outcome of outcomes.filter((outcome) => outcome.kind === "write")) {
      if (outcome.status === 201) assert.equal(copies.get(outcome.name), 1, `${outcome.name} created once`);
      else assert.ok((copies.get(outcome.name) ?? 0) <= 1, `${outcome.name} stored at most once`);
    }
    assert.ok([...copies.values()].every((count) => count === 1), "no guest doubled");
  }));

// Below, a connection lost under the query postgres.js sends by itself, through a pooler
// scripted to refuse it as PgBouncer does while Postgres restarts (test/support/refusing-pooler.ts).
Deno.test("a pooler closing a new connection at postgres.js's own first query: the statement fails as unavailable, and the rejection no one awaited is logged, not fatal", async () => {
  const pooler = refusingPooler();
  const warnings: Record<string, unknown>[] = [];
  const sql = createPool(pooler.url, { applicationName: "pms-test", mode: "transaction" });
  const stopAbsorbing = absorbingOrphanedConnectionErrors(globalThis, {
    warn: (_message, fields = {}) => warnings.push(fields),
  }, fixedPool(sql));
  try {
    const error = await sql`select 1`.then(() => null, (error: unknown) => error);
    assert.ok(isDatabaseUnavailable(error), `the statement failed with ${String(error)}`);
    assert.ok(endsSession(error) && poisonsPool(error), "the session is over and the pool is replaced");
    // The type query's rejection is reported after the statement's.
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.ok(warnings.length >= 1, "the orphaned rejection was absorbed and logged");
    assert.ok(warnings.every((fields) => isDatabaseUnavailable(fields)), JSON.stringify(warnings));
  } finally {
    stopAbsorbing();
    await sql.end({ timeout: 0 });
    await pooler.close();
  }
});


Deno.test("a statement sent on a reserved connection whose session has just ended: the driver's deferred write is absorbed, the statement fails at once as unavailable, and a new pool serves", async () => {
  const admin = adminSql();
  const warnings: string[] = [];
  const pool = renewablePool(() => createPool(stack.dbUrl, { applicationName: "pms-test-write-after-close" }));
  const stopAbsorbing = absorbingOrphanedConnectionErrors(globalThis, { warn: (message) => warnings.push(message) }, pool);
  const first = pool.current;
  try {
    const reserved = await first.reserve();
    const [session] = await reserved<{ pid: number }[]>`select pg_backend_pid() as pid`;
    await admin`select pg_terminate_backend(${session!.pid})`;
    // The driver sees the socket close before the next statement is sent.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const started = performance.now();
    const outcome = await Promise.race([
      reserved`select 1 as one`.then(() => "answered", (error: unknown) => error),
      new Promise((resolve) => setTimeout(() => resolve("still waiting"), 5_000)),
    ]);
    assert.ok(isDatabaseUnavailable(outcome), `the statement failed as unavailable, not: ${String(outcome)}`);
    assert.ok(performance.now() - started < 2_000, "at once, not at a deadline");
    assert.deepEqual(warnings, ["the database driver wrote to a connection that had closed; the pool is replaced"]);
    assert.notEqual(pool.current, first, "the pool was replaced");
    const [answer] = await pool.current<{ two: number }[]>`select 2 as two`;
    assert.equal(answer?.two, 2);
  } finally {
    stopAbsorbing();
    await pool.current.end({ timeout: 0 });
    await first.end({ timeout: 0 });
    await admin.end();
  }
});
