// Unit blocks end to end through the gateway: every route of src/unit-blocks/handlers.ts
// and its documented refusals. What a block does to booking is test/reservations/inventory.test.ts's.
import assert from "node:assert/strict";
import { client, expectMinimal, expectProblem, expectStatus, listPage, withFixture } from "../support/api.ts";
import { createProperty, createUnit, createUnitBlock, type UnitBlock } from "../support/domain.ts";

const UNIT_BLOCKS = "/v1/unit-blocks";
const UNIT_BLOCK = "/v1/unit-blocks/{id}";

Deno.test("a block is made, listed by unit and nights, changed, and deleted by a manager only", () =>
  withFixture(async ({ tenant, memberOf }) => {
    const owned = await tenant("unit-blocks");
    const api = owned.ownerClient;
    const staff = client(await memberOf(owned, "staff"), owned.tenantId);
    const property = await createProperty(api);
    const unit = await createUnit(api, property.id);
    const other = await createUnit(api, property.id);
    const block = await createUnitBlock(staff, unit.id, "2027-04-10", "2027-04-12", { reason: "New carpet" });
    assert.deepEqual([block.unitId, block.propertyId, block.startsOn, block.endsOn, block.reason],
      [unit.id, property.id, "2027-04-10", "2027-04-12", "New carpet"]);
    const later = await createUnitBlock(staff, other.id, "2027-05-01", "2027-05-02");

    const april = await listPage<UnitBlock>(staff, UNIT_BLOCKS, `?propertyId=${property.id}&from=2027-04-11&to=2027-04-30`);
    assert.deepEqual(april.data.map((b) => b.id), [block.id], "a block that covers a night of the range");
    const byUnit = await listPage<UnitBlock>(staff, UNIT_BLOCKS, `?unitId=${other.id}`);
    assert.deepEqual(byUnit.data.map((b) => b.id), [later.id]);

    await expectMinimal("PATCH", UNIT_BLOCK, await staff.patch(`/unit-blocks/${block.id}`, { endsOn: "2027-04-15" }), 204);
    const read = await expectStatus<UnitBlock>("GET", UNIT_BLOCK, await staff.get(`/unit-blocks/${block.id}`), 200);
    assert.equal(read.endsOn, "2027-04-15");

    await expectProblem("DELETE", UNIT_BLOCK, await staff.delete(`/unit-blocks/${block.id}`), 403, "forbidden");
    assert.equal(await expectStatus("DELETE", UNIT_BLOCK, await api.delete(`/unit-blocks/${block.id}`), 204), undefined);
    await expectProblem("GET", UNIT_BLOCK, await api.get(`/unit-blocks/${block.id}`), 404, "not-found");
  }));

Deno.test("block refusals: nights out of order, overlapping blocks, a unit of another tenant", () =>
  withFixture(async ({ tenant }) => {
    const { ownerClient: api } = await tenant("unit-block-refusals");
    const { ownerClient: theirs } = await tenant("unit-block-other");
    const property = await createProperty(api);
    const unit = await createUnit(api, property.id);
    const block = await createUnitBlock(api, unit.id, "2027-04-10", "2027-04-12");

    const inverted = await expectProblem("POST", UNIT_BLOCKS,
      await api.post("/unit-blocks", { unitId: unit.id, startsOn: "2027-04-12", endsOn: "2027-04-12", reason: "x" }), 422, "unprocessable");
    assert.deepEqual(inverted.errors?.map((error) => error.path), ["endsOn"]);
    // One side in the body, the other stored: the database's rule names the field.
    const stored = await expectProblem("PATCH", UNIT_BLOCK, await api.patch(`/unit-blocks/${block.id}`, { startsOn: "2027-04-13" }), 422, "unprocessable");
    assert.deepEqual(stored.errors?.map((error) => error.path), ["endsOn"]);
    await expectProblem("POST", UNIT_BLOCKS,
      await api.post("/unit-blocks", { unitId: unit.id, startsOn: "2027-04-11", endsOn: "2027-04-14", reason: "Paint" }), 409, "unit-already-blocked");

    const foreign = await createUnit(theirs, (await createProperty(theirs)).id);
    const unknown = await expectProblem("POST", UNIT_BLOCKS,
      await api.post("/unit-blocks", { unitId: foreign.id, startsOn: "2027-04-10", endsOn: "2027-04-11", reason: "x" }), 422, "unknown-reference");
    assert.deepEqual(unknown.errors?.map((error) => error.path), ["unitId"]);
  }));
