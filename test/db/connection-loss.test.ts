// Postgres restarted under load, through the gateway: requests in flight answer 503 with
// the problem body (never a 500, never a hang), the function recovers by itself within
// seconds, and no write is lost or doubled. src/db/connection-loss.ts is what makes it so.
import assert from "node:assert/strict";
import { expectProblem, withFixture } from "../support/api.ts";
import { createStay } from "../support/domain.ts";

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

    const unavailable = outcomes.filter((outcome) => outcome.status === 503);
    assert.ok(unavailable.length > 0, "the restart fell on requests in flight");
    for (const outcome of outcomes) {
      assert.ok([200, 204, 503].includes(outcome.status), `${outcome.kind} answered ${outcome.status}`);
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
      if (outcome.status === 204) assert.equal(copies.get(outcome.name), 1, `${outcome.name} created once`);
      else assert.ok((copies.get(outcome.name) ?? 0) <= 1, `${outcome.name} stored at most once`);
    }
    assert.ok([...copies.values()].every((count) => count === 1), "no guest doubled");
  }));
