// What absorbs a failure no one awaits (src/db/connection-loss.ts): a database's
// unavailability, and postgres.js's deferred write after a close, only.
// test/db/connection-loss.test.ts shows each against the database.
import assert from "node:assert/strict";
import { absorbingOrphanedConnectionErrors, isWriteAfterClose } from "../../src/db/connection-loss.ts";
import type { RenewablePool, Sql } from "../../src/db/pool.ts";

// A pool that counts its renewals.
function countedPool(): RenewablePool & { renewals: number } {
  const pool = { current: {} as Sql, renewals: 0, renew(broken: Sql) {
    if (broken === pool.current) pool.renewals++;
  } };
  return pool;
}

Deno.test("only a database's unavailability is absorbed: any other unhandled rejection still ends the process", () => {
  const target = new EventTarget();
  const warnings: unknown[] = [];
  const stopAbsorbing = absorbingOrphanedConnectionErrors(target, { warn: (_message, fields) => warnings.push(fields) }, countedPool());
  const event = (reason: unknown) => {
    const promise = Promise.reject(reason);
    promise.catch(() => {});
    const rejection = new PromiseRejectionEvent("unhandledrejection", { promise, reason, cancelable: true });
    target.dispatchEvent(rejection);
    return rejection.defaultPrevented;
  };
  assert.equal(event(Object.assign(new Error("write CONNECTION_CLOSED"), { code: "CONNECTION_CLOSED" })), true);
  assert.equal(event(Object.assign(new Error("server conn crashed?"), { code: "08P01" })), true);
  assert.equal(event(new TypeError("a bug")), false);
  assert.equal(event(Object.assign(new Error("duplicate key"), { code: "23505" })), false);
  assert.equal(warnings.length, 2);
  stopAbsorbing();
  assert.equal(event(Object.assign(new Error("write CONNECTION_CLOSED"), { code: "CONNECTION_CLOSED" })), false, "removed");
});

Deno.test("an uncaught error is absorbed only when it is postgres.js's deferred write after the close, and the pool is replaced", () => {
  const target = new EventTarget();
  const pool = countedPool();
  const warnings: string[] = [];
  const stopAbsorbing = absorbingOrphanedConnectionErrors(target, { warn: (message) => warnings.push(message) }, pool);
  const uncaught = (error: unknown) => {
    const event = new ErrorEvent("error", { error, cancelable: true });
    target.dispatchEvent(event);
    return event.defaultPrevented;
  };
  const writeAfterClose = Object.assign(new TypeError("Cannot read properties of null (reading 'write')"), {
    stack: "TypeError: Cannot read properties of null (reading 'write')\n" +
      "    at nextWrite (file:///cache/npm/registry/postgres/3.4.9/src/connection.js:255:22)",
  });
  assert.equal(uncaught(writeAfterClose), true);
  assert.equal(pool.renewals, 1);
  assert.equal(uncaught(new TypeError("Cannot read properties of null (reading 'write')")), false, "thrown elsewhere");
  assert.equal(uncaught(Object.assign(new Error("gone"), { code: "CONNECTION_CLOSED" })), false, "not a deferred write");
  assert.equal(warnings.length, 1);
  assert.equal(pool.renewals, 1);
  stopAbsorbing();
  assert.equal(uncaught(writeAfterClose), false, "removed");
});

Deno.test("only a TypeError thrown from postgres.js's deferred write is taken for a write after the close", () => {
  const thrownAt = (frames: string[]) => Object.assign(new TypeError("Cannot read properties of null (reading 'write')"), {
    stack: ["TypeError: Cannot read properties of null (reading 'write')", ...frames].join("\n"),
  });
  // As Deno and Node report it.
  assert.ok(isWriteAfterClose(thrownAt([
    "    at nextWrite (file:///cache/npm/registry/postgres/3.4.9/src/connection.js:255:22)",
    "    at ext:deno_web/02_timers.js:35:14",
  ])));
  assert.ok(isWriteAfterClose(thrownAt([
    "    at Immediate.nextWrite (file:///app/node_modules/postgres/src/connection.js:255:22)",
    "    at process.processImmediate (node:internal/timers:485:21)",
  ])));
  assert.ok(!isWriteAfterClose(thrownAt(["    at handler (file:///app/src/handlers.ts:10:5)", "    at nextWrite (file:///app/node_modules/postgres/src/connection.js:255:22)"])));
  assert.ok(!isWriteAfterClose(thrownAt(["    at nextWrite (file:///app/src/queue.ts:3:1)"])));
  assert.ok(!isWriteAfterClose(Object.assign(new Error("x"), { stack: "Error: x\n    at nextWrite (file:///app/node_modules/postgres/src/connection.js:1:1)" })));
  assert.ok(!isWriteAfterClose(null));
});
