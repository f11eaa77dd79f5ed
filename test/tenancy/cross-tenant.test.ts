// Every route that takes an id, driven by the served OpenAPI document: a member of
// tenant B naming tenant A's ids gets the 404 an unknown id gets, and so does a
// malformed id; so do B's API key and a key of another of A's properties on the
// integration routes. A's data is byte-identical afterwards. The operations and the fixture
// are test/support/sweep.ts's: a new id route it cannot fill fails the test.
import assert from "node:assert/strict";
import { call, MALFORMED_ID, withFixture } from "../support/api.ts";
import { assertMatchesContract } from "../support/openapi.ts";
import { tenantSnapshot } from "../support/snapshot.ts";
import { bodyOf, fill, world } from "../support/sweep.ts";

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

Deno.test("tenant B's member gets 404 for each of tenant A's ids, on every id route, and A is unchanged", () =>
  withFixture(async (fixture) => {
    const { sql } = fixture;
    const w = await world(fixture);
    const b = w.b;
    const before = await tenantSnapshot(sql, w.a.tenantId);
    // Who asks: B's owner in B, or for the integration routes an API key of B's property
    // and one of A's other property.
    const askers = (access: string): Record<string, Omit<Parameters<typeof call>[2], "body">> =>
      access === "integration"
        ? { "B's key": { headers: { "x-api-key": w.keys.b } }, "A's other property's key": { headers: { "x-api-key": w.keys.sibling } } }
        : { "B's owner": { token: b.owner.token, tenantId: b.tenantId } };
    const checked = { tenant: 0, integration: 0 };
    for (const probe of w.probes) {
      const { method: upper, template } = probe;
      if (!template.includes("{") || probe.access === "public") continue;
      const body = bodyOf(w.bodies, probe);
      const path = fill(template, w.ids);
      for (const [who, asker] of Object.entries(askers(probe.access))) {
        const where = `${upper} ${template} as ${who}`;
        const probed = await call(upper, path, { ...asker, body });
        const problem = await assertMatchesContract(upper, template, probed);
        assert.equal(probed.status, 404, `${where}: ${JSON.stringify(problem)}`);

        // The same route with ids nobody has answers with the same body.
        const unknown = await call(upper, path.replace(UUID, () => crypto.randomUUID()), { ...asker, body });
        assert.equal(unknown.status, 404);
        assert.deepEqual(await unknown.json(), problem, `${where}: another tenant's id and an unknown id differ`);

        // The last id malformed answers the same again.
        const ids = path.match(UUID) ?? [];
        const last = ids[ids.length - 1]!;
        const at = path.lastIndexOf(last);
        const malformedPath = `${path.slice(0, at)}${MALFORMED_ID}${path.slice(at + last.length)}`;
        const malformed = await call(upper, malformedPath, { ...asker, body });
        assert.equal(malformed.status, 404, `${where}: ${malformedPath}`);
        assert.deepEqual(await malformed.json(), problem, `${where}: a malformed id and an unknown id differ`);
      }
      checked[probe.access === "integration" ? "integration" : "tenant"]++;
    }
    assert.equal(await tenantSnapshot(sql, w.a.tenantId), before, "tenant A changed");
    assert.ok(checked.tenant >= 40 && checked.integration >= 2, JSON.stringify(checked));
  }));
