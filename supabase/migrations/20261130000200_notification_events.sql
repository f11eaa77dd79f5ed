-- A domain event is one job on a queue of its own; the worker makes its notifications.
--
-- The reservation and access-code triggers made every notification of an event in the
-- change's own transaction: the recipients looked up, a row per recipient and channel
-- written with its five indexes and foreign keys, and a job for each sent to the queue.
-- That was a third of a check-in's throughput, and it grew with the tenant's staff. Now
-- the trigger sends one message to the pgmq queue `notification_events` (the tenant, the
-- template, the reservation, the access code) and nothing else: a rolled-back change
-- still leaves no event, and a committed one always leaves its event. The notifications
-- worker expands the events before it claims jobs (private.expand_notification_events):
-- who the event reaches is decided then, set-based for a whole batch of events, and the
-- notifications and their jobs are written with the events' deletion in one transaction.
-- A notification's created_at (and its first updated_at) is its event's enqueue time, the
-- change's own `now()`: as it was when the trigger wrote it.

do $$
begin
  if not exists (select 1 from pgmq.list_queues() q where q.queue_name = 'notification_events') then
    perform pgmq.create('notification_events');
  end if;
end
$$;

-- The event's message, built in one place for both triggers. pgmq.send's base form, as
-- every job of this project is sent (the notifications migration says why).
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

drop function private.fan_out_notifications(uuid, text, uuid, uuid, uuid);

-- The notifications of a batch of events, [{tenantId, templateKey, reservationId,
-- accessCodeId, occurredAt}], in one insert and one batch of jobs. Each reaches its
-- reservation's guest by email always (the worker applies the tenant's preference), by
-- SMS where the tenant opted in to the template by SMS and the guest has a number; a
-- check-in also reaches the tenant's staff in-app, and by Web Push those who subscribed
-- a browser. An event whose reservation or access code is gone reaches nobody. Returns
-- the events that reached someone and the notifications made.
create or replace function private.fan_out_notification_events(events jsonb)
returns table (events_reached integer, notifications integer)
language plpgsql security definer
set search_path = ''
as $$
declare
  jobs jsonb[];
begin
  with event as (
    select (x.e ->> 'tenantId')::uuid as tenant_id, x.e ->> 'templateKey' as template_key,
           (x.e ->> 'reservationId')::uuid as reservation_id, (x.e ->> 'accessCodeId')::uuid as access_code_id,
           (x.e ->> 'occurredAt')::timestamptz as occurred_at, x.ord
    from jsonb_array_elements(events) with ordinality as x (e, ord)
  ), stay as (
    select e.*, r.guest_id
    from event e
    join public.reservations r on r.tenant_id = e.tenant_id and r.id = e.reservation_id
    where e.access_code_id is null
       or exists (select from public.access_codes a where a.tenant_id = e.tenant_id and a.id = e.access_code_id)
  ), reached (ord, tenant_id, recipient_id, recipient_type, template_key, channel, reservation_id, access_code_id, occurred_at) as (
    select s.ord, s.tenant_id, s.guest_id, 'guest', s.template_key, 'email', s.reservation_id, s.access_code_id, s.occurred_at
    from stay s
    union all
    select s.ord, s.tenant_id, s.guest_id, 'guest', s.template_key, 'sms', s.reservation_id, s.access_code_id, s.occurred_at
    from stay s
    where exists (select from public.notification_preferences p
                  where p.tenant_id = s.tenant_id and p.template_key = s.template_key and p.channel = 'sms' and p.enabled)
      and exists (select from public.guests g where g.tenant_id = s.tenant_id and g.id = s.guest_id and g.phone is not null)
    union all
    -- The front desk; owners and admins get the nightly summary instead.
    select s.ord, s.tenant_id, m.user_id, 'user', 'check_in_alerts', c.channel, s.reservation_id, s.access_code_id, s.occurred_at
    from stay s
    join public.tenant_memberships m on m.tenant_id = s.tenant_id and m.role = 'staff'
    cross join (values ('in_app'), ('push')) as c (channel)
    where s.template_key = 'checkin_reminder'
      and (c.channel = 'in_app'
           or exists (select from public.push_subscriptions ps where ps.tenant_id = s.tenant_id and ps.user_id = m.user_id))
  ), inserted as (
    insert into public.notifications
      (tenant_id, recipient_id, recipient_type, template_key, channel, reservation_id, access_code_id, created_at, updated_at)
    select r.tenant_id, r.recipient_id, r.recipient_type, r.template_key, r.channel, r.reservation_id, r.access_code_id,
           r.occurred_at, r.occurred_at
    from reached r
    order by r.ord
    returning id, tenant_id
  )
  select (select count(*) from stay)::integer,
         array(select jsonb_build_object('notificationId', i.id, 'tenantId', i.tenant_id) from inserted i)
  into events_reached, jobs;
  notifications := cardinality(jobs);
  if notifications > 0 then
    perform pgmq.send_batch('notifications', jobs, null::jsonb[], clock_timestamp());
  end if;
  return next;
end
$$;
revoke all on function private.fan_out_notification_events(jsonb) from public;

-- Up to `max_events` events off their queue, made into notifications, and deleted, in
-- the caller's transaction: if it fails, the events are back at once, and nothing of them
-- was made. An event that is not one this project sends is archived (pgmq.a_notification_events
-- keeps it for an operator); one whose reservation or access code is gone is deleted with
-- the others, having reached nobody. Returns how many were expanded, and dropped either way.
create or replace function private.expand_notification_events(max_events integer)
returns table (expanded integer, dropped integer)
language plpgsql security definer
set search_path = ''
as $$
declare
  uuid_pattern constant text := '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
  taken record;
  events jsonb := '[]';
  finished bigint[] := '{}';
  malformed bigint[] := '{}';
begin
  for taken in
    select q.msg_id, q.message as m, q.enqueued_at
    from pgmq.read('notification_events', 60, max_events) q
  loop
    if jsonb_typeof(taken.m) = 'object'
       and coalesce(taken.m ->> 'tenantId' ~ uuid_pattern, false)
       and coalesce(taken.m ->> 'reservationId' ~ uuid_pattern, false)
       and coalesce(taken.m ->> 'accessCodeId' ~ uuid_pattern, jsonb_typeof(taken.m -> 'accessCodeId') is distinct from 'string')
       and coalesce(taken.m ->> 'templateKey' in ('checkin_reminder', 'checkout_summary', 'reservation_cancelled', 'access_code_delivery'), false)
    then
      finished := finished || taken.msg_id;
      events := events || jsonb_build_object(
        'tenantId', taken.m -> 'tenantId', 'templateKey', taken.m -> 'templateKey', 'reservationId', taken.m -> 'reservationId',
        'accessCodeId', taken.m -> 'accessCodeId', 'occurredAt', taken.enqueued_at);
    else
      malformed := malformed || taken.msg_id;
    end if;
  end loop;
  expanded := 0;
  if cardinality(finished) > 0 then
    select f.events_reached into expanded from private.fan_out_notification_events(events) f;
    perform pgmq.delete('notification_events', finished);
  end if;
  if cardinality(malformed) > 0 then
    raise warning 'notification events % are not events this project sends; archived', malformed;
    perform pgmq.archive('notification_events', malformed);
  end if;
  dropped := cardinality(finished) - expanded + cardinality(malformed);
  return next;
end
$$;
revoke all on function private.expand_notification_events(integer) from public;

-- The queue's health for the SQL editor gains the events still to be made into
-- notifications: how many wait, and the oldest's age (a worker that stopped shows here
-- first).
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
revoke all on private.notification_queue_health from public;
