-- Each notification goes out once, whatever stops a run. A run can end at any instant on a
-- hosted project (the Edge Runtime kills a worker past its CPU, memory or wall-clock
-- limit, a deploy replaces it, a provider's answer never comes), and a send whose outcome
-- the worker never recorded used to go out again when its job came back.
--
-- Now a send is recorded as under way before it leaves: loading a claim marks each
-- pending notification it will send through a provider (email, SMS, push) with the
-- instant its send starts, and counts the attempt. The mark stays until the worker's
-- settlement records the outcome. A provider's report names the notification and proves
-- the provider took the message: it records the message id, and the worker settles the
-- notification as sent when its job comes back. A notification found
-- marked when its job comes back has an outcome nobody recorded: it is not sent again
-- while its provider may still report on it (the worker's unconfirmed wait); once that
-- wait has passed with no report, it is sent again, except a door code's message, which an
-- operator decides on (a guest with two codes is worse than one told to ask).

alter table public.notifications
  add column send_started_at timestamptz,
  add constraint notifications_send_started_only_while_pending check (send_started_at is null or status = 'pending');

comment on column public.notifications.send_started_at is
  'When its current send through a provider started, while the outcome is not recorded; null otherwise. '
  'Written by the notifications worker only (private.load_notification_claim, private.settle_notification_claim).';

grant update (send_started_at) on public.notifications to background_worker;

-- ---------------------------------------------------------------- the load

drop function private.load_notification_claims(uuid[], uuid[]);
drop function private.load_notification_claim(uuid[]);

-- One tenant's notifications of a claim, read as background_worker in its context, with
-- every one the claim will send marked: pending, by a provider's channel, not reported by
-- its provider, and not marked already, or marked longer ago than the unconfirmed wait
-- (a door code's message excepted). Each row says whether this call marked it
-- (send_fresh), with its attempts counted.
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

-- The whole claim in one call, as before, each tenant's part as background_worker in that
-- tenant's context; tenant_ids and notification_ids pair up by position.
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

-- ---------------------------------------------------------------- the settlement

-- As before, and: each change says whether its notification's send is still under way
-- (send_started_at, kept for an outcome nobody knows yet) or not (cleared). A notification
-- a provider's report has settled first, while its job was still out, is left as it is.
-- Once every tenant is done, each notification that became sent takes the delivery state
-- its provider's reports already give it (reports that came while it was pending).
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
  for tenant in
    select * from jsonb_to_recordset(claim -> 'tenants')
      as t("tenantId" uuid, changes jsonb, inbox jsonb, "pushAccepted" jsonb, "pushGone" jsonb)
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

-- ---------------------------------------------------------------- the reports

-- As before, and: a report naming a pending notification whose send is under way (marked,
-- and no message id recorded) is the provider's word that it took the message, which the
-- worker may never have heard (its answer lost, the run ended). The report is recorded and
-- the notification takes the provider's message id: the worker marks it sent when its job
-- comes back, and gives it the state its reports say. A pending notification takes no
-- delivery state: that waits for it to be sent.
create or replace function private.record_delivery_events(provider text, events jsonb)
returns table (outcome text, total bigint)
language plpgsql security definer
set search_path = ''
as $$
declare
  channel text := case record_delivery_events.provider when 'sendgrid' then 'email' when 'sms' then 'sms' end;
  e record;
  n record;
  inserted uuid;
  counts jsonb := '{"recorded": 0, "duplicate": 0, "unmatched": 0, "early": 0}';
  verdict text;
begin
  if channel is null then
    raise exception 'unknown provider %', record_delivery_events.provider using errcode = '22023';
  end if;
  if pg_catalog.jsonb_typeof(record_delivery_events.events) is distinct from 'array' then
    raise exception 'events must be a JSON array' using errcode = '22023';
  end if;
  for e in
    select x.* from pg_catalog.jsonb_to_recordset(record_delivery_events.events) as x(
      tenant_id uuid, notification_id uuid, provider_message_id text, provider_event_id text, event text,
      delivery_state text, occurred_at timestamptz, reason text, code text, undeliverable boolean)
    order by x.tenant_id, x.notification_id, x.occurred_at, x.provider_event_id
  loop
    inserted := null;
    if e.tenant_id is null or e.notification_id is null then
      verdict := 'unmatched';
    else
      perform pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtextextended(e.tenant_id::text || '/' || e.notification_id::text, 0));
      select t.tenant_id, t.id, t.channel, t.status, t.provider_message_id, t.recipient_type, t.recipient_id, t.recipient_address,
             t.send_started_at
        into n
      from public.notifications t
      where t.tenant_id = e.tenant_id and t.id = e.notification_id;
      if not found or n.channel <> channel then
        verdict := 'unmatched';
      elsif n.provider_message_id is null and n.status = 'pending' and n.send_started_at is not null
            and e.provider_message_id is not null then
        update public.notifications t set provider_message_id = e.provider_message_id
        where t.tenant_id = n.tenant_id and t.id = n.id;
        n.provider_message_id := e.provider_message_id;
        verdict := 'match';
      elsif n.provider_message_id is null then
        verdict := case when n.status = 'pending' then 'early' else 'unmatched' end;
      elsif n.provider_message_id is distinct from e.provider_message_id then
        verdict := 'unmatched';
      else
        verdict := 'match';
      end if;
      if verdict = 'match' then
        insert into public.notification_events
          (tenant_id, notification_id, provider, provider_event_id, event, delivery_state, occurred_at, reason, code)
        values (n.tenant_id, n.id, record_delivery_events.provider, e.provider_event_id, e.event, e.delivery_state,
                e.occurred_at, e.reason, e.code)
        on conflict on constraint notification_events_tenant_id_provider_event_key do nothing
        returning id into inserted;
        verdict := case when inserted is null then 'duplicate' else 'recorded' end;
      end if;
    end if;
    if verdict = 'recorded' then
      if e.delivery_state is not null and n.status = 'sent' then
        perform private.settle_delivery_state(n.tenant_id, n.id);
      end if;
      -- The address the report is about is the one the mail went to; a guest who has
      -- changed it since keeps the new one unmarked.
      if e.undeliverable and channel = 'email' and n.recipient_type = 'guest' then
        update public.guests g
        set email_undeliverable_at = e.occurred_at,
            email_undeliverable_reason = left(
              case e.delivery_state when 'bounced' then 'the mail bounced'
                                    when 'dropped' then 'the provider dropped the mail'
                                    when 'spam_report' then 'the guest reported the mail as spam'
                                    else 'the provider reported the address undeliverable' end
              || coalesce(': ' || nullif(e.reason, ''), ''), 2000)
        where g.tenant_id = n.tenant_id and g.id = n.recipient_id
          and lower(g.email) = lower(n.recipient_address)
          and g.email_undeliverable_at is null
          and e.occurred_at > coalesce(g.email_undeliverable_cleared_at, '-infinity'::timestamptz);
      end if;
    end if;
    counts := pg_catalog.jsonb_set(counts, array[verdict], pg_catalog.to_jsonb((counts ->> verdict)::bigint + 1));
  end loop;
  return query select key, value::bigint from pg_catalog.jsonb_each_text(counts) order by key;
end
$$;
