-- A check-in's in-app alerts land in its staff's inboxes when its event is expanded,
-- instead of each becoming a job. The alert says the same to every member of the front
-- desk, and landing in the inbox is its whole delivery, yet each was sent to the queue,
-- read, loaded, rendered, settled (its notification updated, its inbox row written) and
-- deleted on its own: three of a check-in's five notifications when a tenant has three
-- staff. Now the worker takes the events with what their alerts say
-- (private.take_notification_events), renders each alert once, and hands the events back
-- with their alerts (private.expand_taken_notification_events): the alerts' notifications
-- are written as sent, with their inbox rows, in the statement that writes the event's
-- other notifications. Both run in one transaction, so a worker that dies between them
-- leaves the events on their queue and nothing made.
--
-- An event given no alert reaches its staff as before, through a job each: an expansion
-- in SQL alone (private.expand_notification_events), a tenant that opted out of in-app
-- check-in alerts (the job skips it with the reason), an alert the worker could not
-- render, or one the tables refuse.

-- Up to `max_events` events off their queue (hidden for 60 s, as before), each as its
-- message id and the event, or a null event for a message that is not one this project
-- sends; with `alerts`, for a check-in whose tenant has front-desk staff who take in-app
-- alerts, what the alert says (src/notifications/staff-text.ts, CheckInAlertData without
-- its locale). That is read as a job's notification is: as background_worker in the
-- event's tenant, so RLS applies to every read (docs/contract.md, Delivery processing);
-- the caller's role is back when it returns. Takes nothing off the queue: the caller's transaction hands the
-- events to private.expand_taken_notification_events.
create or replace function private.take_notification_events(max_events integer, alerts boolean)
returns table (msg_id bigint, event jsonb, check_in_alert jsonb)
language plpgsql
set search_path = ''
-- One plan per connection for the read of each tenant's check-ins, reaching every row by
-- its key whatever the statistics said when it was made (as the claim's load and
-- settlement: 20261201000200_claim_functions_keep_their_plans.sql).
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
  said jsonb := '{}';
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
      said := said || coalesce((
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
                            and not np.enabled)), '{}');
    end loop;
    perform set_config('role', caller_role, true);
  end if;

  return query
    select t.msg_id, t.event, said -> t.msg_id::text
    from unnest(ids, events) as t (msg_id, event);
end
$$;
revoke all on function private.take_notification_events(integer, boolean) from public;

-- The events' notifications, written in one statement for the whole batch: per event
-- {tenantId, templateKey, reservationId, accessCodeId, occurredAt} and, for a check-in
-- whose alert was rendered, alert {title, body, url}. A notification of an alert is
-- written sent with its inbox row; every other one pending, with its job. It now also
-- says how many it wrote sent, a column more, so it is made anew.
drop function private.fan_out_notification_events(jsonb);
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
-- fail, each event is made alone, then without its alert (its staff get jobs instead),
-- and one that still fails is archived with a warning naming the error, so that no event
-- holds back the ones behind it. Returns how many events were expanded, how many dropped
-- (reaching nobody or archived), and how many notifications were sent on the spot.
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
