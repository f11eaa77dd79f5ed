// Room types end to end through the gateway: every route of src/room-types/handlers.ts,
// its documented refusals, who may write, and the type a unit made without one joins.
// Every response is checked against the served OpenAPI document.
import assert from "node:assert/strict";
import { client, expectMinimal, expectProblem, expectStatus, listPage, representation, withFixture } from "../support/api.ts";
import { createProperty, createRoomType, createUnit, type RoomType } from "../support/domain.ts";

const ROOM_TYPES = "/v1/room-types";
const ROOM_TYPE = "/v1/room-types/{id}";

Deno.test("a room type is created, listed by property and code, read, updated and deleted", () =>
  withFixture(async ({ tenant }) => {
    const { ownerClient: api } = await tenant("room-types");
    const property = await createProperty(api);
    const input = {
      propertyId: property.id, code: "FAM", name: "Family room", description: "Two rooms, one door", standardOccupancy: 2,
      maxOccupancy: 5, maxAdults: 3, maxChildren: 3, status: "active",
    };
    const created = await expectStatus<RoomType>("POST", ROOM_TYPES, await api.post("/room-types", input, representation), 201);
    assert.deepEqual({ ...created, id: undefined, createdAt: undefined, updatedAt: undefined },
      { ...input, id: undefined, createdAt: undefined, updatedAt: undefined });
    const double = await createRoomType(api, property.id, { code: "DBL" });

    const listed = await listPage<RoomType>(api, ROOM_TYPES, `?propertyId=${property.id}`);
    assert.deepEqual(listed.data.map((type) => type.code), ["DBL", "FAM"], "by property, then code");

    await expectMinimal("PATCH", ROOM_TYPE, await api.patch(`/room-types/${created.id}`, { maxOccupancy: 6, status: "archived" }), 204);
    const archived = await listPage<RoomType>(api, ROOM_TYPES, `?propertyId=${property.id}&status=archived`);
    assert.deepEqual(archived.data.map((type) => [type.code, type.maxOccupancy]), [["FAM", 6]]);

    assert.equal(await expectStatus("DELETE", ROOM_TYPE, await api.delete(`/room-types/${double.id}`), 204), undefined);
    await expectProblem("GET", ROOM_TYPE, await api.get(`/room-types/${double.id}`), 404, "not-found");
  }));

Deno.test("room type refusals: a code taken, occupancy out of order, a type in use, staff writing", () =>
  withFixture(async ({ tenant, memberOf }) => {
    const owned = await tenant("room-type-refusals");
    const api = owned.ownerClient;
    const property = await createProperty(api);
    const double = await createRoomType(api, property.id, { code: "DBL" });

    const taken = await expectProblem("POST", ROOM_TYPES,
      await api.post("/room-types", { propertyId: property.id, code: "DBL", name: "Another" }), 409, "already-exists");
    assert.deepEqual(taken.errors?.map((error) => error.path), ["code"]);
    const inverted = await expectProblem("POST", ROOM_TYPES,
      await api.post("/room-types", { propertyId: property.id, code: "X", name: "X", standardOccupancy: 3, maxOccupancy: 2 }), 422, "unprocessable");
    assert.deepEqual(inverted.errors?.map((error) => error.path), ["standardOccupancy"]);
    // One side in the body, the other stored: the database's check names the field.
    const lowered = await expectProblem("PATCH", ROOM_TYPE, await api.patch(`/room-types/${double.id}`, { maxOccupancy: 1 }), 422, "unprocessable");
    assert.deepEqual(lowered.errors?.map((error) => error.path), ["standardOccupancy"]);

    await createUnit(api, property.id, { roomTypeId: double.id });
    const inUse = await expectProblem("DELETE", ROOM_TYPE, await api.delete(`/room-types/${double.id}`), 409, "still-referenced");
    assert.equal(inUse.referencedBy, "units");

    const staff = client(await memberOf(owned, "staff"), owned.tenantId);
    await expectProblem("POST", ROOM_TYPES, await staff.post("/room-types", { propertyId: property.id, code: "S", name: "S" }), 403, "forbidden");
    assert.equal((await listPage<RoomType>(staff, ROOM_TYPES, `?propertyId=${property.id}`)).data.length, 1, "staff read them");
  }));

Deno.test("a unit made without a room type joins its kind and capacity's type, made the first time", () =>
  withFixture(async ({ tenant }) => {
    const { ownerClient: api } = await tenant("default-room-type");
    const property = await createProperty(api);
    const first = await createUnit(api, property.id, { type: "suite", capacity: 4 });
    const second = await createUnit(api, property.id, { type: "suite", capacity: 4 });
    const smaller = await createUnit(api, property.id, { type: "suite", capacity: 2 });
    assert.equal(second.roomTypeId, first.roomTypeId);
    assert.notEqual(smaller.roomTypeId, first.roomTypeId);
    const made = await expectStatus<RoomType>("GET", ROOM_TYPE, await api.get(`/room-types/${first.roomTypeId}`), 200);
    assert.deepEqual([made.code, made.name, made.standardOccupancy, made.maxOccupancy], ["SUITE-4", "Suite for 4", 2, 4]);
  }));
