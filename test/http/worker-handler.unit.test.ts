// The worker function's front door on its own: only POST with the service credential runs
// the worker, and its answer is the run's summary. worker.test.ts knocks on the deployed
// function through the gateway.
import assert from "node:assert/strict";
import { createWorkerHandler } from "../../src/http/worker-handler.ts";
import type { RunSummary } from "../../src/notifications/worker.ts";
import type { RenewablePool, Sql } from "../../src/db/pool.ts";

const summary: RunSummary = { events: 0, read: 3, sent: 2, failed: 0, skipped: 1, retried: 0, dropped: 0, unconfirmed: 0, postponed: 0 };

// Stand-ins for pools: the handler only hands them to `run` and to `renew`.
const firstPool = (() => {}) as unknown as Sql;
const secondPool = (() => {}) as unknown as Sql;

function handler(run: (sql: Sql) => Promise<RunSummary> = () => Promise.resolve(summary)) {
  let runs = 0;
  const ranOn: Sql[] = [];
  const renewed: Sql[] = [];
  let current = firstPool;
  const pool: RenewablePool = {
    get current() {
      return current;
    },
    renew(broken) {
      renewed.push(broken);
      current = secondPool;
    },
  };
  const handle = createWorkerHandler({
    serviceKey: "service-key",
    pool,
    run: (sql) => {
      runs += 1;
      ranOn.push(sql);
      return run(sql);
    },
  });
  return { handle, runs: () => runs, ranOn, renewed };
}

const request = (method: string, authorization?: string) =>
  new Request("http://function/notifications-worker", { method, headers: authorization ? { authorization } : {} });

Deno.test("POST with the service credential runs the worker once and answers its summary", async () => {
  const { handle, runs } = handler();
  const response = await handle(request("POST", "Bearer service-key"));
  assert.equal(response.status, 200);
  assert.equal(response.headers.get("content-type"), "application/json");
  assert.deepEqual(await response.json(), summary);
  assert.equal(runs(), 1);
});

Deno.test("no credential, another one, or a prefix of it is a 401 and runs nothing", async () => {
  const { handle, runs } = handler();
  for (const authorization of [undefined, "Bearer anon-key", "Bearer service-ke", "Bearer service-key2", "service-key"]) {
    const response = await handle(request("POST", authorization));
    assert.equal(response.status, 401, String(authorization));
    assert.equal(response.headers.get("www-authenticate"), 'Bearer realm="pms"');
    assert.equal((await response.json()).type, "urn:pms:problem:unauthorized");
  }
  assert.equal(runs(), 0);
});

Deno.test("any method but POST, even with the credential, is a 405 that allows POST and runs nothing", async () => {
  const { handle, runs } = handler();
  for (const method of ["GET", "PUT", "DELETE"]) {
    const response = await handle(request(method, "Bearer service-key"));
    assert.equal(response.status, 405, method);
    assert.equal(response.headers.get("allow"), "POST");
    await response.body?.cancel();
  }
  assert.equal(runs(), 0);
});

Deno.test("a run the database failed under answers 503 with Retry-After, and the next run gets a new pool", async () => {
  const lost = Object.assign(new Error("write CONNECTION_CLOSED 127.0.0.1:5432"), { code: "CONNECTION_CLOSED" });
  const { handle, ranOn, renewed } = handler((sql) => sql === firstPool ? Promise.reject(lost) : Promise.resolve(summary));
  const failed = await handle(request("POST", "Bearer service-key"));
  assert.equal(failed.status, 503);
  assert.equal(failed.headers.get("retry-after"), "2");
  assert.equal((await failed.json()).type, "urn:pms:problem:service-unavailable");
  assert.deepEqual(renewed, [firstPool]);
  const next = await handle(request("POST", "Bearer service-key"));
  assert.equal(next.status, 200);
  assert.deepEqual(ranOn, [firstPool, secondPool]);
});

Deno.test("any other failure of a run is not taken for the database's: it is thrown, and the pool is kept", async () => {
  const { handle, renewed } = handler(() => Promise.reject(new TypeError("a defect")));
  await assert.rejects(handle(request("POST", "Bearer service-key")), TypeError);
  assert.deepEqual(renewed, []);
});
