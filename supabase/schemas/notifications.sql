-- Transactional notifications. A domain change (a check-in, a check-out, a cancellation, a
-- new door code) leaves one message on the pgmq queue `notification_events`, in the
-- change's own transaction, so a rolled-back change leaves no event and a committed one
-- always leaves its event. The notifications worker expands the events: who each reaches
-- is decided then, set-based for a batch of events, and the notifications and their jobs
-- on the queue `notifications` are written with the events' deletion in one transaction.
-- The worker then claims the jobs, renders and delivers, and settles each claim in one call.
--
-- An event reaches one notification per (recipient, channel) it should reach:
-- - a guest event: email to the guest, always; SMS to the guest where the tenant opted in
--   to that template by SMS (a stored enabled = true) and the guest has a phone number;
-- - a check-in also reaches the tenant's staff (`check_in_alerts`): in_app to each, and
--   push to each who has subscribed a browser in the tenant (push.sql); the in-app alerts
--   land in the inboxes (inbox.sql) as the event is expanded;
-- - every night, owners and admins get one `nightly_summary` email per tenant
--   (private.enqueue_nightly_summaries, one pg_cron job for all tenants);
-- - a notification that ends failed leaves a `system` notification (`delivery_failed`,
--   no human recipient of its own) that lands in the inboxes of the tenant's owners and
--   admins; so do a webhook subscription the worker disabled (`webhook_disabled`,
--   webhook-delivery.sql) and a calendar import that keeps failing
--   (`calendar_import_failing`, calendar-imports.sql).
-- Expansion decides who could be reached; delivery still checks the tenant's preference
-- for (templateKey, channel): a stored enabled = false skips, no row means enabled.
-- docs/notifications.md and docs/notifications-channels.md describe the whole.

-- ---------------------------------------------------------------- the worker's share of the domain

-- Background jobs switch to background_worker and set app.tenant_id from the job, so they
-- read one tenant's rows and no other's. The workers read the job's tenant and its rows,
-- and who is in the tenant (an in_app notification reaches a member only while they are
-- one; a system notice reaches the owners and admins).
grant select on public.tenants, public.properties, public.room_types, public.units, public.unit_blocks, public.rate_plans,
  public.rate_plan_days, public.guests, public.reservations, public.payments, public.payment_links, public.tasks, public.access_codes
  to background_worker;

create policy "background jobs read the job's tenant" on public.tenants
  for select to background_worker using (id = (select private.request_tenant_id()));
create policy "background jobs read the job's properties" on public.properties
  for select to background_worker using (tenant_id = (select private.request_tenant_id()));
create policy "background jobs read the job's room types" on public.room_types
  for select to background_worker using (tenant_id = (select private.request_tenant_id()));
create policy "background jobs read the job's unit blocks" on public.unit_blocks
  for select to background_worker using (tenant_id = (select private.request_tenant_id()));
create policy "background jobs read the job's units" on public.units
  for select to background_worker using (tenant_id = (select private.request_tenant_id()));
create policy "background jobs read the job's rate plans" on public.rate_plans
  for select to background_worker using (tenant_id = (select private.request_tenant_id()));
create policy "background jobs read the job's rate plan days" on public.rate_plan_days
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

grant select on public.tenant_memberships to background_worker;
create policy "background jobs read the job's members" on public.tenant_memberships
  for select to background_worker using (tenant_id = (select private.request_tenant_id()));

-- ---------------------------------------------------------------- notifications

create table public.notifications (
  tenant_id uuid not null default private.request_tenant_id()
    constraint notifications_tenant_id_fkey references public.tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  -- The guest or user it is for; null for a system-audience notification.
  recipient_id uuid,
  recipient_type text not null
    constraint notifications_recipient_type_check check (recipient_type in ('user', 'guest', 'admin', 'system')),
  template_key text not null
    constraint notifications_template_key_check check (template_key in (
      'checkin_reminder', 'checkout_summary', 'reservation_cancelled', 'access_code_delivery',
      'check_in_alerts', 'nightly_summary', 'delivery_failed', 'webhook_disabled', 'calendar_import_failing')),
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
  -- What the provider last said of the message after it accepted it, beside the status the
  -- contract guarantees (which stays `sent`; `sent` means the provider took the message):
  -- delivered, deferred (a temporary refusal the provider retries), bounced, dropped
  -- (refused before any attempt), spam_report (the recipient reported it) for email;
  -- delivered, undelivered, failed for SMS. Null until a report arrives. Opens and clicks
  -- are events only (delivery-reports.sql).
  delivery_state text
    constraint notifications_delivery_state_check
      check (delivery_state in ('delivered', 'deferred', 'bounced', 'dropped', 'spam_report', 'undelivered', 'failed')),
  delivery_state_at timestamptz,
  -- The provider's words for it (an SMTP answer, a drop reason) and its code (an enhanced
  -- SMTP status like 5.1.1, the SMS provider's error code).
  delivery_reason text constraint notifications_delivery_reason_check check (length(delivery_reason) <= 2000),
  delivery_code text constraint notifications_delivery_code_check check (length(delivery_code) <= 100),
  -- What the notification says that no row it refers to holds: the nightly summary's figures,
  -- the failed notification a system notice is about. Fixed when it is created.
  context jsonb
    constraint notifications_context_check check (context is null or jsonb_typeof(context) = 'object'),
  -- Each notification goes out once, whatever stops a run (the Edge Runtime kills a worker
  -- past its limits, a deploy replaces it, a provider's answer never comes). A send is
  -- recorded as under way before it leaves: loading a claim marks each pending
  -- notification it will send through a provider (email, SMS, push) with the instant its
  -- send starts, and counts the attempt. The mark stays until the worker's settlement
  -- records the outcome. A provider's report names the notification and proves the
  -- provider took the message: it records the message id, and the worker settles the
  -- notification as sent when its job comes back. A notification found marked when its
  -- job comes back has an outcome nobody recorded: it is not sent again while its provider
  -- may still report on it (the worker's unconfirmed wait); once that wait has passed with
  -- no report, it is sent again, except a door code's message, which an operator decides
  -- on (a guest with two codes is worse than one told to ask).
  send_started_at timestamptz,
  constraint notifications_pkey primary key (tenant_id, id),
  constraint notifications_tenant_id_reservation_id_fkey foreign key (tenant_id, reservation_id)
    references public.reservations (tenant_id, id) on delete set null (reservation_id),
  constraint notifications_tenant_id_access_code_id_fkey foreign key (tenant_id, access_code_id)
    references public.access_codes (tenant_id, id) on delete set null (access_code_id),
  constraint notifications_sent_at_exactly_when_sent check ((status = 'sent') = (sent_at is not null)),
  constraint notifications_recipient_matches_type check ((recipient_type = 'system') = (recipient_id is null)),
  constraint notifications_delivery_state_only_when_sent check (delivery_state is null or status = 'sent'),
  constraint notifications_delivery_state_at_with_state check ((delivery_state is null) = (delivery_state_at is null)),
  constraint notifications_send_started_only_while_pending check (send_started_at is null or status = 'pending')
);

create index notifications_tenant_created_idx on public.notifications (tenant_id, created_at desc, id desc);
create index notifications_tenant_status_idx on public.notifications (tenant_id, status) where status in ('pending', 'failed');
create index notifications_tenant_reservation_idx on public.notifications (tenant_id, reservation_id)
  where reservation_id is not null;
create index notifications_tenant_access_code_idx on public.notifications (tenant_id, access_code_id)
  where access_code_id is not null;
-- The list's filter by delivery state, and the operators' view of the last day's failures.
create index notifications_tenant_delivery_state_idx on public.notifications (tenant_id, delivery_state, delivery_state_at desc)
  where delivery_state is not null;
-- A user's notifications in a tenant, for the inbox's membership check and a member's removal.
create index notifications_tenant_recipient_idx on public.notifications (tenant_id, recipient_id, created_at desc)
  where recipient_type in ('user', 'admin');

comment on column public.notifications.delivery_state is
  'What the provider last reported of the message after accepting it; null until it reports. Written only by private.record_delivery_events.';
comment on column public.notifications.send_started_at is
  'When its current send through a provider started, while the outcome is not recorded; null otherwise. '
  'Written by the notifications worker only (private.load_notification_claim, private.settle_notification_claim).';

-- One row per (template, channel) and tenant; no row means enabled.
create table public.notification_preferences (
  tenant_id uuid not null default private.request_tenant_id()
    constraint notification_preferences_tenant_id_fkey references public.tenants (id) on delete cascade,
  -- The event templates and the names the operator settings screen uses.
  template_key text not null constraint notification_preferences_template_key_check check (template_key in (
    'checkin_reminder', 'checkout_summary', 'reservation_cancelled', 'access_code_delivery',
    'check_in_alerts', 'nightly_summary', 'marketing_emails', 'delivery_failed', 'webhook_disabled',
    'calendar_import_failing')),
  channel text not null
    constraint notification_preferences_channel_check check (channel in ('email', 'sms', 'push', 'in_app')),
  enabled boolean not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint notification_preferences_pkey primary key (tenant_id, template_key, channel)
);

-- pending -> sent | failed | skipped. An operator retries a failed notification by
-- setting it pending again (private.retry_notification); nothing else moves back. A sent
-- notification takes only the delivery columns its provider's reports fill.
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
  -- notification must let go of too. The delivery columns are what the provider reports
  -- after the notification was sent; column grants leave them to the recording function.
  if old.status = 'sent' and pg_trigger_depth() = 1
     and (pg_catalog.to_jsonb(new) - array['delivery_state', 'delivery_state_at', 'delivery_reason', 'delivery_code'])
         is distinct from (pg_catalog.to_jsonb(old) - array['delivery_state', 'delivery_state_at', 'delivery_reason', 'delivery_code']) then
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
grant update (subject, body, status, status_reason, attempts, recipient_address, provider_message_id, sent_at,
              send_started_at)
  on public.notifications to background_worker;
create policy "background jobs read the job's notifications" on public.notifications
  for select to background_worker using (tenant_id = (select private.request_tenant_id()));
create policy "background jobs record deliveries" on public.notifications
  for update to background_worker
  using (tenant_id = (select private.request_tenant_id()))
  with check (tenant_id = (select private.request_tenant_id()));
create policy "background jobs read the job's preferences" on public.notification_preferences
  for select to background_worker using (tenant_id = (select private.request_tenant_id()));

-- ---------------------------------------------------------------- not in a schema diff
-- A schema diff writes none of what follows: pgmq's queues are rows of pgmq.meta with
-- tables pgmq makes. A migration that changes them says so by hand (docs/architecture.md,
-- Migrations). They come first here because the functions and views below use them.

do $$
begin
  if not exists (select 1 from pgmq.list_queues() q where q.queue_name = 'notifications') then
    perform pgmq.create('notifications');
  end if;
end
$$;
do $$
begin
  if not exists (select 1 from pgmq.list_queues() q where q.queue_name = 'notification_events') then
    perform pgmq.create('notification_events');
  end if;
end
$$;

-- Every job is sent through pgmq's base forms, pgmq.send(queue, message, headers, visible
-- at) and pgmq.send_batch(queue, messages, headers, visible at). pgmq's shorter forms,
-- pgmq.send(queue, message) among them, are SQL functions that call these; a SQL function
-- called from PL/pgSQL has its body parsed and planned again on every call. The base
-- forms are PL/pgSQL functions in every pgmq from 1.5.0 on (hosted Supabase ships 1.5.1;
-- the local stack pins 1.11.0). pgmq 1.4.4, which older hosted projects may still have,
-- has neither: there `alter extension pgmq update` comes first, and this says so rather
-- than leaving every check-in to fail.
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
do $$
begin
  if pg_catalog.to_regprocedure('pgmq.send_batch(text, jsonb[], jsonb[], timestamp with time zone)') is null then
    raise exception 'pgmq % has no pgmq.send_batch(text, jsonb[], jsonb[], timestamptz); it came with pgmq 1.5.0',
      (select e.extversion from pg_catalog.pg_extension e where e.extname = 'pgmq')
      using hint = 'Run: alter extension pgmq update;';
  end if;
end
$$;

-- ---------------------------------------------------------------- jobs

-- The job the notifications worker reads is built in one place, so a new notification
-- and an operator's retry cannot drift apart in what they send.
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

-- One job per notification, sent together: visible at once, no headers.
create or replace function private.send_notification_jobs(notification_ids uuid[], tenant uuid)
returns void
language plpgsql
set search_path = ''
as $$
begin
  if cardinality(notification_ids) > 0 then
    perform pgmq.send_batch('notifications',
      array(select jsonb_build_object('notificationId', i, 'tenantId', tenant) from unnest(notification_ids) as i),
      null::jsonb[], clock_timestamp());
  end if;
end
$$;
revoke all on function private.send_notification_jobs(uuid[], uuid) from public;

-- One guest email and its job, for operators who enqueue one email themselves; events go
-- through the expansion below. Runs as owner: members cannot write notifications or the
-- queue.
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

-- ---------------------------------------------------------------- events

-- The event's message, built in one place for both triggers, on its queue through
-- pgmq.send's base form.
create or replace function private.enqueue_notification_event(tenant uuid, template text, reservation uuid, access_code uuid)
returns void
language plpgsql
set search_path = ''
as $$
begin
  perform pgmq.send('notification_events',
    jsonb_build_object('tenantId', tenant, 'templateKey', template, 'reservationId', reservation, 'accessCodeId', access_code),
    null::jsonb, clock_timestamp());
end
$$;
revoke all on function private.enqueue_notification_event(uuid, text, uuid, uuid) from public;

-- The triggers run as owner: members cannot write the queue, yet every change they make
-- that guests must hear about has to leave its event behind.
create or replace function private.notify_reservation_status()
returns trigger
language plpgsql security definer
set search_path = ''
as $$
begin
  perform private.enqueue_notification_event(new.tenant_id,
    case new.status when 'checked_in' then 'checkin_reminder'
                    when 'checked_out' then 'checkout_summary'
                    else 'reservation_cancelled' end,
    new.id, null);
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
  perform private.enqueue_notification_event(new.tenant_id, 'access_code_delivery', new.reservation_id, new.id);
  return null;
end
$$;

create trigger notify_access_code_created after insert on public.access_codes
  for each row execute function private.notify_access_code_created();

-- ---------------------------------------------------------------- expansion

-- A check-in's in-app alerts land in its staff's inboxes when its event is expanded,
-- instead of each becoming a job: the alert says the same to every member of the front
-- desk, and landing in the inbox is its whole delivery. The worker takes the events with
-- what their alerts say (private.take_notification_events), renders each alert once, and
-- hands the events back with their alerts (private.expand_taken_notification_events): the
-- alerts' notifications are written as sent, with their inbox rows, in the statement that
-- writes the event's other notifications. Both run in one transaction, so a worker that
-- dies between them leaves the events on their queue and nothing made.
--
-- An event given no alert reaches its staff through a job each: an expansion in SQL alone
-- (private.expand_notification_events), a tenant that opted out of in-app check-in alerts
-- (the job skips it with the reason), an alert the worker could not render, or one the
-- tables refuse.

-- Up to `max_events` events off their queue (hidden for 60 s), each as its message id and
-- the event, or a null event for a message that is not one this project sends; with
-- `alerts`, for a check-in whose tenant has front-desk staff who take in-app alerts, what
-- the alert says (src/notifications/staff-text.ts, CheckInAlertData without its locale).
-- That is read as a job's notification is: as background_worker in the event's tenant, so
-- RLS applies to every read (docs/contract.md, Delivery processing); the caller's role is
-- back when it returns. Takes nothing off the queue: the caller's transaction hands the
-- events to private.expand_taken_notification_events. Each tenant's alerts are appended to
-- an array (in place: PL/pgSQL appends to an array variable without copying it) and read
-- out of it once, joined to the events by message id, in the order the events were taken;
-- merging them into one jsonb object as it went would copy every alert gathered before at
-- each tenant. One plan per connection for the read of each tenant's check-ins, reaching
-- every row by its key whatever the statistics said when it was made (as the claim's load
-- and settlement below).
create or replace function private.take_notification_events(max_events integer, alerts boolean)
returns table (msg_id bigint, event jsonb, check_in_alert jsonb)
language plpgsql
set search_path = ''
set plan_cache_mode = force_generic_plan
set enable_seqscan = off
as $$
declare
  uuid_pattern constant text := '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
  taken record;
  ids bigint[] := '{}';
  events jsonb[] := '{}';
  -- The check-ins among them, column by column: message, tenant, stay, when.
  check_ins bigint[] := '{}';
  check_in_tenants uuid[] := '{}';
  check_in_stays uuid[] := '{}';
  check_in_times timestamptz[] := '{}';
  caller_role text := current_setting('role');
  tenant uuid;
  -- Each tenant's alerts, one object {msgId: alert} a tenant, merged once at the end.
  said jsonb[] := '{}';
begin
  for taken in
    select q.msg_id, q.message as m, q.enqueued_at
    from pgmq.read('notification_events', 60, max_events) q
  loop
    ids := ids || taken.msg_id;
    if jsonb_typeof(taken.m) = 'object'
       and coalesce(taken.m ->> 'tenantId' ~ uuid_pattern, false)
       and coalesce(taken.m ->> 'reservationId' ~ uuid_pattern, false)
       and coalesce(taken.m ->> 'accessCodeId' ~ uuid_pattern, jsonb_typeof(taken.m -> 'accessCodeId') is distinct from 'string')
       and coalesce(taken.m ->> 'templateKey' in ('checkin_reminder', 'checkout_summary', 'reservation_cancelled', 'access_code_delivery'), false)
    then
      events := events || jsonb_build_object(
        'tenantId', taken.m -> 'tenantId', 'templateKey', taken.m -> 'templateKey', 'reservationId', taken.m -> 'reservationId',
        'accessCodeId', taken.m -> 'accessCodeId', 'occurredAt', taken.enqueued_at);
      if alerts and taken.m ->> 'templateKey' = 'checkin_reminder' then
        check_ins := check_ins || taken.msg_id;
        check_in_tenants := check_in_tenants || (taken.m ->> 'tenantId')::uuid;
        check_in_stays := check_in_stays || (taken.m ->> 'reservationId')::uuid;
        check_in_times := check_in_times || taken.enqueued_at;
      end if;
    else
      events := events || null::jsonb;
    end if;
  end loop;

  if cardinality(check_ins) > 0 then
    perform set_config('role', 'background_worker', true);
    for tenant in select distinct t from unnest(check_in_tenants) as t loop
      perform set_config('app.tenant_id', tenant::text, true);
      said := array_append(said, (
        select jsonb_object_agg(c.msg_id::text, jsonb_build_object(
                 'guest', jsonb_build_object('firstName', g.first_name, 'lastName', g.last_name),
                 'property', jsonb_build_object('name', p.name, 'timezone', p.timezone),
                 'unit', case when u.id is not null then jsonb_build_object('name', u.name) end,
                 'reservation', jsonb_build_object(
                   'id', r.id, 'confirmationCode', r.confirmation_code, 'checkIn', r.check_in, 'checkOut', r.check_out,
                   'adults', r.adults, 'children', r.children, 'balance', r.balance, 'currency', r.currency),
                 'checkedInAt', to_char(coalesce(r.checked_in_at, c.occurred_at) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')))
        from unnest(check_ins, check_in_tenants, check_in_stays, check_in_times) as c (msg_id, tenant_id, reservation_id, occurred_at)
        join public.reservations r on r.tenant_id = tenant and r.id = c.reservation_id
        join public.guests g on g.tenant_id = r.tenant_id and g.id = r.guest_id
        join public.properties p on p.tenant_id = r.tenant_id and p.id = r.property_id
        left join public.units u on u.tenant_id = r.tenant_id and u.id = r.unit_id
        where c.tenant_id = tenant
          and exists (select from public.tenant_memberships m where m.tenant_id = tenant and m.role = 'staff')
          and not exists (select from public.notification_preferences np
                          where np.tenant_id = tenant and np.template_key = 'check_in_alerts' and np.channel = 'in_app'
                            and not np.enabled)));
    end loop;
    perform set_config('role', caller_role, true);
  end if;

  return query
    select t.msg_id, t.event, alert.value
    from unnest(ids, events) with ordinality as t (msg_id, event, ord)
    left join (select a.key::bigint as msg_id, a.value
               from unnest(said) as piece (alerts) cross join lateral jsonb_each(piece.alerts) as a) as alert
      on alert.msg_id = t.msg_id
    order by t.ord;
end
$$;
revoke all on function private.take_notification_events(integer, boolean) from public;

-- The notifications of a batch of events, in one statement for the whole batch: per event
-- {tenantId, templateKey, reservationId, accessCodeId, occurredAt} and, for a check-in
-- whose alert was rendered, alert {title, body, url}. Each reaches its reservation's guest
-- by email always (the worker applies the tenant's preference), by SMS where the tenant
-- opted in to the template by SMS and the guest has a number; a check-in also reaches the
-- tenant's staff in-app, and by Web Push those who subscribed a browser. An event whose
-- reservation or access code is gone reaches nobody. A notification of an alert is written
-- sent with its inbox row; every other one pending, with its job. A notification's
-- created_at (and, but for an alert's, its first updated_at) is its event's enqueue time,
-- the change's own `now()`. Returns the events that reached someone, the notifications
-- made, and how many of them were written sent.
create function private.fan_out_notification_events(events jsonb)
returns table (events_reached integer, notifications integer, sent integer)
language plpgsql security definer
set search_path = ''
as $$
declare
  jobs jsonb[];
begin
  with event as (
    select (x.e ->> 'tenantId')::uuid as tenant_id, x.e ->> 'templateKey' as template_key,
           (x.e ->> 'reservationId')::uuid as reservation_id, (x.e ->> 'accessCodeId')::uuid as access_code_id,
           (x.e ->> 'occurredAt')::timestamptz as occurred_at, x.e -> 'alert' as alert, x.ord
    from jsonb_array_elements(events) with ordinality as x (e, ord)
  ), stay as (
    select e.*, r.guest_id
    from event e
    join public.reservations r on r.tenant_id = e.tenant_id and r.id = e.reservation_id
    where e.access_code_id is null
       or exists (select from public.access_codes a where a.tenant_id = e.tenant_id and a.id = e.access_code_id)
  ), reached (id, ord, tenant_id, recipient_id, recipient_type, template_key, channel, reservation_id, access_code_id,
              occurred_at, alert) as (
    -- The ids are made here, so that an alert's inbox rows name their notifications: a
    -- query with a volatile function is computed once however often it is read.
    select gen_random_uuid(), s.ord, s.tenant_id, s.guest_id, 'guest', s.template_key, 'email', s.reservation_id,
           s.access_code_id, s.occurred_at, null::jsonb
    from stay s
    union all
    select gen_random_uuid(), s.ord, s.tenant_id, s.guest_id, 'guest', s.template_key, 'sms', s.reservation_id,
           s.access_code_id, s.occurred_at, null
    from stay s
    where exists (select from public.notification_preferences p
                  where p.tenant_id = s.tenant_id and p.template_key = s.template_key and p.channel = 'sms' and p.enabled)
      and exists (select from public.guests g where g.tenant_id = s.tenant_id and g.id = s.guest_id and g.phone is not null)
    union all
    -- The front desk; owners and admins get the nightly summary instead.
    select gen_random_uuid(), s.ord, s.tenant_id, m.user_id, 'user', 'check_in_alerts', c.channel, s.reservation_id,
           s.access_code_id, s.occurred_at, case when c.channel = 'in_app' then s.alert end
    from stay s
    join public.tenant_memberships m on m.tenant_id = s.tenant_id and m.role = 'staff'
    cross join (values ('in_app'), ('push')) as c (channel)
    where s.template_key = 'checkin_reminder'
      and (c.channel = 'in_app'
           or exists (select from public.push_subscriptions ps where ps.tenant_id = s.tenant_id and ps.user_id = m.user_id))
  ), inserted as (
    insert into public.notifications
      (tenant_id, id, recipient_id, recipient_type, template_key, channel, reservation_id, access_code_id,
       status, subject, body, attempts, sent_at, created_at, updated_at)
    select r.tenant_id, r.id, r.recipient_id, r.recipient_type, r.template_key, r.channel, r.reservation_id, r.access_code_id,
           case when r.alert is null then 'pending' else 'sent' end, r.alert ->> 'title', coalesce(r.alert ->> 'body', ''),
           case when r.alert is null then 0 else 1 end, case when r.alert is not null then now() end,
           r.occurred_at, case when r.alert is null then r.occurred_at else now() end
    from reached r
    order by r.ord
    returning id, tenant_id, status
  ), inboxed as (
    insert into public.inbox_messages (tenant_id, notification_id, user_id, template_key, title, body, url)
    select r.tenant_id, r.id, r.recipient_id, 'check_in_alerts', r.alert ->> 'title', r.alert ->> 'body', r.alert ->> 'url'
    from reached r
    where r.alert is not null
  )
  select (select count(*) from stay)::integer,
         (select count(*) from inserted)::integer,
         (select count(*) from inserted i where i.status = 'sent')::integer,
         array(select jsonb_build_object('notificationId', i.id, 'tenantId', i.tenant_id) from inserted i where i.status = 'pending')
  into events_reached, notifications, sent, jobs;
  if cardinality(jobs) > 0 then
    perform pgmq.send_batch('notifications', jobs, null::jsonb[], clock_timestamp());
  end if;
  return next;
end
$$;
revoke all on function private.fan_out_notification_events(jsonb) from public;

-- The events a caller took with private.take_notification_events, in its transaction:
-- [{msgId, event}], each event as taken, with an alert {title, body, url} added to a
-- check-in's when the caller rendered it; a null event is a message that is no event of
-- this project's. Made into notifications and deleted; the malformed archived (kept in
-- pgmq.a_notification_events for an operator) with a warning. Should the batch's fan-out
-- fail (a constraint, a trigger refusing a notification), each event is made alone, then
-- without its alert (its staff get jobs instead), and one that still fails is archived
-- with a warning naming the error, so that no event holds back the ones behind it.
-- Returns how many events were expanded, how many dropped (reaching nobody or archived),
-- and how many notifications were sent on the spot.
create or replace function private.expand_taken_notification_events(taken jsonb)
returns table (expanded integer, dropped integer, sent integer)
language plpgsql security definer
set search_path = ''
as $$
declare
  finished bigint[];
  malformed bigint[];
  failed bigint[] := '{}';
  events jsonb;
  one jsonb;
  made record;
begin
  select coalesce(array_agg((t ->> 'msgId')::bigint order by o) filter (where jsonb_typeof(t -> 'event') = 'object'), '{}'),
         coalesce(array_agg((t ->> 'msgId')::bigint order by o) filter (where jsonb_typeof(t -> 'event') is distinct from 'object'), '{}'),
         coalesce(jsonb_agg(t -> 'event' order by o) filter (where jsonb_typeof(t -> 'event') = 'object'), '[]')
  into finished, malformed, events
  from jsonb_array_elements(taken) with ordinality as x (t, o);

  expanded := 0;
  sent := 0;
  if cardinality(finished) > 0 then
    begin
      select f.events_reached, f.sent into expanded, sent from private.fan_out_notification_events(events) f;
    exception when others then
      for i in 1 .. cardinality(finished) loop
        one := events -> (i - 1);
        begin
          select f.events_reached, f.sent into made from private.fan_out_notification_events(jsonb_build_array(one)) f;
        exception when others then
          if not one ? 'alert' then
            raise warning 'notification event % could not be made into notifications (%: %); archived',
              finished[i], sqlstate, sqlerrm;
            failed := failed || finished[i];
            continue;
          end if;
          raise warning 'the check-in alert of notification event % could not be written (%: %); its staff get jobs instead',
            finished[i], sqlstate, sqlerrm;
          begin
            select f.events_reached, f.sent into made from private.fan_out_notification_events(jsonb_build_array(one - 'alert')) f;
          exception when others then
            raise warning 'notification event % could not be made into notifications (%: %); archived',
              finished[i], sqlstate, sqlerrm;
            failed := failed || finished[i];
            continue;
          end;
        end;
        expanded := expanded + made.events_reached;
        sent := sent + made.sent;
      end loop;
      finished := array(select f from unnest(finished) f where f <> all (failed));
    end;
    perform pgmq.delete('notification_events', finished);
  end if;
  if cardinality(malformed) > 0 then
    raise warning 'notification events % are not events this project sends; archived', malformed;
  end if;
  if cardinality(malformed || failed) > 0 then
    perform pgmq.archive('notification_events', malformed || failed);
  end if;
  dropped := cardinality(finished) - expanded + cardinality(malformed) + cardinality(failed);
  return next;
end
$$;
revoke all on function private.expand_taken_notification_events(jsonb) from public;

-- In SQL alone, as an operator or a test runs it: the events taken and expanded at once,
-- with no alert rendered, so a check-in's staff get a job each.
create or replace function private.expand_notification_events(max_events integer)
returns table (expanded integer, dropped integer)
language plpgsql security definer
set search_path = ''
as $$
begin
  return query
    select e.expanded, e.dropped
    from private.expand_taken_notification_events((
      select coalesce(jsonb_agg(jsonb_build_object('msgId', t.msg_id, 'event', t.event)), '[]')
      from private.take_notification_events(max_events, false) t)) e;
end
$$;
revoke all on function private.expand_notification_events(integer) from public;

-- ---------------------------------------------------------------- claims

-- The worker's two calls per claim, the load and the settlement, each one statement for
-- the whole claim: through a transaction pooler nothing is prepared, and postgres.js has
-- each statement with parameters described before it binds it, one round trip more that
-- also holds back every statement after it; a claim across many tenants would otherwise
-- wait on those. Both keep one plan per connection (plan_cache_mode), one that reaches
-- each row by its key (enable_seqscan off, for these functions only: every row they read
-- or write is reached by an index on its tenant and key or its message id, so a scan of a
-- whole table is never the better plan once the table holds more than a few pages). Left
-- to choose, Postgres planned the load's seven-table join afresh for nearly every call,
-- and when it kept a plan it kept the one the tables' statistics favoured when it was
-- made: on a notifications table that was small then, a scan of the whole table.

-- One tenant's notifications of a claim, read as background_worker in its context (the
-- caller sets it), so RLS decides what it reads, with every one the claim will send
-- marked: pending, by a provider's channel, not reported by its provider, and not marked
-- already, or marked longer ago than the unconfirmed wait (a door code's message
-- excepted). Each row says whether this call marked it (send_fresh), with its attempts
-- counted. Every column is what src/notifications/worker.ts interprets (LoadedRow there
-- names them all).
create function private.load_notification_claim(notification_ids uuid[], unconfirmed_wait_seconds integer)
returns table (
  id uuid, template_key text, channel text, status text, enabled boolean, recipient_id uuid, recipient_type text,
  recipient_address text, context jsonb, created_at timestamptz, attempts integer, send_started_at timestamptz,
  send_fresh boolean, provider_message_id text, reservation_id uuid, checked_in_at timestamptz,
  guest_id uuid, first_name text, last_name text, email text, phone text, locale text,
  email_undeliverable_at timestamptz, email_undeliverable_reason text,
  property_name text, timezone text, address_line1 text, city text, property_phone text, property_email text,
  check_in_time time, check_out_time time,
  unit_name text,
  confirmation_code text, check_in date, check_out date, adults integer, children integer, total_amount bigint,
  amount_paid bigint, balance bigint, currency text, cancellation_reason text,
  code text, valid_from timestamptz, valid_until timestamptz, code_status text,
  member_role text, manager_ids uuid[], push_subscriptions jsonb
)
language plpgsql
set search_path = ''
set plan_cache_mode = force_generic_plan
set enable_seqscan = off
as $$
declare
  marked uuid[];
begin
  with sending as (
    update public.notifications n
    set send_started_at = now(), attempts = n.attempts + 1
    from unnest(notification_ids) as wanted (id)
    where n.tenant_id = (select private.request_tenant_id()) and n.id = wanted.id
      and n.status = 'pending' and n.channel in ('email', 'sms', 'push') and n.provider_message_id is null
      and (n.send_started_at is null
           or (n.send_started_at < now() - make_interval(secs => unconfirmed_wait_seconds)
               and n.template_key <> 'access_code_delivery'))
    returning n.id
  )
  select coalesce(array_agg(sending.id), '{}') into marked from sending;

  return query
    select n.id, n.template_key, n.channel, n.status, np.enabled, n.recipient_id, n.recipient_type,
           n.recipient_address, n.context, n.created_at, n.attempts, n.send_started_at,
           n.id = any(marked), n.provider_message_id, r.id, r.checked_in_at,
           g.id, g.first_name, g.last_name, g.email, g.phone, g.locale,
           g.email_undeliverable_at, g.email_undeliverable_reason,
           p.name, p.timezone, p.address_line1, p.city, p.phone, p.email,
           p.check_in_time, p.check_out_time,
           u.name,
           r.confirmation_code, r.check_in, r.check_out, r.adults, r.children, r.total_amount,
           r.amount_paid, r.balance, r.currency, r.cancellation_reason,
           c.code, c.valid_from, c.valid_until, c.status,
           -- Whether a member it is for still is one; who a system notice reaches; a member's browsers.
           (select m.role::text from public.tenant_memberships m
            where m.tenant_id = n.tenant_id and m.user_id = n.recipient_id),
           case when n.recipient_type = 'system' then array(
             select m.user_id from public.tenant_memberships m
             where m.tenant_id = n.tenant_id and m.role in ('owner', 'admin') order by m.user_id) end,
           case when n.channel = 'push' then (
             select coalesce(jsonb_agg(jsonb_build_object('id', s.id, 'endpoint', s.endpoint, 'p256dh', s.p256dh, 'auth', s.auth)
                                       order by s.created_at, s.id), '[]'::jsonb)
             from public.push_subscriptions s where s.tenant_id = n.tenant_id and s.user_id = n.recipient_id) end
    from unnest(notification_ids) as wanted (id)
    join public.notifications n on n.tenant_id = (select private.request_tenant_id()) and n.id = wanted.id
    left join public.notification_preferences np
      on np.tenant_id = n.tenant_id and np.template_key = n.template_key and np.channel = n.channel
    left join public.reservations r on r.tenant_id = n.tenant_id and r.id = n.reservation_id
    left join public.guests g on g.tenant_id = r.tenant_id and g.id = r.guest_id
    left join public.properties p on p.tenant_id = r.tenant_id and p.id = r.property_id
    left join public.units u on u.tenant_id = r.tenant_id and u.id = r.unit_id
    left join public.access_codes c on c.tenant_id = n.tenant_id and c.id = n.access_code_id;
end
$$;
revoke all on function private.load_notification_claim(uuid[], integer) from public;
grant execute on function private.load_notification_claim(uuid[], integer) to background_worker;

-- The whole claim in one call, each tenant's part as background_worker in that tenant's
-- context; tenant_ids and notification_ids pair up by position: the notification at each
-- position is looked for in the tenant at the same position. Each row says which tenant it
-- was read in. The caller's role is back when it returns.
create function private.load_notification_claims(tenant_ids uuid[], notification_ids uuid[], unconfirmed_wait_seconds integer)
returns table (
  tenant_id uuid,
  id uuid, template_key text, channel text, status text, enabled boolean, recipient_id uuid, recipient_type text,
  recipient_address text, context jsonb, created_at timestamptz, attempts integer, send_started_at timestamptz,
  send_fresh boolean, provider_message_id text, reservation_id uuid, checked_in_at timestamptz,
  guest_id uuid, first_name text, last_name text, email text, phone text, locale text,
  email_undeliverable_at timestamptz, email_undeliverable_reason text,
  property_name text, timezone text, address_line1 text, city text, property_phone text, property_email text,
  check_in_time time, check_out_time time,
  unit_name text,
  confirmation_code text, check_in date, check_out date, adults integer, children integer, total_amount bigint,
  amount_paid bigint, balance bigint, currency text, cancellation_reason text,
  code text, valid_from timestamptz, valid_until timestamptz, code_status text,
  member_role text, manager_ids uuid[], push_subscriptions jsonb
)
language plpgsql
set search_path = ''
as $$
declare
  caller_role text := current_setting('role');
  tenant uuid;
begin
  if cardinality(tenant_ids) is distinct from cardinality(notification_ids) then
    raise exception 'a claim pairs each notification with its tenant: % tenants for % notifications',
      cardinality(tenant_ids), cardinality(notification_ids) using errcode = '22023';
  end if;
  if unconfirmed_wait_seconds is null or unconfirmed_wait_seconds < 0 then
    raise exception 'the unconfirmed wait must be a number of seconds from 0' using errcode = '22023';
  end if;
  perform set_config('role', 'background_worker', true);
  for tenant in select distinct t from unnest(tenant_ids) as t loop
    perform set_config('app.tenant_id', tenant::text, true);
    return query
      select tenant, l.*
      from private.load_notification_claim(array(
        select x.notification_id from unnest(tenant_ids, notification_ids) as x (tenant_id, notification_id)
        where x.tenant_id = tenant), unconfirmed_wait_seconds) l;
  end loop;
  perform set_config('role', caller_role, true);
end
$$;
revoke all on function private.load_notification_claims(uuid[], uuid[], integer) from public;

-- The claim's outcomes, as src/notifications/worker.ts builds them:
--   {finished: [msg_id], retried: [{msgId, delaySeconds}],
--    tenants: [{tenantId, changes: [...], inbox: [...], pushAccepted: [uuid], pushGone: [uuid]}]}
-- The queue is the caller's (the functions' login role), so its jobs are deleted and
-- postponed first; then the rest runs as background_worker, tenant by tenant in that
-- tenant's context, so RLS decides what each statement touches. Only the statements a
-- tenant's outcomes need are run: a claim's tenants mostly have no push subscription to
-- stamp or remove and often no inbox message. The request's tenant is read once per
-- statement, in a sub-select, not once per row. Invoker's rights: a security definer
-- function may not change the role.
--
-- Each change says whether its notification's send is still under way (send_started_at,
-- kept for an outcome nobody knows yet) or not (cleared). A notification a provider's
-- report has settled first, while its job was still out, is left as it is. Once every
-- tenant is done, the caller's role is back, and each notification that became sent takes
-- the delivery state its provider's reports already give it (reports that came while it
-- was pending).
create or replace function private.settle_notification_claim(claim jsonb)
returns void
language plpgsql
set search_path = ''
set plan_cache_mode = force_generic_plan
set enable_seqscan = off
as $$
declare
  caller_role text := current_setting('role');
  tenant record;
  sent_now uuid[];
  settled_sent jsonb := '[]';
  reported record;
begin
  perform pgmq.delete('notifications', array(select pgmq_id::bigint from jsonb_array_elements_text(claim -> 'finished') as f(pgmq_id)));
  if jsonb_array_length(coalesce(claim -> 'retried', '[]')) > 0 then
    perform pgmq.set_vt('notifications', r."msgId", r."delaySeconds")
    from jsonb_to_recordset(claim -> 'retried') as r("msgId" bigint, "delaySeconds" integer);
  end if;

  perform set_config('role', 'background_worker', true);
  -- Tenants in one order in every claim, so that two claims settling at once take the
  -- rows they share (a member's push subscriptions) in the same order, never in a cycle.
  for tenant in
    select * from jsonb_to_recordset(claim -> 'tenants')
      as t("tenantId" uuid, changes jsonb, inbox jsonb, "pushAccepted" jsonb, "pushGone" jsonb)
    order by t."tenantId"
  loop
    perform set_config('app.tenant_id', tenant."tenantId"::text, true);

    -- Once per notification and member, however often a job comes back; a member who left
    -- since the claim was loaded has no inbox here any more.
    if jsonb_array_length(coalesce(tenant.inbox, '[]')) > 0 then
      insert into public.inbox_messages (tenant_id, notification_id, user_id, template_key, title, body, url)
      select (select private.request_tenant_id()), m."notificationId", m."userId", m."templateKey", m.title, m.body, m.url
      from jsonb_to_recordset(tenant.inbox) as m(
        "notificationId" uuid, "userId" uuid, "templateKey" text, title text, body text, url text)
      where exists (select from public.tenant_memberships tm
                    where tm.tenant_id = (select private.request_tenant_id()) and tm.user_id = m."userId")
      on conflict on constraint inbox_messages_tenant_id_notification_id_user_id_key do nothing;
    end if;

    if jsonb_array_length(coalesce(tenant."pushAccepted", '[]')) > 0 then
      update public.push_subscriptions set last_accepted_at = now()
      where id in (select s::uuid from jsonb_array_elements_text(tenant."pushAccepted") as a(s));
    end if;
    if jsonb_array_length(coalesce(tenant."pushGone", '[]')) > 0 then
      delete from public.push_subscriptions
      where id in (select s::uuid from jsonb_array_elements_text(tenant."pushGone") as g(s));
    end if;

    -- Only a pending notification takes a change: it is marked sent only once. Columns a
    -- change leaves out keep their value; sent_at is set with `sent` and cleared otherwise.
    with changed as (
      update public.notifications n
      set status = c.status,
          status_reason = c.status_reason,
          subject = coalesce(c.subject, n.subject),
          body = coalesce(c.body, n.body),
          attempts = coalesce(c.attempts, n.attempts),
          recipient_address = coalesce(c.recipient_address, n.recipient_address),
          provider_message_id = coalesce(c.provider_message_id, n.provider_message_id),
          sent_at = case when c.status = 'sent' then now() end,
          send_started_at = case when c.status = 'pending' then c.send_started_at end
      from jsonb_to_recordset(coalesce(tenant.changes, '[]')) as c(
        id uuid, status text, status_reason text, subject text, body text, attempts integer,
        recipient_address text, provider_message_id text, send_started_at timestamptz)
      where n.id = c.id and n.status = 'pending'
      returning n.id, n.status
    )
    select coalesce(array_agg(changed.id) filter (where changed.status = 'sent'), '{}') into sent_now from changed;
    if cardinality(sent_now) > 0 then
      settled_sent := settled_sent || jsonb_build_object('tenantId', tenant."tenantId", 'ids', to_jsonb(sent_now));
    end if;
  end loop;
  perform set_config('role', caller_role, true);

  -- The delivery columns are the recording function's (column grants keep them from the
  -- worker's role): settled as the caller, for the notifications with a state-bearing report.
  for reported in
    select s."tenantId" as tenant_id, e.notification_id
    from jsonb_to_recordset(settled_sent) as s("tenantId" uuid, ids jsonb)
    cross join lateral jsonb_array_elements_text(s.ids) as i(id)
    join lateral (select distinct ev.notification_id from public.notification_events ev
                  where ev.tenant_id = s."tenantId" and ev.notification_id = i.id::uuid and ev.delivery_state is not null) e on true
  loop
    perform private.settle_delivery_state(reported.tenant_id, reported.notification_id);
  end loop;
end
$$;
revoke all on function private.settle_notification_claim(jsonb) from public;

-- ---------------------------------------------------------------- system notices

-- A notification that ended failed has nobody to tell but the tenant: a `system`
-- notification about it, delivered in_app to the owners' and admins' inboxes. A system
-- notice that fails itself tells nobody, so this cannot go round.
create or replace function private.notify_delivery_failed()
returns trigger
language plpgsql security definer
set search_path = ''
as $$
declare
  notice uuid;
begin
  insert into public.notifications (tenant_id, recipient_id, recipient_type, template_key, channel, reservation_id,
                                    access_code_id, context)
  values (new.tenant_id, null, 'system', 'delivery_failed', 'in_app', new.reservation_id, new.access_code_id,
          jsonb_build_object('failedNotificationId', new.id, 'templateKey', new.template_key, 'channel', new.channel,
                             'recipientType', new.recipient_type, 'recipientId', new.recipient_id,
                             'reason', coalesce(new.status_reason, 'no reason recorded')))
  returning id into notice;
  perform private.send_notification_jobs(array[notice], new.tenant_id);
  return null;
end
$$;
revoke all on function private.notify_delivery_failed() from public;

create trigger notify_delivery_failed after update of status on public.notifications
  for each row when (new.status = 'failed' and old.status is distinct from 'failed' and new.recipient_type <> 'system')
  execute function private.notify_delivery_failed();

-- ---------------------------------------------------------------- the nightly summary

-- One row per tenant and night summarised: the figures sent, and the proof that the night
-- was summarised, so a second run (or two at once) sends nothing more.
create table public.nightly_summaries (
  tenant_id uuid not null constraint nightly_summaries_tenant_id_fkey references public.tenants (id) on delete cascade,
  business_date date not null,
  figures jsonb not null constraint nightly_summaries_figures_check check (jsonb_typeof(figures) = 'object'),
  created_at timestamptz not null default now(),
  constraint nightly_summaries_pkey primary key (tenant_id, business_date)
);

alter table public.nightly_summaries enable row level security;
revoke all on public.nightly_summaries from anon, authenticated;
grant select on public.nightly_summaries to authenticated;
create policy "managers read nightly summaries" on public.nightly_summaries
  for select to authenticated
  using (tenant_id = (select private.request_tenant_id()) and (select private.request_is_manager()));

-- The local hour a night is summarised at, in each property's zone, and how long after
-- it a run still sends that night's summary (a scheduler that was down for an hour still
-- sends it; one down for a day does not send yesterday's the next afternoon).
-- PL/pgSQL, as every private helper with a fixed search_path is: a SQL function with a SET
-- clause is never inlined (supabase/tests/performance/helpers_keep_their_plans.test.sql).
create or replace function private.nightly_summary_hour() returns interval
language plpgsql immutable set search_path = '' as $$ begin return interval '23 hours'; end $$;
create or replace function private.nightly_summary_window() returns interval
language plpgsql immutable set search_path = '' as $$ begin return interval '12 hours'; end $$;

-- One property's night, as the nightly_summary template reads it: the day's arrivals and
-- departures (and how many of them happened), who is in house that night, the balances
-- still owed by guests in house or who left that day, and the open tasks (and how many are
-- past due by the end of the day).
create or replace function private.nightly_property_figures(tenant uuid, property uuid, night date)
returns jsonb
language plpgsql stable
set search_path = ''
as $$
begin
  return (select jsonb_build_object(
    'name', p.name, 'timezone', p.timezone, 'date', night,
    'arrivals', (select count(*) from public.reservations r where r.tenant_id = tenant and r.property_id = property
                   and r.check_in = night and r.status not in ('cancelled', 'no_show')),
    'arrivalsCheckedIn', (select count(*) from public.reservations r where r.tenant_id = tenant and r.property_id = property
                   and r.check_in = night and r.status in ('checked_in', 'checked_out')),
    'departures', (select count(*) from public.reservations r where r.tenant_id = tenant and r.property_id = property
                   and r.check_out = night and r.status not in ('cancelled', 'no_show')),
    'departuresCheckedOut', (select count(*) from public.reservations r where r.tenant_id = tenant
                   and r.property_id = property and r.check_out = night and r.status = 'checked_out'),
    'inHouse', (select count(*) from public.reservations r where r.tenant_id = tenant and r.property_id = property
                   and r.status = 'checked_in' and r.check_in <= night and r.check_out > night),
    'unpaid', coalesce((
      select jsonb_agg(jsonb_build_object('currency', u.currency, 'reservations', u.reservations, 'balance', u.balance)
                       order by u.currency)
      from (select r.currency, count(*) as reservations, sum(r.balance) as balance
            from public.reservations r
            where r.tenant_id = tenant and r.property_id = property and r.balance > 0
              and (r.status = 'checked_in' or (r.status = 'checked_out' and r.check_out = night))
            group by r.currency) as u), '[]'::jsonb),
    'openTasks', (select count(*) from public.tasks t where t.tenant_id = tenant and t.property_id = property
                   and t.status in ('open', 'in_progress')),
    'openTasksOverdue', (select count(*) from public.tasks t where t.tenant_id = tenant and t.property_id = property
                   and t.status in ('open', 'in_progress')
                   and t.due_at < ((night + 1)::timestamp at time zone p.timezone)))
  from public.properties p
  where p.tenant_id = tenant and p.id = property);
end
$$;
revoke all on function private.nightly_property_figures(uuid, uuid, date) from public;

-- Run by one pg_cron job for every tenant. A tenant's night D is due once every active
-- property of it has reached the summary hour of D on its own clock (for a tenant in one
-- zone: at that hour), and stays due for the window after the last one did. A due night
-- not yet summarised is recorded and emailed to each owner and admin; a night already
-- recorded sends nothing, so running twice, or twice at once, sends one summary a night.
-- A tenant without an active property has no night to summarise.
-- `run_at` is for operators and tests: the moment to run as. Returns the summaries recorded.
create or replace function private.enqueue_nightly_summaries(run_at timestamptz default now())
returns integer
language plpgsql security definer
set search_path = ''
as $$
declare
  recorded integer;
  tenants uuid[];
  created uuid[];
  tenant uuid;
begin
  with nights as (
    select p.tenant_id, min(((run_at at time zone p.timezone) - private.nightly_summary_hour())::date) as night
    from public.properties p
    where p.status = 'active'
    group by p.tenant_id
  ), due as (
    select n.tenant_id, n.night
    from nights n
    join public.tenants t on t.id = n.tenant_id
    cross join lateral (
      select max((n.night + private.nightly_summary_hour()) at time zone p.timezone) as reached
      from public.properties p where p.tenant_id = n.tenant_id and p.status = 'active') as r
    where run_at < r.reached + private.nightly_summary_window()
      -- A night whose hour came before the tenant existed is nobody's to summarise.
      and t.created_at < r.reached
  ), summarised as (
    insert into public.nightly_summaries (tenant_id, business_date, figures)
    select d.tenant_id, d.night, jsonb_build_object(
      'tenantName', t.name, 'businessDate', d.night,
      'properties', coalesce((select jsonb_agg(private.nightly_property_figures(d.tenant_id, p.id, d.night)
                                               order by p.name, p.id)
                              from public.properties p where p.tenant_id = d.tenant_id and p.status = 'active'),
                             '[]'::jsonb))
    from due d
    join public.tenants t on t.id = d.tenant_id
    on conflict on constraint nightly_summaries_pkey do nothing
    returning tenant_id, business_date, figures
  ), emailed as (
    insert into public.notifications (tenant_id, recipient_id, recipient_type, template_key, channel, recipient_address, context)
    select s.tenant_id, m.user_id, 'admin', 'nightly_summary', 'email', u.email, s.figures
    from summarised s
    join public.tenant_memberships m on m.tenant_id = s.tenant_id and m.role in ('owner', 'admin')
    join auth.users u on u.id = m.user_id
    where u.email is not null
    returning tenant_id, id
  )
  select (select count(*) from summarised)::integer,
         coalesce((select array_agg(e.tenant_id order by e.tenant_id) from emailed e), '{}'),
         coalesce((select array_agg(e.id order by e.tenant_id) from emailed e), '{}')
  into recorded, tenants, created;
  for tenant in select distinct t from unnest(tenants) as t loop
    perform private.send_notification_jobs(
      array(select z.id from unnest(tenants, created) as z (tenant_id, id) where z.tenant_id = tenant), tenant);
  end loop;
  return recorded;
end
$$;
revoke all on function private.enqueue_nightly_summaries(timestamptz) from public;

-- ---------------------------------------------------------------- for operators

-- The dashboard's SQL editor runs as the owner; these read across tenants and are for it
-- alone (no request role may read them).

-- The notifications queue's health: how many jobs wait (and how many of them are visible
-- now), how old the oldest is, and how many were read more than once (a retry after a
-- provider's refusal, or a worker that died holding it); and the events still to be made
-- into notifications: how many wait, and the oldest's age (a worker that stopped shows
-- here first). From pgmq.metrics, whose queue_visible_length came with pgmq 1.5.0, like
-- the base forms of the sends.
create or replace view private.notification_queue_health as
select m.queue_length as depth,
       m.queue_visible_length as visible_now,
       m.oldest_msg_age_sec as oldest_message_age_seconds,
       m.newest_msg_age_sec as newest_message_age_seconds,
       (select count(*) from pgmq.q_notifications q where q.read_ct > 1) as read_more_than_once,
       (select coalesce(max(q.read_ct), 0) from pgmq.q_notifications q) as most_reads,
       m.total_messages as sent_since_created,
       m.scrape_time as measured_at,
       e.queue_length as events_waiting,
       e.oldest_msg_age_sec as oldest_event_age_seconds
from pgmq.metrics('notifications') m
cross join pgmq.metrics('notification_events') e;

-- The last day's notifications that did not reach their guest, per tenant: those the
-- worker gave up on (status failed) and those the provider reports bounced, dropped,
-- reported as spam, undelivered or failed. `reason` is the provider's (or the worker's)
-- account of it.
create or replace view private.notification_failures_last_day as
select n.tenant_id, t.name as tenant_name, n.id as notification_id, n.template_key, n.channel,
       n.recipient_address, n.status, n.delivery_state,
       coalesce(n.delivery_reason, n.status_reason) as reason, n.delivery_code as code,
       coalesce(n.delivery_state_at, n.updated_at) as at, n.reservation_id
from public.notifications n
join public.tenants t on t.id = n.tenant_id
where (n.status = 'failed' or n.delivery_state in ('bounced', 'dropped', 'spam_report', 'undelivered', 'failed'))
  and coalesce(n.delivery_state_at, n.updated_at) > now() - interval '1 day'
order by t.name, n.tenant_id, coalesce(n.delivery_state_at, n.updated_at) desc;

revoke all on private.notification_queue_health, private.notification_failures_last_day from public;

-- ---------------------------------------------------------------- not in a schema diff
-- A schema diff writes none of what follows: pg_cron's jobs are rows of cron.job. A
-- migration that changes them says so by hand (docs/architecture.md, Migrations).

-- The nightly summaries, every fifteen minutes, so a zone at a quarter or half hour is
-- summarised at its hour. A database without pg_cron applies this as a no-op.
do $$
begin
  if not exists (select 1 from pg_available_extensions where name = 'pg_cron') then
    raise notice 'pg_cron is missing: nightly summaries are not scheduled here';
    return;
  end if;
  create extension if not exists pg_cron;
  perform cron.unschedule(jobid) from cron.job where jobname = 'nightly-summaries';
  perform cron.schedule('nightly-summaries', '*/15 * * * *', 'select private.enqueue_nightly_summaries()');
end
$$;

-- On a hosted project, pg_cron calls the notifications worker every ten seconds through
-- pg_net, with the project URL and the service role key read from Vault, as Supabase
-- documents for scheduling edge functions. Create the two secrets once:
--   select vault.create_secret('https://<project-ref>.supabase.co', 'project_url');
--   select vault.create_secret('<service role key>', 'service_role_key');
-- Each run follows the queue: it takes jobs as they come until its budget is spent,
-- looking again a moment after finding the queue empty, instead of ending there, so a job
-- enqueued between two runs does not wait for the next one (src/db/queue-claims.ts; the
-- body's `follow`, src/http/worker-handler.ts). A database without pg_net or Vault (the
-- local cluster, where the stack runs the worker on the same cadence itself) leaves the
-- worker unscheduled.
do $$
begin
  if not exists (select 1 from pg_available_extensions where name = 'pg_net')
     or not exists (select 1 from pg_namespace where nspname = 'vault')
     or not exists (select 1 from pg_available_extensions where name = 'pg_cron') then
    raise notice 'pg_net, Vault or pg_cron is missing: the notifications worker is not scheduled here';
    return;
  end if;
  create extension if not exists pg_net;
  create extension if not exists pg_cron;
  perform cron.unschedule(jobid) from cron.job where jobname = 'notifications-worker';
  perform cron.schedule('notifications-worker', '10 seconds', $job$
    select net.http_post(
      url := (select decrypted_secret from vault.decrypted_secrets where name = 'project_url')
             || '/functions/v1/notifications-worker',
      headers := jsonb_build_object(
        'content-type', 'application/json',
        'authorization', 'Bearer ' || (select decrypted_secret from vault.decrypted_secrets where name = 'service_role_key')),
      body := '{"follow": true}'::jsonb,
      timeout_milliseconds := 55000)
  $job$);
end
$$;
