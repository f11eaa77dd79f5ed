// The dates and date-times a request carries (src/http/schemas.ts): years 1900 to 2999,
// a UTC offset of Z or up to 15:59 either way, at most nine digits of fractional seconds,
// real calendar days. Anything else is a 400 naming the field, before any query: Postgres
// refuses offsets of 16 hours and more and the year 0, and would answer a 500. What the
// API answers is in UTC, where an instant near the ends of the range may fall in 1899 or 3000.
import assert from "node:assert/strict";
import { z } from "zod";
import { isoDate, timestampInput } from "../../src/http/schemas.ts";
import { type Client, expectInvalid, expectStatus, type Page, representation, type Schemas, withFixture } from "../support/api.ts";
import { apiDocument } from "../support/api-document.ts";
import {
  addDays,
  createGuest,
  createProperty,
  createRatePlan,
  createStay,
  createUnit,
  createUnitBlock,
  type Reservation,
  type Stay,
  stepReservation,
  type UnitBlock,
} from "../support/domain.ts";
import { external, issueApiKey } from "../support/integration.ts";
import type { OpenApiDocument } from "../support/openapi.ts";

type Task = Schemas["Task"];
type AccessCode = Schemas["AccessCode"];
type Payment = Schemas["Payment"];

// A request that carries `value` in one field, and nothing else wrong.
type Case = { method: string; path: string; field: string; kind: "date" | "date-time"; send: (value: string) => Promise<Response> };

type Place = { stay: Stay; key: string; task: Task; block: UnitBlock; api: Client };

function cases({ stay, key, task, block, api }: Place): Case[] {
  const reservationId = stay.reservation.id;
  const query = (field: string, value: string) => `?${field}=${encodeURIComponent(value)}`;
  const create = { propertyId: stay.property.id, guestId: stay.guest.id };
  return [
    {
      method: "POST", path: "/v1/reservations/{id}/payments", field: "receivedAt", kind: "date-time",
      send: (value) => api.post(`/reservations/${reservationId}/payments`, { amount: 100, receivedAt: value }),
    },
    {
      method: "POST", path: "/v1/external/reservations/{id}/payments", field: "receivedAt", kind: "date-time",
      send: (value) =>
        external("POST", `/reservations/${reservationId}/payments`, key, {
          body: { amount: 100, currency: "EUR", method: "card", externalReference: crypto.randomUUID(), receivedAt: value },
        }),
    },
    {
      method: "POST", path: "/v1/reservations/{id}/payment-link", field: "expiresAt", kind: "date-time",
      send: (value) => api.post(`/reservations/${reservationId}/payment-link`, { amount: 100, expiresAt: value }),
    },
    {
      method: "POST", path: "/v1/api-keys", field: "expiresAt", kind: "date-time",
      send: (value) => api.post("/api-keys", { name: "Channel manager", propertyId: stay.property.id, expiresAt: value }),
    },
    {
      method: "POST", path: "/v1/reservations/{id}/access-codes", field: "validFrom", kind: "date-time",
      send: (value) => api.post(`/reservations/${reservationId}/access-codes`, { validFrom: value }),
    },
    {
      method: "POST", path: "/v1/reservations/{id}/access-codes", field: "validUntil", kind: "date-time",
      send: (value) => api.post(`/reservations/${reservationId}/access-codes`, { validUntil: value }),
    },
    {
      method: "POST", path: "/v1/tasks", field: "dueAt", kind: "date-time",
      send: (value) => api.post("/tasks", { propertyId: stay.property.id, type: "other", title: "Check the boiler", dueAt: value }),
    },
    {
      method: "PATCH", path: "/v1/tasks/{id}", field: "dueAt", kind: "date-time",
      send: (value) => api.patch(`/tasks/${task.id}`, { dueAt: value }),
    },
    {
      method: "GET", path: "/v1/reservations", field: "updatedSince", kind: "date-time",
      send: (value) => api.get(`/reservations${query("updatedSince", value)}`),
    },
    {
      method: "GET", path: "/v1/external/reservations", field: "updatedSince", kind: "date-time",
      send: (value) => external("GET", `/reservations${query("updatedSince", value)}`, key),
    },
    ...(["from", "to"] as const).map((field): Case => ({
      method: "GET", path: "/v1/external/properties/{id}/ari", field, kind: "date",
      send: (value) => {
        const range = { from: "2027-03-01", to: "2027-03-31", [field]: value };
        return external("GET", `/properties/${stay.property.id}/ari?from=${encodeURIComponent(range.from)}&to=${encodeURIComponent(range.to)}`, key);
      },
    })),
    ...(["checkIn", "checkOut"] as const).flatMap((field): Case[] => [{
      method: "POST", path: "/v1/external/properties/{id}/reservations", field, kind: "date",
      send: (value) =>
        external("POST", `/properties/${stay.property.id}/reservations`, key, {
          body: {
            roomTypeId: stay.unit.roomTypeId, ratePlanId: stay.ratePlan.id, checkIn: "2027-03-10", checkOut: "2027-03-13",
            [field]: value, channel: "Booking.com", externalReference: crypto.randomUUID(), guest: { firstName: "Ana", lastName: "Dates" },
          },
        }),
    }, {
      method: "PATCH", path: "/v1/external/reservations/{id}", field, kind: "date",
      send: (value) => external("PATCH", `/reservations/${reservationId}`, key, { body: { [field]: value } }),
    }]),
    {
      method: "GET", path: "/v1/tasks", field: "dueBefore", kind: "date-time",
      send: (value) => api.get(`/tasks${query("dueBefore", value)}`),
    },
    {
      method: "GET", path: "/v1/tasks", field: "dueAfter", kind: "date-time",
      send: (value) => api.get(`/tasks${query("dueAfter", value)}`),
    },
    {
      method: "POST", path: "/v1/reservations", field: "checkIn", kind: "date",
      send: (value) => api.post("/reservations", { ...create, checkIn: value, checkOut: "2027-03-13" }),
    },
    {
      method: "POST", path: "/v1/reservations", field: "checkOut", kind: "date",
      send: (value) => api.post("/reservations", { ...create, checkIn: "2027-03-10", checkOut: value }),
    },
    {
      method: "PATCH", path: "/v1/reservations/{id}", field: "checkIn", kind: "date",
      send: (value) => api.patch(`/reservations/${reservationId}`, { checkIn: value }),
    },
    {
      method: "PATCH", path: "/v1/reservations/{id}", field: "checkOut", kind: "date",
      send: (value) => api.patch(`/reservations/${reservationId}`, { checkOut: value }),
    },
    {
      method: "POST", path: "/v1/unit-blocks", field: "startsOn", kind: "date",
      send: (value) => api.post("/unit-blocks", { unitId: stay.unit.id, startsOn: value, endsOn: "2027-07-03", reason: "Paint" }),
    },
    {
      method: "POST", path: "/v1/unit-blocks", field: "endsOn", kind: "date",
      send: (value) => api.post("/unit-blocks", { unitId: stay.unit.id, startsOn: "2027-07-01", endsOn: value, reason: "Paint" }),
    },
    {
      method: "PATCH", path: "/v1/unit-blocks/{id}", field: "startsOn", kind: "date",
      send: (value) => api.patch(`/unit-blocks/${block.id}`, { startsOn: value }),
    },
    {
      method: "PATCH", path: "/v1/unit-blocks/{id}", field: "endsOn", kind: "date",
      send: (value) => api.patch(`/unit-blocks/${block.id}`, { endsOn: value }),
    },
    { method: "GET", path: "/v1/unit-blocks", field: "from", kind: "date", send: (value) => api.get(`/unit-blocks${query("from", value)}`) },
    { method: "GET", path: "/v1/unit-blocks", field: "to", kind: "date", send: (value) => api.get(`/unit-blocks${query("to", value)}`) },
    {
      method: "GET", path: "/v1/availability", field: "arrival", kind: "date",
      send: (value) => api.get(`/availability?propertyId=${stay.property.id}&arrival=${encodeURIComponent(value)}&departure=2027-03-13`),
    },
    {
      method: "GET", path: "/v1/availability", field: "departure", kind: "date",
      send: (value) => api.get(`/availability?propertyId=${stay.property.id}&arrival=2027-03-10&departure=${encodeURIComponent(value)}`),
    },
    {
      method: "GET", path: "/v1/rate-plans/{id}/calendar", field: "from", kind: "date",
      send: (value) => api.get(`/rate-plans/${stay.ratePlan.id}/calendar?from=${encodeURIComponent(value)}&to=2027-03-13`),
    },
    {
      method: "GET", path: "/v1/rate-plans/{id}/calendar", field: "to", kind: "date",
      send: (value) => api.get(`/rate-plans/${stay.ratePlan.id}/calendar?from=2027-03-10&to=${encodeURIComponent(value)}`),
    },
    { method: "GET", path: "/v1/reservations", field: "from", kind: "date", send: (value) => api.get(`/reservations${query("from", value)}`) },
    { method: "GET", path: "/v1/reservations", field: "to", kind: "date", send: (value) => api.get(`/reservations${query("to", value)}`) },
    {
      method: "GET", path: "/v1/external/reservations", field: "from", kind: "date",
      send: (value) => external("GET", `/reservations${query("from", value)}`, key),
    },
    {
      method: "GET", path: "/v1/external/reservations", field: "to", kind: "date",
      send: (value) => external("GET", `/reservations${query("to", value)}`, key),
    },
  ];
}

type JsonSchema = Record<string, unknown>;

// How the document marks a date or date-time a request takes: the pattern of the shared shape.
// Anything else with a date or date-time format escaped the shared shapes and shows as such.
function kindOf(schema: JsonSchema): string | undefined {
  if (schema.pattern === requestPatterns.dateTime) return "date-time";
  if (schema.pattern === requestPatterns.date) return "date";
  if (schema.format === "date" || schema.format === "date-time") return `format ${schema.format}, pattern ${schema.pattern}`;
  return undefined;
}

const requestPatterns = {
  dateTime: (z.toJSONSchema(timestampInput) as JsonSchema).pattern,
  date: (z.toJSONSchema(isoDate) as JsonSchema).pattern,
};

// The kinds a schema (or one of its alternatives) is, following $refs into the components.
function kindsOf(document: OpenApiDocument, schema: JsonSchema | undefined): string[] {
  if (!schema) return [];
  if (typeof schema.$ref === "string") return kindsOf(document, document.components.schemas[schema.$ref.split("/").pop()!]);
  const own = kindOf(schema);
  const alternatives = [...(schema.anyOf as JsonSchema[] ?? []), ...(schema.oneOf as JsonSchema[] ?? []), ...(schema.allOf as JsonSchema[] ?? [])];
  return [...(own ? [own] : []), ...alternatives.flatMap((alternative) => kindsOf(document, alternative))];
}

function propertiesOf(document: OpenApiDocument, schema: JsonSchema | undefined): Record<string, JsonSchema> {
  if (!schema) return {};
  if (typeof schema.$ref === "string") return propertiesOf(document, document.components.schemas[schema.$ref.split("/").pop()!]);
  const alternatives = [...(schema.anyOf as JsonSchema[] ?? []), ...(schema.allOf as JsonSchema[] ?? [])];
  return Object.assign({}, ...alternatives.map((alternative) => propertiesOf(document, alternative)), schema.properties ?? {});
}

// Every date and date-time field or query parameter a request may carry, as "METHOD path field kind".
function datesTheDocumentTakes(document: OpenApiDocument): string[] {
  const found: string[] = [];
  for (const [path, operations] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      const op = operation as { parameters?: JsonSchema[]; requestBody?: { content?: Record<string, { schema?: JsonSchema }> } };
      for (const parameter of op.parameters ?? []) {
        for (const kind of kindsOf(document, parameter.schema as JsonSchema)) found.push(`${method.toUpperCase()} ${path} ${parameter.name} ${kind}`);
      }
      const body = op.requestBody?.content?.["application/json"]?.schema;
      for (const [field, schema] of Object.entries(propertiesOf(document, body))) {
        for (const kind of kindsOf(document, schema)) found.push(`${method.toUpperCase()} ${path} ${field} ${kind}`);
      }
    }
  }
  return [...new Set(found)].sort();
}

async function place(tenant: { ownerClient: Client }): Promise<Place> {
  const api = tenant.ownerClient;
  const stay = await createStay(api, { status: "confirmed" });
  const key = (await issueApiKey(api, stay.property.id, {
    scopes: ["reservations:read", "reservations:write", "payments:write", "ari:read"],
  })).secret;
  const created = await api.post("/tasks", { propertyId: stay.property.id, type: "other", title: "Check the boiler" }, representation);
  const task = await expectStatus<Task>("POST", "/v1/tasks", created, 201);
  const block = await createUnitBlock(api, stay.unit.id, "2027-06-01", "2027-06-03");
  return { stay, key, task, block, api };
}

const refusedDateTimes = [
  "2027-03-01T10:00:00+16:00", // Postgres: time zone displacement out of range
  "2027-03-01T10:00:00-16:00",
  "2027-03-01T10:00:00+23:59",
  "0000-01-01T00:00:00Z", // Postgres: no year 0
  "1899-12-31T23:59:59Z",
  "3000-01-01T00:00:00Z",
  "9999-12-31T23:59:59-15:00", // year 10000 in UTC
  "2100-02-29T10:00:00Z", // not a leap year
  `2027-03-01T10:00:00.${"9".repeat(10)}Z`,
  `2027-03-01T10:00:00.${"9".repeat(200)}Z`, // Postgres: invalid input syntax
];
const refusedDates = ["0000-01-01", "1899-12-31", "3000-01-01", "9999-12-31", "2100-02-29", "1900-02-29"];

Deno.test("every date and date-time a request takes refuses a year outside 1900-2999, an offset of 16 hours or more and a day the calendar lacks: 400 naming it", () =>
  withFixture(async ({ sql, tenant }) => {
    const a = await tenant("dates");
    const at = await place(a);
    const all = cases(at);

    // The table covers every date and date-time the document says a request may carry.
    assert.deepEqual(
      all.map((c) => `${c.method} ${c.path} ${c.field} ${c.kind}`).sort(),
      datesTheDocumentTakes(await apiDocument()),
    );

    const wrong: string[] = [];
    for (const c of all) {
      for (const value of c.kind === "date" ? refusedDates : refusedDateTimes) {
        const response = await c.send(value);
        try {
          await expectInvalid(c.method, c.path, response, c.field);
        } catch (error) {
          wrong.push(`${c.method} ${c.path} ${c.field}=${value.slice(0, 40)}: ${String(error).split("\n")[0]!.slice(0, 300)}`);
        }
      }
    }
    assert.deepEqual(wrong, []);

    // Nothing was written by any of them.
    const [written] = await sql<{ payments: number; links: number; codes: number; tasks: number; keys: number; reservations: number }[]>`
      select (select count(*)::int from public.payments where tenant_id = ${a.tenantId}) as payments,
             (select count(*)::int from public.payment_links where tenant_id = ${a.tenantId}) as links,
             (select count(*)::int from public.access_codes where tenant_id = ${a.tenantId}) as codes,
             (select count(*)::int from public.tasks where tenant_id = ${a.tenantId}) as tasks,
             (select count(*)::int from public.api_keys where tenant_id = ${a.tenantId}) as keys,
             (select count(*)::int from public.reservations where tenant_id = ${a.tenantId}) as reservations`;
    assert.deepEqual({ ...written }, { payments: 0, links: 0, codes: 0, tasks: 1, keys: 1, reservations: 1 });
  }));

Deno.test("the ends of the range are taken, offsets of 15:59 included, and answered in UTC, in 1899 or 3000 where the offset carries them there", () =>
  withFixture(async ({ tenant }) => {
    const a = await tenant("dates");
    const { stay, key, task, api } = await place(a);
    const earliest = "1900-01-01T00:00:00+15:59";
    const latest = "2999-12-31T23:59:59.999999999-15:59"; // Postgres keeps microseconds: the next second

    const paid = await api.post(`/reservations/${stay.reservation.id}/payments`, { amount: 100, receivedAt: earliest }, representation);
    assert.equal((await expectStatus<Payment>("POST", "/v1/reservations/{id}/payments", paid, 201)).receivedAt, "1899-12-31T08:01:00+00:00");
    const paidLate = await api.post(`/reservations/${stay.reservation.id}/payments`, { amount: 100, receivedAt: latest }, representation);
    assert.equal((await expectStatus<Payment>("POST", "/v1/reservations/{id}/payments", paidLate, 201)).receivedAt, "3000-01-01T15:59:00+00:00");
    const externally = await external("POST", `/reservations/${stay.reservation.id}/payments`, key, {
      body: { amount: 100, currency: "EUR", method: "card", externalReference: crypto.randomUUID(), receivedAt: "1900-01-01T00:00:00Z" },
      headers: representation,
    });
    assert.equal(
      (await expectStatus<Payment>("POST", "/v1/external/reservations/{id}/payments", externally, 201)).receivedAt,
      "1900-01-01T00:00:00+00:00",
    );

    const link = await api.post(`/reservations/${stay.reservation.id}/payment-link`, { amount: 100, expiresAt: latest }, representation);
    assert.equal((await expectStatus<Schemas["PaymentLink"]>("POST", "/v1/reservations/{id}/payment-link", link, 201)).expiresAt,
      "3000-01-01T15:59:00+00:00");
    const issued = await issueApiKey(api, stay.property.id, { expiresAt: "2999-12-31T23:59:59-15:59" });
    assert.equal(issued.expiresAt, "3000-01-01T15:58:59+00:00");

    const code = await api.post(`/reservations/${stay.reservation.id}/access-codes`, { validFrom: earliest, validUntil: latest }, representation);
    const answered = await expectStatus<AccessCode>("POST", "/v1/reservations/{id}/access-codes", code, 201);
    assert.deepEqual([answered.validFrom, answered.validUntil], ["1899-12-31T08:01:00+00:00", "3000-01-01T15:59:00+00:00"]);

    const due = await api.post("/tasks", { propertyId: stay.property.id, type: "other", title: "Far off", dueAt: latest }, representation);
    assert.equal((await expectStatus<Task>("POST", "/v1/tasks", due, 201)).dueAt, "3000-01-01T15:59:00+00:00");
    const moved = await api.patch(`/tasks/${task.id}`, { dueAt: earliest }, representation);
    assert.equal((await expectStatus<Task>("PATCH", "/v1/tasks/{id}", moved, 200)).dueAt, "1899-12-31T08:01:00+00:00");

    // The filters take the same ends, and the instants they name in UTC.
    const tasks = (filter: string) => api.get(`/tasks?${filter}`);
    const within = await expectStatus<Page<Task>>("GET", "/v1/tasks", await tasks(
      `dueAfter=${encodeURIComponent(earliest)}&dueBefore=${encodeURIComponent("2999-12-31T23:59:59-15:59")}&propertyId=${stay.property.id}`,
    ), 200);
    assert.deepEqual(within.data.map((t) => t.id), [task.id], "due at 1899-12-31T08:01Z: on the first instant, not the far one");
    for (const filter of [`updatedSince=${encodeURIComponent(earliest)}`, `from=1900-01-01&to=2999-12-31`]) {
      const page = await expectStatus<Page<Reservation>>("GET", "/v1/reservations", await api.get(`/reservations?${filter}`), 200);
      assert.equal(page.pagination.total, 1, filter);
      const theirs = await expectStatus<Page<Reservation>>("GET", "/v1/external/reservations",
        await external("GET", `/reservations?${filter}`, key), 200);
      assert.equal(theirs.pagination.total, 1, filter);
    }

    // Dates: the first and last days, and February 29 of a leap century.
    const unit = await createUnit(api, stay.property.id);
    for (const [checkIn, checkOut] of [["1900-01-01", "1900-01-02"], ["2999-12-30", "2999-12-31"], ["2000-02-29", "2000-03-01"]]) {
      const made = await api.post("/reservations", {
        propertyId: stay.property.id, guestId: stay.guest.id, unitId: unit.id, checkIn, checkOut,
      }, representation);
      const reservation = await expectStatus<Reservation>("POST", "/v1/reservations", made, 201);
      assert.deepEqual([reservation.checkIn, reservation.checkOut], [checkIn, checkOut]);
    }
  }));

Deno.test("a stay ending on 2999-12-31 in a zone twelve hours behind UTC: its door code and cleaning task fall in 3000, and are answered", () =>
  withFixture(async ({ tenant }) => {
    const api = (await tenant("dates")).ownerClient;
    const property = await createProperty(api, { timezone: "Etc/GMT+12", checkInTime: "15:00", checkOutTime: "23:00" });
    const unit = await createUnit(api, property.id);
    const ratePlan = await createRatePlan(api, property.id);
    const guest = await createGuest(api);
    const made = await api.post("/reservations", {
      propertyId: property.id, guestId: guest.id, unitId: unit.id, ratePlanId: ratePlan.id, status: "confirmed",
      checkIn: addDays("2999-12-31", -2), checkOut: "2999-12-31",
    }, representation);
    const reservation = await expectStatus<Reservation>("POST", "/v1/reservations", made, 201);

    const code = await api.post(`/reservations/${reservation.id}/access-codes`, {}, representation);
    const answered = await expectStatus<AccessCode>("POST", "/v1/reservations/{id}/access-codes", code, 201);
    assert.deepEqual([answered.validFrom, answered.validUntil], ["2999-12-30T03:00:00+00:00", "3000-01-01T11:00:00+00:00"]);

    await stepReservation(api, reservation.id, "check-in");
    await stepReservation(api, reservation.id, "check-out");
    const tasks = await expectStatus<Page<Task>>("GET", "/v1/tasks", await api.get(`/tasks?unitId=${unit.id}`), 200);
    assert.deepEqual(tasks.data.map((t) => [t.type, t.dueAt]), [["cleaning", "3000-01-01T03:00:00+00:00"]]);
  }));
