import type { Endpoint } from "../http/endpoint.ts";
import { changedResponses, resourceEndpoints } from "../http/resource-endpoints.ts";
import { written } from "../http/respond.ts";
import { idParams } from "../http/schemas.ts";
import { tenantEndpoint } from "../http/session-endpoints.ts";
import type { RequestScope } from "../http/request-scope.ts";
import { clearEmailUndeliverable, deleteGuest, findGuest, insertGuest, listGuests, lockGuest, updateGuest } from "./queries.ts";
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
    // The mark is a sub-resource of the guest: deleting it is clearing it, and deleting one
    // that is not there changes nothing (204 all the same).
    tenantEndpoint(scope, {
      method: "DELETE", path: "/v1/guests/{id}/email-undeliverable", operationId: "clearGuestEmailUndeliverable", tag: "Guests",
      params: idParams, resource: "guest", access: "manager", prefer: true,
      summary: "Clear the mark that the guest's email address cannot receive mail, so that email is sent to it again " +
        "(owners and admins). Changing the address clears it too.",
      success: changedResponses(guest, "Cleared."),
    }, async ({ db, params, request, missing }) => {
      const cleared = await clearEmailUndeliverable(db, params.id);
      if (!cleared) throw missing();
      return written(request, cleared);
    }),
  ];
}
