// The Prefer header as RFC 7240 writes it: comma-separated preferences, each a name and an
// optional value with parameters after semicolons; the first of a name counts.
import assert from "node:assert/strict";
import { countPreference, preferences } from "../../src/http/prefer.ts";
import { wantsRepresentation } from "../../src/http/respond.ts";

function sent(...prefer: string[]): Request {
  const headers = new Headers();
  for (const value of prefer) headers.append("prefer", value);
  return new Request("http://function/api/v1/things", { headers });
}

Deno.test("Prefer: names without regard to case, values as tokens or quoted strings, parameters set aside", () => {
  assert.deepEqual(Object.fromEntries(preferences(sent())), {});
  assert.deepEqual(
    Object.fromEntries(preferences(sent('Return=representation; charset="a,b;c", COUNT = "none" , respond-async, wait=10'))),
    { return: "representation", count: "none", "respond-async": "", wait: "10" },
  );
  assert.deepEqual(Object.fromEntries(preferences(sent('count="pla\\"nned", return=minimal'))), { count: 'pla"nned', return: "minimal" });
  assert.deepEqual(Object.fromEntries(preferences(sent(",, ;x, =y"))), {}, "empty and nameless preferences are nothing");
});

Deno.test("Prefer: a preference given twice counts the first time, across several Prefer fields too", () => {
  assert.equal(countPreference(sent("count=none, count=exact")), "none");
  assert.equal(countPreference(sent("count=planned", "count=none")), "planned");
  assert.equal(countPreference(sent("count=unknown, count=none")), null, "the first is the one considered, even unknown");
  assert.equal(wantsRepresentation(sent("return=minimal, return=representation")), false);
  assert.equal(wantsRepresentation(sent("handling=lenient", "return=representation")), true);
});

Deno.test("Prefer: count takes exact, planned, estimated and none; anything else is no preference", () => {
  for (const mode of ["exact", "planned", "estimated", "none"]) {
    assert.equal(countPreference(sent(`return=representation, count=${mode}`)), mode);
    assert.equal(countPreference(sent(`count=${mode.toUpperCase()}`)), mode);
  }
  for (const other of ["count", "count=", "count=all", "counts=none", "respond-async"]) {
    assert.equal(countPreference(sent(other)), null, other);
  }
  assert.equal(countPreference(sent("count=exact; x=y")), "exact", "a parameter leaves the value as it is");
});

Deno.test("Prefer: return=representation is a preference of its own, not a parameter of another", () => {
  assert.equal(wantsRepresentation(sent("return=representation")), true);
  assert.equal(wantsRepresentation(sent("count=none, RETURN=Representation")), true);
  assert.equal(wantsRepresentation(sent("respond-async; return=representation")), false);
  assert.equal(wantsRepresentation(sent("return=minimal")), false);
  assert.equal(wantsRepresentation(sent()), false);
});
