import type { Endpoint } from "../http/endpoint.ts";
import { json } from "../http/json.ts";
import { changedResponses, resourceEndpoints } from "../http/resource-endpoints.ts";
import { written } from "../http/respond.ts";
import { idParams } from "../http/schemas.ts";
import { tenantEndpoint } from "../http/session-endpoints.ts";
import type { RequestScope } from "../http/request-scope.ts";
import { countUnread, listInboxMessages, markAllRead, markRead } from "./queries.ts";
import { inboxMarkedRead, inboxMessage, inboxUnreadCount, listInboxQuery } from "./schema.ts";

const tag = "Inbox";

// The caller's own in-app messages in the tenant, which the notifications worker delivers.
// Any member reads and marks their own; nobody sees another's, owners included.
export function inboxEndpoints(scope: RequestScope): Endpoint[] {
  const messages = resourceEndpoints(scope, {
    tag, collection: "inbox", schema: inboxMessage,
    name: { one: "InboxMessage", many: "InboxMessages" }, noun: { one: "inbox message", many: "inbox messages" },
  });
  return [
    messages.list({
      access: "member", query: listInboxQuery,
      summary: "The caller's own inbox in the tenant, newest first; filter by unread and template.",
    }, listInboxMessages),

    tenantEndpoint(scope, {
      method: "GET", path: "/v1/inbox/unread-count", operationId: "countUnreadInboxMessages", tag, access: "member",
      summary: "How many of the caller's messages in the tenant are unread, for a badge.",
      success: [{ status: 200, description: "The count.", schema: inboxUnreadCount }],
    }, async ({ db }) => json(200, { unread: await countUnread(db) })),

    tenantEndpoint(scope, {
      method: "POST", path: "/v1/inbox/{id}/read", operationId: "markInboxMessageRead", tag, access: "member",
      params: idParams, resource: "inbox message", prefer: true,
      summary: "Mark one of the caller's messages read. Marking it again changes nothing: readAt stays the first time. " +
        "Another user's message answers as an unknown one (404).",
      success: changedResponses(inboxMessage, "Marked read."),
    }, async ({ db, params, request, missing }) => {
      const marked = await markRead(db, params.id);
      if (!marked) throw missing();
      return written(request, marked);
    }),

    tenantEndpoint(scope, {
      method: "POST", path: "/v1/inbox/read-all", operationId: "markAllInboxMessagesRead", tag, access: "member",
      summary: "Mark every unread message of the caller in the tenant read.",
      success: [{ status: 200, description: "How many were marked.", schema: inboxMarkedRead }],
    }, async ({ db }) => json(200, { marked: await markAllRead(db) })),
  ];
}
