// The sweeps of request-context.test.ts go over every operation of the served OpenAPI
// document by its access and tenant scope; this checks, on the document alone, that each
// kind is there, so that no sweep can pass by checking nothing.
import assert from "node:assert/strict";
import { operations, type Probe } from "../support/sweep.ts";

function countBy(probes: Probe[], key: (probe: Probe) => string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const probe of probes) counts[key(probe)] = (counts[key(probe)] ?? 0) + 1;
  return counts;
}

Deno.test("the document's operations: each kind of access and tenant scope is there, so the sweeps below check something", async () => {
  const probes = await operations();
  const byAccess = countBy(probes, (probe) => probe.access);
  const byScope = countBy(probes, (probe) => probe.scope);
  assert.ok(probes.length >= 65, `only ${probes.length} operations`);
  assert.ok((byAccess.public ?? 0) >= 6, JSON.stringify(byAccess));
  assert.ok((byAccess.session ?? 0) >= 4, JSON.stringify(byAccess));
  assert.ok((byAccess.member ?? 0) >= 39, JSON.stringify(byAccess));
  assert.ok((byAccess.manager ?? 0) >= 16, JSON.stringify(byAccess));
  assert.ok((byAccess.integration ?? 0) >= 3, JSON.stringify(byAccess));
  assert.equal(byScope.key, byAccess.integration, "every integration operation takes its tenant from the key");
  assert.ok((byAccess.webhook ?? 0) >= 2, JSON.stringify(byAccess));
  assert.equal(byScope.signature, byAccess.webhook, "every webhook finds its tenant through the signed report");
  assert.ok((byScope.header ?? 0) >= 47, JSON.stringify(byScope));
  assert.ok((byScope.path ?? 0) >= 8, JSON.stringify(byScope));
  // Both roles on both scopes, so neither filter can be empty by mistake.
  const byBoth = countBy(probes, (probe) => `${probe.scope}/${probe.access}`);
  for (const pair of ["header/member", "header/manager", "path/member", "path/manager"]) {
    assert.ok((byBoth[pair] ?? 0) >= 3, `${pair}: ${JSON.stringify(byBoth)}`);
  }
});
