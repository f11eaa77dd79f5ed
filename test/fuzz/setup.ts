// The data the fuzzer (scripts/fuzz.sh) works in: a tenant of its own, with a property,
// a unit and its room type, a block of the unit, a rate plan, a guest, reservations in every open status, an access code, a
// payment link, a task, an API key for the property that may do everything a key may (with
// a rate limit no run reaches, so that its requests reach the routes) and a stay it booked, a message in the admin's inbox and a browser of
// the admin's subscribed to push, and two users: the tenant's
// owner, who only sets it up, and the admin the fuzzer signs in as. An admin may do
// everything a manager does except delete the tenant or change its owner, so nothing the
// fuzzer sends can take away the ground it stands on.
//
// Writes the ids as libFuzzer dictionaries the fuzzer draws from for ids in paths and
// bodies (test/fuzz/schemathesis.toml), so its requests reach real records as well as
// random ones. Prints the values its requests carry, as shell assignments.
//   setup.ts DICTIONARY_DIR
import { addMember, client, createTenantAs, expectStatus, representation, type Schemas } from "../support/api.ts";
import { addDays, createStay, reservationIn } from "../support/domain.ts";
import { deliverToInbox } from "../support/inbox.ts";
import { external, issueApiKey } from "../support/integration.ts";
import { browserSubscription, register } from "../support/push.ts";
import { adminSql, createUser } from "../support/session.ts";

const [dictionaries] = Deno.args;
if (!dictionaries) throw new Error("usage: setup.ts DICTIONARY_DIR");

const owner = await createUser("fuzz-owner");
const admin = await createUser("fuzz-admin");
const { tenantId } = await createTenantAs(owner, "fuzz");
const asOwner = client(owner, tenantId);
await addMember(asOwner, admin, "admin");
const stay = await createStay(asOwner, { status: "confirmed" });
const place = { propertyId: stay.property.id, unitId: stay.unit.id, guestId: stay.guest.id, ratePlanId: stay.ratePlan.id };
const start = addDays(stay.reservation.checkOut, 1);
const reservations = [stay.reservation];
for (const [index, status] of (["pending", "confirmed", "checked_in"] as const).entries()) {
  reservations.push(await reservationIn(asOwner, place, status, addDays(start, 4 * index)));
}
const code = await expectStatus<Schemas["AccessCode"]>("POST", "/v1/reservations/{id}/access-codes",
  await asOwner.post(`/reservations/${stay.reservation.id}/access-codes`, {}, representation), 201);
const link = await expectStatus<Schemas["PaymentLink"]>("POST", "/v1/reservations/{id}/payment-link",
  await asOwner.post(`/reservations/${stay.reservation.id}/payment-link`, {}, representation), 201);
const task = await expectStatus<Schemas["Task"]>("POST", "/v1/tasks",
  await asOwner.post("/tasks", { propertyId: place.propertyId, unitId: place.unitId, type: "cleaning", title: "Turn the room" }, representation), 201);
const block = await expectStatus<Schemas["UnitBlock"]>("POST", "/v1/unit-blocks",
  await asOwner.post("/unit-blocks", { unitId: place.unitId, startsOn: addDays(start, 40), endsOn: addDays(start, 42), reason: "New carpet" },
    representation), 201);
const key = await issueApiKey(asOwner, stay.property.id, {
  scopes: ["reservations:read", "reservations:write", "payments:write", "ari:read"],
});
// A stay a channel booked, which the integration run's changes and cancellations reach.
const booked = await expectStatus<Schemas["Reservation"]>("POST", "/v1/external/properties/{id}/reservations",
  await external("POST", `/properties/${stay.property.id}/reservations`, key.secret, {
    body: {
      roomTypeId: stay.unit.roomTypeId, ratePlanId: stay.ratePlan.id, checkIn: addDays(start, 60), checkOut: addDays(start, 63),
      channel: "Booking.com", externalReference: "FUZZ-1", guest: { firstName: "Fuzz", lastName: "Guest" },
    },
    headers: { prefer: "return=representation" },
  }), 201);
reservations.push(booked);
// The integration run sends over a thousand requests in seconds: at the default limit (600 a
// minute) half of them would be 429s, which the document allows but which test nothing
// behind the limit. An operator raises a key's limit so.
const sql = adminSql();
await sql`update public.api_keys set rate_limit = 1000000 where id = ${key.id}`;
const message = await deliverToInbox(sql, tenantId, admin.id);
await sql.end();
const subscription = await register(client(admin, tenantId), await browserSubscription(), 201);

const ids: Record<string, string[]> = {
  properties: [place.propertyId],
  units: [place.unitId],
  "room-types": [stay.unit.roomTypeId],
  "unit-blocks": [block.id],
  "rate-plans": [stay.ratePlan.id],
  guests: [place.guestId],
  reservations: reservations.map((reservation) => reservation.id),
  "access-codes": [code.id],
  "payment-links": [link.id],
  tasks: [task.id],
  inbox: [message.id],
  "push-subscriptions": [subscription.id],
  users: [owner.id, admin.id],
};
ids.all = Object.values(ids).flat();
await Deno.mkdir(dictionaries, { recursive: true });
for (const [name, values] of Object.entries(ids)) {
  await Deno.writeTextFile(`${dictionaries}/${name}.dict`, values.map((value) => `"${value}"\n`).join(""));
}

const values = {
  FUZZ_TOKEN: admin.token,
  FUZZ_TENANT_ID: tenantId,
  FUZZ_API_KEY: key.secret,
};
for (const [name, value] of Object.entries(values)) console.log(`${name}=${value}`);
