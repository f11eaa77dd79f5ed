import type { Endpoint } from "../http/endpoint.ts";
import { changedResponses, resourceEndpoints } from "../http/resource-endpoints.ts";
import { listResponse, written } from "../http/respond.ts";
import { listOf } from "../http/schemas.ts";
import { tenantEndpoint } from "../http/session-endpoints.ts";
import type { RequestScope } from "../tenancy/request-scope.ts";
import { findNotification, listNotifications, listPreferences, upsertPreference } from "./queries.ts";
import {
  listNotificationsQuery,
  listPreferencesQuery,
  notification,
  notificationPreference,
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
      summary: "The tenant's notifications, newest first; filter by status, template and reservation.",
    }, listNotifications),
    notifications.get({ access: "member", summary: "Read one notification, with why it failed or was skipped." },
      findNotification),

    tenantEndpoint(scope, {
      method: "GET", path: "/v1/notifications/preferences", operationId: "listNotificationPreferences", tag,
      access: "member", query: listPreferencesQuery,
      summary: "Every stored preference of the tenant, by template and channel. A pair without one is enabled.",
      success: [{ status: 200, description: "The stored preferences.", schema: listOf(notificationPreference) }],
    }, async ({ db, query }) => {
      const { data, pagination } = await listPreferences(db, query);
      return listResponse(data, pagination);
    }),

    tenantEndpoint(scope, {
      method: "PATCH", path: "/v1/notifications/preferences", operationId: "setNotificationPreference", tag,
      access: "manager", body: setPreferenceBody, prefer: true,
      summary: "Opt the tenant in or out of one template on one channel: the pair's row is created or updated.",
      success: changedResponses(notificationPreference, "Saved."),
    }, async ({ db, body, request }) => written(request, await upsertPreference(db, body))),
  ];
}
