// What absorbs a rejection no one awaits (src/db/connection-loss.ts): a database's
// unavailability only. test/db/connection-loss.test.ts shows the rejection it is for.
import assert from "node:assert/strict";
import { absorbingOrphanedConnectionErrors } from "../../src/db/connection-loss.ts";
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
