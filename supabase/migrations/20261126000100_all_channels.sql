-- Every channel delivers, and staff are recipients too. An event now creates one
-- notification per (recipient, channel) it should reach, each with its own job, in the
-- same transaction as the change:
-- - a guest event (check-in, check-out, cancellation, a new access code): email to the
--   guest, always; SMS to the guest where the tenant opted in to that template by SMS
--   (a stored enabled = true) and the guest has a phone number;
-- - a check-in also reaches the tenant's staff (`check_in_alerts`): in_app to each, and
--   push to each who has subscribed a browser in the tenant;
-- - every night, owners and admins get one `nightly_summary` email per tenant
--   (private.enqueue_nightly_summaries, one pg_cron job for all tenants);
-- - a notification that ends failed leaves a `system` notification (`delivery_failed`,
--   no human recipient of its own) that lands in the inboxes of the tenant's owners and admins.
-- Fan-out decides who could be reached; delivery still checks the tenant's preference for
-- (templateKey, channel): a stored enabled = false skips, no row means enabled.
-- docs/notifications-channels.md describes the whole.

-- ---------------------------------------------------------------- notifications

alter table public.notifications
  drop constraint notifications_template_key_check,
  add constraint notifications_template_key_check check (template_key in (
    'checkin_reminder', 'checkout_summary', 'reservation_cancelled', 'access_code_delivery',
    'check_in_alerts', 'nightly_summary', 'delivery_failed')),
  -- What the notification says that no row it refers to holds: the nightly summary's figures,
  -- the failed notification a system notice is about. Fixed when it is created.
  add column context jsonb
    constraint notifications_context_check check (context is null or jsonb_typeof(context) = 'object'),
  add constraint notifications_recipient_matches_type
    check ((recipient_type = 'system') = (recipient_id is null));

alter table public.notification_preferences
  drop constraint notification_preferences_template_key_check,
  add constraint notification_preferences_template_key_check check (template_key in (
    'checkin_reminder', 'checkout_summary', 'reservation_cancelled', 'access_code_delivery',
    'check_in_alerts', 'nightly_summary', 'marketing_emails', 'delivery_failed'));

-- A user's notifications in a tenant, for the inbox's membership check and a member's removal.
create index notifications_tenant_recipient_idx on public.notifications (tenant_id, recipient_id, created_at desc)
  where recipient_type in ('user', 'admin');

-- ---------------------------------------------------------------- push subscriptions

-- A browser (or installed web app) of a member that asked its push service for an endpoint
-- (the Push API's PushSubscription): where to post, and the keys that encrypt for it
-- (RFC 8291). A subscription belongs to the member in one tenant: the alerts of that tenant
-- go to it, and it goes when the membership does. One endpoint is one browser profile, so
-- it is unique in the tenant; registering it again moves it to whoever registers it.
create table public.push_subscriptions (
  tenant_id uuid not null default private.request_tenant_id(),
  id uuid not null default gen_random_uuid(),
  user_id uuid not null,
  endpoint text not null
    constraint push_subscriptions_endpoint_check check (length(endpoint) <= 2048 and endpoint ~ '^https?://[^\s]+$'),
  -- The browser's P-256 public key (65 bytes) and authentication secret (16 bytes), base64url.
  p256dh text not null constraint push_subscriptions_p256dh_check check (p256dh ~ '^[A-Za-z0-9_-]{87}=?$'),
  auth text not null constraint push_subscriptions_auth_check check (auth ~ '^[A-Za-z0-9_-]{22}(==)?$'),
  -- When the push service will end it, if it said (PushSubscription.expirationTime).
  expires_at timestamptz,
  user_agent text constraint push_subscriptions_user_agent_check check (length(user_agent) <= 500),
  -- The last push its service accepted.
  last_accepted_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint push_subscriptions_pkey primary key (tenant_id, id),
  constraint push_subscriptions_tenant_id_endpoint_key unique (tenant_id, endpoint),
  constraint push_subscriptions_tenant_id_user_id_fkey foreign key (tenant_id, user_id)
    references public.tenant_memberships (tenant_id, user_id) on delete cascade
);

create index push_subscriptions_tenant_user_idx on public.push_subscriptions (tenant_id, user_id);

create trigger forbid_tenant_change before update of tenant_id, created_at on public.push_subscriptions
  for each row execute function private.forbid_tenant_change();
create trigger touch_updated_at before update on public.push_subscriptions
  for each row execute function private.touch_updated_at();

alter table public.push_subscriptions enable row level security;
revoke all on public.push_subscriptions from anon, authenticated;
grant select, delete on public.push_subscriptions to authenticated;

create policy "members read their own push subscriptions" on public.push_subscriptions
  for select to authenticated
  using (tenant_id = (select private.request_tenant_id()) and user_id = (select auth.uid())
         and (select private.request_is_member()));
create policy "members remove their own push subscriptions" on public.push_subscriptions
  for delete to authenticated
  using (tenant_id = (select private.request_tenant_id()) and user_id = (select auth.uid())
         and (select private.request_is_member()));

-- Registers the caller's browser in the request's tenant, or refreshes it: an endpoint
-- already registered (by the caller or by whoever used the browser before) becomes the
-- caller's with the keys given now. Runs as owner because the row may be another member's.
create or replace function private.register_push_subscription(
  endpoint text, p256dh text, auth text, expires_at timestamptz, user_agent text
) returns public.push_subscriptions
language plpgsql security definer
set search_path = ''
as $$
declare
  tenant uuid := private.request_tenant_id();
  member uuid := auth.uid();
  registered public.push_subscriptions;
begin
  if tenant is null or member is null or not private.request_is_member() then
    raise exception 'only a member of the tenant registers a push subscription in it' using errcode = '42501';
  end if;
  insert into public.push_subscriptions as s (tenant_id, user_id, endpoint, p256dh, auth, expires_at, user_agent)
  values (tenant, member, register_push_subscription.endpoint, register_push_subscription.p256dh,
          register_push_subscription.auth, register_push_subscription.expires_at, register_push_subscription.user_agent)
  on conflict on constraint push_subscriptions_tenant_id_endpoint_key do update
    set user_id = excluded.user_id, p256dh = excluded.p256dh, auth = excluded.auth,
        expires_at = excluded.expires_at, user_agent = excluded.user_agent
  returning s.* into registered;
  return registered;
end
$$;
revoke all on function private.register_push_subscription(text, text, text, timestamptz, text) from public;
grant execute on function private.register_push_subscription(text, text, text, timestamptz, text) to authenticated;

-- ---------------------------------------------------------------- the inbox

-- What an in_app notification delivers: one message per user it reached, in the tenant.
-- An in_app notification is `sent` when its messages land here. A user reads, and marks
-- read, only their own.
create table public.inbox_messages (
  tenant_id uuid not null,
  id uuid not null default gen_random_uuid(),
  user_id uuid not null,
  notification_id uuid not null,
  template_key text not null constraint inbox_messages_template_key_check
    check (template_key in ('check_in_alerts', 'delivery_failed')),
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

-- ---------------------------------------------------------------- the worker's share

-- The worker reads who is in the job's tenant (an in_app notification reaches a member
-- only while they are one; a system notice reaches the owners and admins), the members'
-- push subscriptions, and writes inbox messages, the subscriptions' last acceptance, and
-- removes a subscription its push service says is gone.
grant select on public.tenant_memberships to background_worker;
create policy "background jobs read the job's members" on public.tenant_memberships
  for select to background_worker using (tenant_id = (select private.request_tenant_id()));
grant select, delete on public.push_subscriptions to background_worker;
grant update (last_accepted_at) on public.push_subscriptions to background_worker;
create policy "background jobs read the job's push subscriptions" on public.push_subscriptions
  for select to background_worker using (tenant_id = (select private.request_tenant_id()));
create policy "background jobs record push acceptances" on public.push_subscriptions
  for update to background_worker
  using (tenant_id = (select private.request_tenant_id()))
  with check (tenant_id = (select private.request_tenant_id()));
create policy "background jobs remove gone push subscriptions" on public.push_subscriptions
  for delete to background_worker using (tenant_id = (select private.request_tenant_id()));
grant select, insert on public.inbox_messages to background_worker;
create policy "background jobs read the job's inbox messages" on public.inbox_messages
  for select to background_worker using (tenant_id = (select private.request_tenant_id()));
create policy "background jobs deliver to inboxes" on public.inbox_messages
  for insert to background_worker with check (tenant_id = (select private.request_tenant_id()));

-- ---------------------------------------------------------------- fan-out

-- pgmq.send_batch's base form, like pgmq.send's (the notifications migration says why),
-- came with pgmq 1.5.0 too.
do $$
begin
  if pg_catalog.to_regprocedure('pgmq.send_batch(text, jsonb[], jsonb[], timestamp with time zone)') is null then
    raise exception 'pgmq % has no pgmq.send_batch(text, jsonb[], jsonb[], timestamptz); it came with pgmq 1.5.0',
      (select e.extversion from pg_catalog.pg_extension e where e.extname = 'pgmq')
      using hint = 'Run: alter extension pgmq update;';
  end if;
end
$$;

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

-- A guest event's notifications and, for a check-in, the staff's alerts: one insert and
-- one batch of jobs. Runs as owner: members cannot write notifications or the queue.
create or replace function private.fan_out_notifications(
  tenant uuid, template text, guest uuid, reservation uuid, access_code uuid default null
) returns uuid[]
language plpgsql security definer
set search_path = ''
as $$
declare
  created uuid[];
begin
  with reached (recipient_id, recipient_type, template_key, channel) as (
    -- The guest by email: always; the delivery check applies the tenant's preference.
    select guest, 'guest', template, 'email'
    union all
    -- The guest by SMS: only where the tenant opted in to this template by SMS and the guest
    -- has a number (guests.phone is E.164 by its check).
    select guest, 'guest', template, 'sms'
    where exists (select from public.notification_preferences p
                  where p.tenant_id = tenant and p.template_key = template and p.channel = 'sms' and p.enabled)
      and exists (select from public.guests g where g.tenant_id = tenant and g.id = guest and g.phone is not null)
    union all
    -- A check-in reaches the staff (the front desk; owners and admins get the nightly
    -- summary instead): in_app always, push where they subscribed a browser.
    select m.user_id, 'user', 'check_in_alerts', c.channel
    from public.tenant_memberships m
    cross join (values ('in_app'), ('push')) as c (channel)
    where template = 'checkin_reminder' and m.tenant_id = tenant and m.role = 'staff'
      and (c.channel = 'in_app'
           or exists (select from public.push_subscriptions s where s.tenant_id = tenant and s.user_id = m.user_id))
  ), inserted as (
    insert into public.notifications (tenant_id, recipient_id, recipient_type, template_key, channel, reservation_id, access_code_id)
    select tenant, r.recipient_id, r.recipient_type, r.template_key, r.channel, reservation, access_code
    from reached r
    returning id
  )
  select array_agg(inserted.id) into created from inserted;
  perform private.send_notification_jobs(created, tenant);
  return created;
end
$$;
revoke all on function private.fan_out_notifications(uuid, text, uuid, uuid, uuid) from public;

create or replace function private.notify_reservation_status()
returns trigger
language plpgsql security definer
set search_path = ''
as $$
begin
  perform private.fan_out_notifications(new.tenant_id,
    case new.status when 'checked_in' then 'checkin_reminder'
                    when 'checked_out' then 'checkout_summary'
                    else 'reservation_cancelled' end,
    new.guest_id, new.id);
  return null;
end
$$;

create or replace function private.notify_access_code_created()
returns trigger
language plpgsql security definer
set search_path = ''
as $$
begin
  perform private.fan_out_notifications(new.tenant_id, 'access_code_delivery', r.guest_id, new.reservation_id, new.id)
  from public.reservations r
  where r.tenant_id = new.tenant_id and r.id = new.reservation_id;
  return null;
end
$$;

-- private.enqueue_notification (one guest email and its job) stays for operators who
-- enqueue one email themselves; events go through the fan-out above.

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

-- Every fifteen minutes, so a zone at a quarter or half hour is summarised at its hour.
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
