import type { Kysely } from "kysely";
import { z } from "zod";
import { sha256Hex } from "../api-keys/secret.ts";
import type { DB } from "../db/database.ts";
import { type Endpoint, notFound, publicEndpoint } from "../http/endpoint.ts";
import { jsonText, noContent } from "../http/json.ts";
import type { RequestScope } from "../http/request-scope.ts";
import { resourceEndpoints } from "../http/resource-endpoints.ts";
import { etagOfText, locationOf } from "../http/respond.ts";
import { idParams } from "../http/schemas.ts";
import { tenantEndpoint } from "../http/session-endpoints.ts";
import { renderCalendar } from "./ical.ts";
import {
  findCalendarFeed,
  insertCalendarFeed,
  listCalendarFeeds,
  lockCalendarFeed,
  readFeed,
  revokeCalendarFeed,
  updateCalendarFeed,
} from "./queries.ts";
import {
  calendarFeed,
  createCalendarFeedBody,
  feedParams,
  issuedCalendarFeed,
  listCalendarFeedsQuery,
  updateCalendarFeedBody,
} from "./schema.ts";
import { issueFeedToken } from "./token.ts";

const tag = "Calendar feeds";

// What each kind of event says: that the nights are taken, never by whom.
const SUMMARIES = { stay: "Reserved", block: "Not available", full: "Fully booked" } as const;

// Owners and admins make a feed for a unit or a room type and hand its URL to a calendar
// service; the service reads it with the token alone, as often as it likes.
// `publicUrl` is the api function's address as the world calls it (src/env.ts): a feed's
// URL is handed to another company, so it is whole, not relative to the request.
export function calendarFeedEndpoints(scope: RequestScope, deps: { db: Kysely<DB>; publicUrl: () => string }): Endpoint[] {
  const feeds = resourceEndpoints(scope, {
    tag, collection: "calendar-feeds", schema: calendarFeed,
    name: { one: "CalendarFeed", many: "CalendarFeeds" }, noun: { one: "calendar feed", many: "calendar feeds" },
  });
  return [
    feeds.list({
      access: "manager", summary: "List the tenant's calendar feeds, newest first, without their URLs.", query: listCalendarFeedsQuery,
    }, listCalendarFeeds),
    feeds.get({ access: "manager", summary: "Read a calendar feed, without its URL." }, findCalendarFeed),
    feeds.update({ access: "manager", summary: "Rename a calendar feed.", body: updateCalendarFeedBody },
      { lock: lockCalendarFeed, update: updateCalendarFeed }),

    tenantEndpoint(scope, {
      method: "POST", path: "/v1/calendar-feeds", operationId: "createCalendarFeed", tag, access: "manager",
      summary: "Make an iCal feed of a unit's or a room type's unsellable nights; the response is the only time its URL is shown.",
      body: createCalendarFeedBody, problems: ["unknown-reference", "unprocessable"],
      success: [{ status: 201, description: "Made; give the URL to the calendar service now.", schema: issuedCalendarFeed, headers: ["Location"] }],
    }, async ({ db, body, request }) => {
      const issued = issueFeedToken();
      const created = await insertCalendarFeed(db, body, issued);
      // No ETag: a validator of a body holding the secret would be derived from it.
      return jsonText(201, JSON.stringify({ ...created, url: `${deps.publicUrl()}/v1/ical/${issued.token}.ics` }), {
        location: locationOf(request, `calendar-feeds/${created.id}`),
        "cache-control": "no-store",
      });
    }),

    tenantEndpoint(scope, {
      method: "DELETE", path: "/v1/calendar-feeds/{id}", operationId: "revokeCalendarFeed", tag, access: "manager",
      summary: "Revoke a calendar feed; its URL answers 404 from now on. Revoking again changes nothing.",
      params: idParams, resource: "calendar feed", success: [{ status: 204, description: "Revoked." }],
    }, async ({ db, params, missing }) => {
      if (!await revokeCalendarFeed(db, params.id)) throw missing();
      return noContent();
    }),

    publicEndpoint({
      method: "GET", path: "/v1/ical/{feed}", operationId: "getCalendarFeedContent", tag,
      summary: "A calendar feed's iCalendar (RFC 5545): all-day events for the nights its unit or room type cannot be sold, " +
        "from 30 days ago to two years ahead. The token is the credential; an unknown or revoked one is a 404.",
      params: feedParams, resource: "calendar feed",
      success: [
        { status: 200, description: "The calendar.", contentType: "text/calendar", schema: z.string(), headers: ["ETag"] },
        { status: 304, description: "Unchanged since the ETag sent in If-None-Match.", headers: ["ETag"] },
      ],
    }, async ({ params, request }) => {
      const feed = await readFeed(deps.db, sha256Hex(params.feed.slice(0, -".ics".length)));
      if (!feed) throw notFound("calendar feed");
      const body = renderCalendar({
        name: feed.name,
        events: feed.events.map(({ kind, ...event }) => ({ ...event, summary: SUMMARIES[kind] })),
      });
      const etag = etagOfText(body);
      // Calendar services poll; each may ask again whenever it likes and gets a 304 while nothing changed.
      const headers = { etag, "cache-control": "private, no-cache" };
      if (request.headers.get("if-none-match") === etag) return new Response(null, { status: 304, headers });
      return new Response(body, { headers: { ...headers, "content-type": "text/calendar; charset=utf-8" } });
    }),
  ];
}
