import type { Endpoint } from "../http/endpoint.ts";
import { resourceEndpoints } from "../http/resource-endpoints.ts";
import type { RequestScope } from "../http/request-scope.ts";
import { deleteRoomType, findRoomType, insertRoomType, listRoomTypes, lockRoomType, updateRoomType } from "./queries.ts";
import { createRoomTypeBody, listRoomTypesQuery, roomType, updateRoomTypeBody } from "./schema.ts";

export function roomTypeEndpoints(scope: RequestScope): Endpoint[] {
  const roomTypes = resourceEndpoints(scope, {
    tag: "Room types", collection: "room-types", schema: roomType,
    name: { one: "RoomType", many: "RoomTypes" }, noun: { one: "room type", many: "room types" },
  });
  return [
    roomTypes.list({ access: "member", summary: "List the tenant's room types, by property and code.", query: listRoomTypesQuery },
      listRoomTypes),
    roomTypes.create({
      access: "manager", summary: "Create a room type in a property: what it sells, and the party it takes.",
      body: createRoomTypeBody, problems: ["already-exists", "unknown-reference", "unprocessable"],
    }, insertRoomType),
    roomTypes.get({ access: "member", summary: "Read a room type." }, findRoomType),
    roomTypes.update({
      access: "manager", summary: "Update a room type. Retire it with status archived; it cannot move to another property.",
      body: updateRoomTypeBody, problems: ["already-exists", "unprocessable"],
    }, { lock: lockRoomType, update: updateRoomType }),
    roomTypes.remove({
      access: "manager", summary: "Delete a room type no unit or stay is of. While one is, 409: archive it with PATCH instead.",
      problems: ["still-referenced"],
    }, deleteRoomType),
  ];
}
