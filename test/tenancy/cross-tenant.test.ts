// Every route that takes an id, driven by the served OpenAPI document: a member of
// tenant B naming tenant A's ids gets the 404 an unknown id gets, and so does a
// malformed id; A's data is byte-identical afterwards. The operations and the fixture
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
    let checked = 0;
    for (const probe of w.probes) {
      const { method: upper, template } = probe;
      if (!template.includes("{") || probe.access === "public") continue;
      const body = bodyOf(w.bodies, probe);
      const path = fill(template, w.ids);
      const probed = await call(upper, path, { token: b.owner.token, tenantId: b.tenantId, body });
      const problem = await assertMatchesContract(upper, template, probed);
      assert.equal(probed.status, 404, `${upper} ${template} as tenant B: ${JSON.stringify(problem)}`);

      // The same route with ids nobody has answers with the same body.
      const unknown = await call(upper, path.replace(UUID, () => crypto.randomUUID()), {
        token: b.owner.token, tenantId: b.tenantId, body,
      });
      assert.equal(unknown.status, 404);
      assert.deepEqual(await unknown.json(), problem, `${upper} ${template}: another tenant's id and an unknown id differ`);

      // The last id malformed answers the same again.
      const ids = path.match(UUID) ?? [];
      const last = ids[ids.length - 1]!;
      const at = path.lastIndexOf(last);
      const malformedPath = `${path.slice(0, at)}${MALFORMED_ID}${path.slice(at + last.length)}`;
      const malformed = await call(upper, malformedPath, { token: b.owner.token, tenantId: b.tenantId, body });
      assert.equal(malformed.status, 404, `${upper} ${malformedPath}`);
      assert.deepEqual(await malformed.json(), problem, `${upper} ${template}: a malformed id and an unknown id differ`);
      checked++;
    }
    assert.equal(await tenantSnapshot(sql, w.a.tenantId), before, "tenant A changed");
    assert.ok(checked >= 40, `only ${checked} id routes were checked`);
  }));
