// The in-app inbox for tests: messages put in a user's inbox as the notifications worker
// puts them there (an in_app notification, sent, and its message), written with the admin
// connection, and the inbox routes as a client calls them, checked against the contract.
import type postgres from "postgres";
import { type Client, expectStatus, listPage, type Page, representation, type Schemas } from "./api.ts";

export type InboxMessage = Schemas["InboxMessage"];
export type InboxTemplateKey = InboxMessage["templateKey"];

export const INBOX = "/v1/inbox";
export const UNREAD_COUNT = "/v1/inbox/unread-count";
export const MARK_READ = "/v1/inbox/{id}/read";
export const READ_ALL = "/v1/inbox/read-all";

export type Delivery = {
  templateKey?: InboxTemplateKey;
  title?: string;
  body?: string;
  url?: string | null;
  // When it landed: `minutesAgo` before now, or exactly `at`.
  minutesAgo?: number;
  at?: string;
  // Read a second after it landed.
  read?: boolean;
};

// One message in `userId`'s inbox in the tenant, as the worker delivers a notification: a
// check-in alert's notification names its recipient (user for staff, admin for owners and
// admins); a failed delivery's notice is the system's, with no recipient of its own.
export async function deliverToInbox(
  sql: postgres.Sql,
  tenantId: string,
  userId: string,
  delivery: Delivery = {},
): Promise<{ id: string; notificationId: string }> {
  const templateKey = delivery.templateKey ?? "check_in_alerts";
  const system = templateKey === "delivery_failed";
  const [role] = await sql<{ role: string }[]>`
    select role::text from public.tenant_memberships where tenant_id = ${tenantId} and user_id = ${userId}`;
  if (!role) throw new Error(`user ${userId} is not a member of tenant ${tenantId}`);
  const recipientType = system ? "system" : role.role === "staff" ? "user" : "admin";
  const at = delivery.at ?? new Date(Date.now() - (delivery.minutesAgo ?? 0) * 60_000).toISOString();
  const [message] = await sql<{ id: string; notificationId: string }[]>`
    with notice as (
      insert into public.notifications (tenant_id, recipient_id, recipient_type, template_key, channel, status, sent_at, created_at)
      values (${tenantId}, ${system ? null : userId}, ${recipientType}, ${templateKey}, 'in_app', 'sent', ${at}, ${at})
      returning id
    )
    insert into public.inbox_messages (tenant_id, user_id, notification_id, template_key, title, body, url, read_at, created_at)
    select ${tenantId}, ${userId}, notice.id, ${templateKey}, ${delivery.title ?? "Ana Silva checked in"},
           ${delivery.body ?? "Room 101, until Friday."}, ${delivery.url === undefined ? "/reservations" : delivery.url},
           ${delivery.read ? sql`${at}::timestamptz + interval '1 second'` : null}, ${at}
    from notice
    returning id::text, notification_id::text as "notificationId"`;
  return message!;
}

// How many messages the user has in the tenant, read or not, as the database sees them.
export async function storedMessages(sql: postgres.Sql, tenantId: string, userId: string): Promise<{ unread: number; read: number }> {
  const [counts] = await sql<{ unread: number; read: number }[]>`
    select count(*) filter (where read_at is null)::int as unread, count(*) filter (where read_at is not null)::int as read
    from public.inbox_messages where tenant_id = ${tenantId} and user_id = ${userId}`;
  return counts!;
}

export const listInbox = (api: Client, query = ""): Promise<Page<InboxMessage>> => listPage<InboxMessage>(api, INBOX, query);

export async function unreadCount(api: Client): Promise<number> {
  const body = await expectStatus<Schemas["InboxUnreadCount"]>("GET", UNREAD_COUNT, await api.get("/inbox/unread-count"), 200);
  return body.unread;
}

// POST /v1/inbox/{id}/read with return=representation: 200 and the message.
export async function markRead(api: Client, id: string): Promise<InboxMessage> {
  return await expectStatus<InboxMessage>("POST", MARK_READ, await api.post(`/inbox/${id}/read`, undefined, representation), 200);
}

export async function markAllRead(api: Client): Promise<number> {
  const body = await expectStatus<Schemas["InboxMarkedRead"]>("POST", READ_ALL, await api.post("/inbox/read-all"), 200);
  return body.marked;
}
