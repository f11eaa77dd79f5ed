// What absorbs a rejection no one awaits (src/db/connection-loss.ts): a database's
// unavailability only. test/db/connection-loss.test.ts shows the rejection it is for.
import assert from "node:assert/strict";
import { absorbingOrphanedConnectionErrors } from "../../src/db/connection-loss.ts";

Deno.test("only a database's unavailability is absorbed: any other unhandled rejection still ends the process", () => {
  const target = new EventTarget();
  const warnings: unknown[] = [];
  const stopAbsorbing = absorbingOrphanedConnectionErrors(target, { warn: (_message, fields) => warnings.push(fields) });
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
