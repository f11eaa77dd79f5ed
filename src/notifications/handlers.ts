import type { Endpoint } from "../http/endpoint.ts";
import { changedResponses, resourceEndpoints } from "../http/resource-endpoints.ts";
import { listResponse, pageFor, representation, written } from "../http/respond.ts";
import { idParams, listOf } from "../http/schemas.ts";
import { tenantEndpoint } from "../http/session-endpoints.ts";
import type { RequestScope } from "../http/request-scope.ts";
import { findNotificationWithEvents, listNotifications, listPreferences, upsertPreference } from "./queries.ts";
import {
  listNotificationsQuery,
  listPreferencesQuery,
  notification,
  notificationPreference,
  notificationWithEvents,
  setPreferenceBody,
} from "./schema.ts";

const tag = "Notifications";

// Notifications are written by the database's triggers and the worker; clients read
// them and set the tenant's preferences.
export function notificationEndpoints(scope: RequestScope): Endpoint[] {
  const notifications = resourceEndpoints(scope, {
    tag, collection: "notifications", schema: notification,
    name: { one: "Notification", many: "Notifications" }, noun: { one: "notification", many: "notifications" },
  });
  return [
    notifications.list({
      access: "member", query: listNotificationsQuery,
      summary: "The tenant's notifications, newest first; filter by status, template, reservation and delivery state.",
    }, listNotifications),
    tenantEndpoint(scope, {
      method: "GET", path: "/v1/notifications/{id}", operationId: "getNotification", tag, params: idParams,
      resource: "notification", access: "member",
      summary: "Read one notification, with why it failed or was skipped, and what its provider reported after accepting it.",
      success: [{ status: 200, description: "The notification and its provider's reports, newest first.", schema: notificationWithEvents, headers: ["ETag"] }],
    }, async ({ db, params, missing }) => {
      const found = await findNotificationWithEvents(db, params.id);
      if (!found) throw missing();
      return representation(found);
    }),

    tenantEndpoint(scope, {
      method: "GET", path: "/v1/notifications/preferences", operationId: "listNotificationPreferences", tag,
      access: "member", query: listPreferencesQuery, countable: true,
      summary: "Every stored preference of the tenant, by template and channel. A pair without one is enabled.",
      success: [{ status: 200, description: "The stored preferences.", schema: listOf(notificationPreference) }],
    }, async ({ db, query, request, tenantId }) => {
      const page = pageFor(request, query, { reader: "member", tenantId });
      return listResponse(page, await listPreferences(db, page));
    }),

    tenantEndpoint(scope, {
      method: "PATCH", path: "/v1/notifications/preferences", operationId: "setNotificationPreference", tag,
      access: "manager", body: setPreferenceBody, prefer: true,
      summary: "Opt the tenant in or out of one template on one channel: the pair's row is created or updated.",
      success: changedResponses(notificationPreference, "Saved."),
    }, async ({ db, body, request }) => written(request, await upsertPreference(db, body))),
  ];
}
