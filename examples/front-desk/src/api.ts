// The API as the front desk calls it: openapi-fetch, typed by the paths openapi-typescript
// generated from the API's OpenAPI document (./api-types.ts, `npm run api:types`). A route,
// a parameter or a body that the document no longer has is a type error here, so an API
// change that breaks this app fails scripts/typecheck.sh.
import createClient, { type Middleware } from "openapi-fetch";
import type { components, paths } from "./api-types.ts";

type Schemas = components["schemas"];
export type MyTenant = Schemas["MyTenant"];
export type Property = Schemas["Property"];
export type Unit = Schemas["Unit"];
export type Guest = Schemas["Guest"];
export type Reservation = Schemas["Reservation"];
export type InboxMessage = Schemas["InboxMessage"];
export type Availability = Schemas["Availability"];
export type RoomTypeOffer = Availability["roomTypes"][number];
export type RateQuote = RoomTypeOffer["ratePlans"][number];
export type Restriction = RateQuote["restrictions"][number];
export type Problem = Schemas["Problem"];

// A stay asked for: where, when and for whom (GET /v1/availability's query).
export type StaySearch = { propertyId: string; arrival: string; departure: string; adults: number; children: number };

// A stay booked from a search: a room type on one of its plans, for a guest.
export type Booking = StaySearch & { roomTypeId: string; ratePlanId: string; guestId: string };

// The most a list answers in one page (the API's limit).
const PAGE = 100;

// The API answered with a problem document (RFC 9457): its detail is said to the user.
export class ApiProblem extends Error {
  constructor(readonly problem: Problem) {
    super(problem.detail);
    this.name = "ApiProblem";
  }
}

// The request got no answer the page may read: the network failed, or the browser refused
// the answer because the API did not grant this page's origin (CORS). fetch tells the two
// apart to nobody, by design.
export class ApiUnreachable extends Error {
  constructor(cause: unknown) {
    super(`The API could not be reached from this page (${cause instanceof Error ? cause.message : String(cause)}).`);
    this.name = "ApiUnreachable";
  }
}

function isProblem(value: unknown): value is Problem {
  return typeof value === "object" && value !== null && "type" in value && "detail" in value;
}

// What an openapi-fetch call answered: its data, or the problem thrown.
async function answer<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  let result: { data?: T; error?: unknown; response: Response };
  try {
    result = await call;
  } catch (error) {
    throw new ApiUnreachable(error);
  }
  if (result.error !== undefined) {
    if (isProblem(result.error)) throw new ApiProblem(result.error);
    throw new Error(`The API answered ${result.response.status}.`);
  }
  return result.data as T;
}

export type FrontDeskApi = ReturnType<typeof createFrontDeskApi>;

// `accessToken` gives the signed-in session's access token (supabase-js refreshes it),
// or null when nobody is signed in; every call sends it as the bearer.
export function createFrontDeskApi(supabaseUrl: string, accessToken: () => Promise<string | null>) {
  // The API is the Edge Function `api`; the document's paths start at /v1.
  const client = createClient<paths>({ baseUrl: `${supabaseUrl}/functions/v1/api` });
  const bearer: Middleware = {
    async onRequest({ request }) {
      const token = await accessToken();
      if (token !== null) request.headers.set("authorization", `Bearer ${token}`);
      return request;
    },
  };
  client.use(bearer);
  const tenant = (tenantId: string) => ({ "x-tenant-id": tenantId });

  return {
    async myTenants(): Promise<MyTenant[]> {
      return (await answer(client.GET("/v1/tenants", { params: { query: { limit: PAGE } } }))).data;
    },

    async properties(tenantId: string): Promise<Property[]> {
      const page = await answer(client.GET("/v1/properties", {
        params: { header: tenant(tenantId), query: { status: "active", limit: PAGE } },
      }));
      return page.data;
    },

    async units(tenantId: string, propertyId: string): Promise<Unit[]> {
      const page = await answer(client.GET("/v1/units", {
        params: { header: tenant(tenantId), query: { propertyId, limit: PAGE } },
      }));
      return page.data;
    },

    // The first page of the tenant's guests, by last and first name.
    async guests(tenantId: string): Promise<Guest[]> {
      const page = await answer(client.GET("/v1/guests", { params: { header: tenant(tenantId), query: { limit: PAGE } } }));
      return page.data;
    },

    async guest(tenantId: string, id: string): Promise<Guest> {
      return await answer(client.GET("/v1/guests/{id}", { params: { header: tenant(tenantId), path: { id } } }));
    },

    // Confirmed stays due by `today` that have not arrived: the API's `to` keeps those that
    // begin before the day after, `from` those with a night from today on. A stay that
    // began earlier and never arrived is still at the desk (shown as late), until it is
    // checked in or marked a no-show.
    async arrivals(tenantId: string, propertyId: string, today: string, tomorrow: string): Promise<Reservation[]> {
      const page = await answer(client.GET("/v1/reservations", {
        params: { header: tenant(tenantId), query: { propertyId, status: "confirmed", from: today, to: tomorrow, limit: PAGE } },
      }));
      return page.data;
    },

    // Everyone checked in at the property now.
    async inHouse(tenantId: string, propertyId: string): Promise<Reservation[]> {
      const page = await answer(client.GET("/v1/reservations", {
        params: { header: tenant(tenantId), query: { propertyId, status: "checked_in", limit: PAGE } },
      }));
      return page.data;
    },

    // What the property can sell for the stay: per room type the rooms left, and each plan's
    // total or the restrictions that stop it.
    async availability(tenantId: string, search: StaySearch): Promise<Availability> {
      const { propertyId, arrival, departure, adults, children } = search;
      return await answer(client.GET("/v1/availability", {
        params: { header: tenant(tenantId), query: { propertyId, arrival, departure, adults, children } },
      }));
    },

    // A confirmed stay of the room type, without a unit (one is assigned at check-in) and
    // without a total: the database prices it from the plan's calendar, as the search quoted.
    async book(tenantId: string, booking: Booking): Promise<Reservation> {
      const created = await answer(client.POST("/v1/reservations", {
        params: { header: { ...tenant(tenantId), Prefer: "return=representation" } },
        body: {
          propertyId: booking.propertyId,
          roomTypeId: booking.roomTypeId,
          ratePlanId: booking.ratePlanId,
          guestId: booking.guestId,
          checkIn: booking.arrival,
          checkOut: booking.departure,
          adults: booking.adults,
          children: booking.children,
          status: "confirmed",
          source: "direct",
        },
      }));
      // return=representation answers the reservation; without it only its id.
      if (!("confirmationCode" in created)) throw new Error("The API answered the new reservation's id without the reservation.");
      return created;
    },

    async checkIn(tenantId: string, id: string): Promise<void> {
      await answer(client.POST("/v1/reservations/{id}/check-in", { params: { header: tenant(tenantId), path: { id } } }));
    },

    async checkOut(tenantId: string, id: string): Promise<void> {
      await answer(client.POST("/v1/reservations/{id}/check-out", { params: { header: tenant(tenantId), path: { id } } }));
    },

    // The newest of the caller's own in-app messages in the tenant, and how many are unread.
    async inbox(tenantId: string): Promise<{ messages: InboxMessage[]; unread: number }> {
      const [page, count] = await Promise.all([
        answer(client.GET("/v1/inbox", { params: { header: tenant(tenantId), query: { limit: 10 } } })),
        answer(client.GET("/v1/inbox/unread-count", { params: { header: tenant(tenantId) } })),
      ]);
      return { messages: page.data, unread: count.unread };
    },

    async markAllRead(tenantId: string): Promise<number> {
      return (await answer(client.POST("/v1/inbox/read-all", { params: { header: tenant(tenantId) } }))).marked;
    },
  };
}
