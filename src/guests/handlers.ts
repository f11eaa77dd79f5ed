import type { Endpoint } from "../http/endpoint.ts";
import { resourceEndpoints } from "../http/resource-endpoints.ts";
import type { RequestScope } from "../tenancy/request-scope.ts";
import { deleteGuest, findGuest, insertGuest, listGuests, lockGuest, updateGuest } from "./queries.ts";
import { createGuestBody, guest, listGuestsQuery, updateGuestBody } from "./schema.ts";

// Staff keep guest records; erasing one is for owners and admins.
export function guestEndpoints(scope: RequestScope): Endpoint[] {
  const guests = resourceEndpoints(scope, {
    tag: "Guests", collection: "guests", schema: guest,
    name: { one: "Guest", many: "Guests" }, noun: { one: "guest", many: "guests" },
  });
  return [
    guests.list({
      access: "member", summary: "List or search the tenant's guests, by last and first name.", query: listGuestsQuery,
    }, listGuests),
    guests.create({ access: "member", summary: "Create a guest.", body: createGuestBody, problems: ["unprocessable"] }, insertGuest),
    guests.get({ access: "member", summary: "Read a guest." }, findGuest),
    guests.update({ access: "member", summary: "Update a guest.", body: updateGuestBody, problems: ["unprocessable"] },
      { lock: lockGuest, update: updateGuest }),
    guests.remove({ access: "manager", summary: "Erase a guest no reservation refers to; while one does, 409.", problems: ["still-referenced"] },
      deleteGuest),
  ];
}
