// The worker function's front door on its own: only POST with the service credential runs
// the worker, and its answer is the run's summary. worker.test.ts knocks on the deployed
// function through the gateway.
import assert from "node:assert/strict";
import { createWorkerHandler } from "../../src/notifications/worker-handler.ts";
import type { RunSummary } from "../../src/notifications/worker.ts";

const summary: RunSummary = { read: 3, sent: 2, failed: 0, skipped: 1, retried: 0, dropped: 0 };

function handler() {
  let runs = 0;
  const handle = createWorkerHandler({
    serviceKey: "service-key",
    run: () => {
      runs += 1;
      return Promise.resolve(summary);
    },
  });
  return { handle, runs: () => runs };
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
