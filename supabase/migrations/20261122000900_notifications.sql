-- Transactional notifications. A domain change inserts a pending notification and
-- sends its job to the pgmq queue `notifications` in the same transaction, so a
-- rolled-back change leaves neither; the notifications worker renders and delivers.

-- Background jobs (the notification worker) switch to this role and set
-- app.tenant_id from the job, so they read one tenant's rows and no other's.
do $$
begin
  if not exists (select from pg_roles where rolname = 'background_worker') then
    create role background_worker nologin noinherit;
  end if;
end
$$;
grant background_worker to postgres;

grant usage on schema private, extensions to background_worker;
grant execute on function private.request_tenant_id() to background_worker;
grant select on public.tenants, public.properties, public.units, public.rate_plans, public.guests,
  public.reservations, public.payments, public.payment_links, public.tasks, public.access_codes
  to background_worker;

create policy "background jobs read the job's tenant" on public.tenants
  for select to background_worker using (id = (select private.request_tenant_id()));
create policy "background jobs read the job's properties" on public.properties
  for select to background_worker using (tenant_id = (select private.request_tenant_id()));
create policy "background jobs read the job's units" on public.units
  for select to background_worker using (tenant_id = (select private.request_tenant_id()));
create policy "background jobs read the job's rate plans" on public.rate_plans
  for select to background_worker using (tenant_id = (select private.request_tenant_id()));
create policy "background jobs read the job's guests" on public.guests
  for select to background_worker using (tenant_id = (select private.request_tenant_id()));
create policy "background jobs read the job's reservations" on public.reservations
  for select to background_worker using (tenant_id = (select private.request_tenant_id()));
create policy "background jobs read the job's payments" on public.payments
  for select to background_worker using (tenant_id = (select private.request_tenant_id()));
create policy "background jobs read the job's payment links" on public.payment_links
  for select to background_worker using (tenant_id = (select private.request_tenant_id()));
create policy "background jobs read the job's tasks" on public.tasks
  for select to background_worker using (tenant_id = (select private.request_tenant_id()));
create policy "background jobs read the job's access codes" on public.access_codes
  for select to background_worker using (tenant_id = (select private.request_tenant_id()));

create table public.notifications (
  tenant_id uuid not null default private.request_tenant_id()
    constraint notifications_tenant_id_fkey references public.tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  -- The guest or user it is for; null for a system-audience notification.
  recipient_id uuid,
  recipient_type text not null
    constraint notifications_recipient_type_check check (recipient_type in ('user', 'guest', 'admin', 'system')),
  template_key text not null
    constraint notifications_template_key_check
      check (template_key in ('checkin_reminder', 'checkout_summary', 'reservation_cancelled', 'access_code_delivery')),
  channel text not null constraint notifications_channel_check check (channel in ('email', 'sms', 'push', 'in_app')),
  -- What the notification is about, read when it is rendered.
  reservation_id uuid,
  access_code_id uuid,
  -- Filled when rendered: empty while pending.
  subject text,
  body text not null default '',
  -- `skipped` extends the contract's statuses: an opt-out or a disabled channel, so
  -- that no notification stays pending for ever.
  status text not null default 'pending'
    constraint notifications_status_check check (status in ('pending', 'sent', 'failed', 'skipped')),
  -- Why it failed or was skipped, in words an operator can act on.
  status_reason text constraint notifications_status_reason_check check (length(status_reason) <= 2000),
  attempts integer not null default 0 constraint notifications_attempts_check check (attempts >= 0),
  recipient_address text,
  provider_message_id text,
  sent_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint notifications_pkey primary key (tenant_id, id),
  constraint notifications_tenant_id_reservation_id_fkey foreign key (tenant_id, reservation_id)
    references public.reservations (tenant_id, id) on delete set null (reservation_id),
  constraint notifications_tenant_id_access_code_id_fkey foreign key (tenant_id, access_code_id)
    references public.access_codes (tenant_id, id) on delete set null (access_code_id),
  constraint notifications_sent_at_exactly_when_sent check ((status = 'sent') = (sent_at is not null))
);

create index notifications_tenant_created_idx on public.notifications (tenant_id, created_at desc, id desc);
create index notifications_tenant_status_idx on public.notifications (tenant_id, status) where status in ('pending', 'failed');
create index notifications_tenant_reservation_idx on public.notifications (tenant_id, reservation_id)
  where reservation_id is not null;
create index notifications_tenant_access_code_idx on public.notifications (tenant_id, access_code_id)
  where access_code_id is not null;

-- One row per (template, channel) and tenant; no row means enabled.
create table public.notification_preferences (
  tenant_id uuid not null default private.request_tenant_id()
    constraint notification_preferences_tenant_id_fkey references public.tenants (id) on delete cascade,
  -- The four event templates and the names the operator settings screen uses.
  template_key text not null constraint notification_preferences_template_key_check check (template_key in (
    'checkin_reminder', 'checkout_summary', 'reservation_cancelled', 'access_code_delivery',
    'check_in_alerts', 'nightly_summary', 'marketing_emails')),
  channel text not null
    constraint notification_preferences_channel_check check (channel in ('email', 'sms', 'push', 'in_app')),
  enabled boolean not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint notification_preferences_pkey primary key (tenant_id, template_key, channel)
);

-- pending -> sent | failed | skipped. An operator retries a failed notification by
-- setting it pending again (private.retry_notification); nothing else moves back.
create or replace function private.notification_before_update()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  if (new.template_key, new.channel, new.recipient_type, new.recipient_id, new.reservation_id, new.access_code_id)
     is distinct from (old.template_key, old.channel, old.recipient_type, old.recipient_id, old.reservation_id, old.access_code_id)
     and pg_trigger_depth() = 1 then
    raise exception 'a notification''s template, channel, recipient and subject matter cannot change' using errcode = '42501';
  end if;
  if new.status is distinct from old.status
     and not (old.status = 'pending' or (old.status = 'failed' and new.status = 'pending')) then
    raise exception 'a % notification cannot become %', old.status, new.status
      using errcode = 'PT409', constraint = 'notifications_status_transition',
            detail = jsonb_build_object('currentStatus', old.status, 'requestedStatus', new.status)::text,
            hint = case when old.status = 'failed' then 'a failed notification can only be retried'
                        else format('%s is final', old.status) end;
  end if;
  -- Nested: the foreign keys clearing a deleted reservation or code, which a sent
  -- notification must let go of too.
  if old.status = 'sent' and new is distinct from old and pg_trigger_depth() = 1 then
    raise exception 'a sent notification cannot change'
      using errcode = 'PT409', constraint = 'notifications_sent_final', detail = jsonb_build_object('currentStatus', old.status)::text;
  end if;
  return new;
end
$$;

-- Same-event triggers fire in name order, and on notifications that order matters:
-- notification_before_update must see the row before touch_updated_at stamps it, or
-- a sent notification would count as changed by an update that changes nothing.
-- These two tables have no created_by.
create trigger forbid_tenant_change before update of tenant_id, created_at on public.notifications
  for each row execute function private.forbid_tenant_change();
create trigger notification_before_update before update on public.notifications
  for each row execute function private.notification_before_update();
create trigger touch_updated_at before update on public.notifications
  for each row execute function private.touch_updated_at();
create trigger forbid_tenant_change before update of tenant_id, created_at on public.notification_preferences
  for each row execute function private.forbid_tenant_change();
create trigger touch_updated_at before update on public.notification_preferences
  for each row execute function private.touch_updated_at();

do $$
begin
  if not exists (select 1 from pgmq.list_queues() q where q.queue_name = 'notifications') then
    perform pgmq.create('notifications');
  end if;
end
$$;

-- The job the notifications worker reads is built in one place, so a new
-- notification and an operator's retry cannot drift apart in what they send. It goes
-- through pgmq.send's base form, (queue, message, headers, visible at). pgmq's
-- shorter forms, pgmq.send(queue, message) among them, are SQL functions that call
-- this one; a SQL function called from PL/pgSQL has its body parsed and planned again
-- on every call. In loops of 3,000, a check-in's whole enqueue (the notification row
-- and its job) took about 117 µs through the short form and 94 µs through this one;
-- without any job it takes about 54.
-- The base form is a PL/pgSQL function in every pgmq from 1.5.0 on (hosted Supabase
-- ships 1.5.1; the local stack pins 1.11.0). pgmq 1.4.4, which older hosted projects
-- may still have, has no base form: there `alter extension pgmq update` comes first,
-- and this migration says so rather than leaving every check-in to fail.
do $$
declare
  installed text := (select e.extversion from pg_catalog.pg_extension e where e.extname = 'pgmq');
begin
  if pg_catalog.to_regprocedure('pgmq.send(text, jsonb, jsonb, timestamp with time zone)') is null then
    raise exception 'pgmq % has no pgmq.send(text, jsonb, jsonb, timestamptz); it came with pgmq 1.5.0', installed
      using hint = 'Run: alter extension pgmq update;';
  end if;
end
$$;

create or replace function private.send_notification_job(notification_id uuid, tenant uuid)
returns void
language plpgsql
set search_path = ''
as $$
begin
  -- Visible at once, as pgmq.send(queue, message) would make it; no headers.
  perform pgmq.send('notifications', jsonb_build_object('notificationId', notification_id, 'tenantId', tenant),
                    null::jsonb, clock_timestamp());
end
$$;
revoke all on function private.send_notification_job(uuid, uuid) from public;

-- Runs as owner: members cannot write notifications or the queue, yet every change
-- they make that guests must hear about has to leave both behind.
create or replace function private.enqueue_notification(
  tenant uuid, template text, guest uuid, reservation uuid, access_code uuid default null
) returns uuid
language plpgsql security definer
set search_path = ''
as $$
declare
  notification_id uuid;
begin
  insert into public.notifications (tenant_id, recipient_id, recipient_type, template_key, channel, reservation_id, access_code_id)
  values (tenant, guest, 'guest', template, 'email', reservation, access_code)
  returning id into notification_id;
  perform private.send_notification_job(notification_id, tenant);
  return notification_id;
end
$$;
revoke all on function private.enqueue_notification(uuid, text, uuid, uuid, uuid) from public;

create or replace function private.notify_reservation_status()
returns trigger
language plpgsql security definer
set search_path = ''
as $$
begin
  perform private.enqueue_notification(new.tenant_id,
    case new.status when 'checked_in' then 'checkin_reminder'
                    when 'checked_out' then 'checkout_summary'
                    else 'reservation_cancelled' end,
    new.guest_id, new.id);
  return null;
end
$$;

create trigger notify_reservation_status after update of status on public.reservations
  for each row when (new.status in ('checked_in', 'checked_out', 'cancelled') and old.status is distinct from new.status)
  execute function private.notify_reservation_status();

create or replace function private.notify_access_code_created()
returns trigger
language plpgsql security definer
set search_path = ''
as $$
begin
  perform private.enqueue_notification(new.tenant_id, 'access_code_delivery', r.guest_id, new.reservation_id, new.id)
  from public.reservations r
  where r.tenant_id = new.tenant_id and r.id = new.reservation_id;
  return null;
end
$$;

create trigger notify_access_code_created after insert on public.access_codes
  for each row execute function private.notify_access_code_created();

-- For operators in the dashboard's SQL editor: a failed notification goes back to
-- pending with a new job. Returns false when it is not failed.
create or replace function private.retry_notification(notification_id uuid)
returns boolean
language plpgsql
set search_path = ''
as $$
declare
  tenant uuid;
begin
  update public.notifications n
  set status = 'pending', status_reason = null, attempts = 0
  where n.id = notification_id and n.status = 'failed'
  returning n.tenant_id into tenant;
  if tenant is null then
    return false;
  end if;
  perform private.send_notification_job(notification_id, tenant);
  return true;
end
$$;
revoke all on function private.retry_notification(uuid) from public;

alter table public.notifications enable row level security;
alter table public.notification_preferences enable row level security;
revoke all on public.notifications, public.notification_preferences from anon;
revoke insert, update, delete on public.notifications from authenticated;

create policy "members read notifications" on public.notifications
  for select to authenticated
  using (tenant_id = (select private.request_tenant_id()) and (select private.request_is_member()));

create policy "members read notification preferences" on public.notification_preferences
  for select to authenticated
  using (tenant_id = (select private.request_tenant_id()) and (select private.request_is_member()));
create policy "managers create notification preferences" on public.notification_preferences
  for insert to authenticated
  with check (tenant_id = (select private.request_tenant_id()) and (select private.request_is_manager()));
create policy "managers update notification preferences" on public.notification_preferences
  for update to authenticated
  using (tenant_id = (select private.request_tenant_id()) and (select private.request_is_manager()))
  with check (tenant_id = (select private.request_tenant_id()) and (select private.request_is_manager()));
create policy "managers delete notification preferences" on public.notification_preferences
  for delete to authenticated
  using (tenant_id = (select private.request_tenant_id()) and (select private.request_is_manager()));

-- The worker reads the job's tenant only and writes nothing but delivery outcomes.
grant select on public.notifications, public.notification_preferences to background_worker;
grant update (subject, body, status, status_reason, attempts, recipient_address, provider_message_id, sent_at)
  on public.notifications to background_worker;
create policy "background jobs read the job's notifications" on public.notifications
  for select to background_worker using (tenant_id = (select private.request_tenant_id()));
create policy "background jobs record deliveries" on public.notifications
  for update to background_worker
  using (tenant_id = (select private.request_tenant_id()))
  with check (tenant_id = (select private.request_tenant_id()));
create policy "background jobs read the job's preferences" on public.notification_preferences
  for select to background_worker using (tenant_id = (select private.request_tenant_id()));
