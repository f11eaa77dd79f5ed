-- The inbox: what an in_app notification delivers, one message per user it reached, in the
-- tenant. An in_app notification is `sent` when its messages land here: a check-in's
-- alerts as its event is expanded, a system notice when the worker settles its job
-- (notifications.sql). A user reads, and marks read, only their own.
create table public.inbox_messages (
  tenant_id uuid not null,
  id uuid not null default gen_random_uuid(),
  user_id uuid not null,
  notification_id uuid not null,
  template_key text not null constraint inbox_messages_template_key_check
    check (template_key in ('check_in_alerts', 'delivery_failed', 'webhook_disabled', 'calendar_import_failing')),
  title text not null constraint inbox_messages_title_check check (length(title) between 1 and 300),
  body text not null constraint inbox_messages_body_check check (length(body) <= 4000),
  -- Where in a client app the message leads: a relative path such as /reservations/<id>.
  url text constraint inbox_messages_url_check check (length(url) <= 2000),
  read_at timestamptz,
  created_at timestamptz not null default now(),
  constraint inbox_messages_pkey primary key (tenant_id, id),
  constraint inbox_messages_tenant_id_notification_id_user_id_key unique (tenant_id, notification_id, user_id),
  constraint inbox_messages_tenant_id_notification_id_fkey foreign key (tenant_id, notification_id)
    references public.notifications (tenant_id, id) on delete cascade,
  constraint inbox_messages_tenant_id_user_id_fkey foreign key (tenant_id, user_id)
    references public.tenant_memberships (tenant_id, user_id) on delete cascade
);

-- The inbox, newest first; the unread count.
create index inbox_messages_tenant_user_created_idx on public.inbox_messages (tenant_id, user_id, created_at desc, id desc);
create index inbox_messages_tenant_user_unread_idx on public.inbox_messages (tenant_id, user_id) where read_at is null;

-- A message is what was delivered: only its read mark changes, and once read it stays read
-- at the time it was first read.
create or replace function private.inbox_message_before_update()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  if (pg_catalog.to_jsonb(new) - 'read_at') is distinct from (pg_catalog.to_jsonb(old) - 'read_at') then
    raise exception 'an inbox message only takes its read mark' using errcode = '42501';
  end if;
  if old.read_at is not null then
    new.read_at := old.read_at;
  end if;
  return new;
end
$$;

create trigger inbox_message_before_update before update on public.inbox_messages
  for each row execute function private.inbox_message_before_update();

alter table public.inbox_messages enable row level security;
revoke all on public.inbox_messages from anon, authenticated;
grant select on public.inbox_messages to authenticated;
grant update (read_at) on public.inbox_messages to authenticated;

create policy "members read their own inbox" on public.inbox_messages
  for select to authenticated
  using (tenant_id = (select private.request_tenant_id()) and user_id = (select auth.uid())
         and (select private.request_is_member()));
create policy "members mark their own inbox read" on public.inbox_messages
  for update to authenticated
  using (tenant_id = (select private.request_tenant_id()) and user_id = (select auth.uid())
         and (select private.request_is_member()))
  with check (tenant_id = (select private.request_tenant_id()) and user_id = (select auth.uid()));

-- The notifications worker delivers to the inboxes of the job's tenant.
grant select, insert on public.inbox_messages to background_worker;
create policy "background jobs read the job's inbox messages" on public.inbox_messages
  for select to background_worker using (tenant_id = (select private.request_tenant_id()));
create policy "background jobs deliver to inboxes" on public.inbox_messages
  for insert to background_worker with check (tenant_id = (select private.request_tenant_id()));
