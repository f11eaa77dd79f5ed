-- Outbound webhooks, the delivery: every change that makes an event records it, one
-- delivery per enabled subscription it matches (webhook-subscriptions.sql), and a job on
-- the pgmq queue `webhooks` for each delivery, in the change's own transaction, so a change
-- rolled back delivers nothing. The `webhooks-worker` function drains the queue and signs
-- each request as the Standard Webhooks specification says (docs/webhooks.md).
--
-- - webhook_events: what happened, with the payload as it was at that moment.
-- - webhook_deliveries: one per (event, subscription), its state and next attempt.
-- - webhook_attempts: every request the worker made, with its outcome.

-- ---------------------------------------------------------------- not in a schema diff
-- A schema diff writes none of what follows: pgmq's queues are rows of pgmq.meta with
-- tables pgmq makes. A migration that changes them says so by hand (docs/architecture.md,
-- Migrations).

do $$
begin
  if not exists (select 1 from pgmq.list_queues() q where q.queue_name = 'webhooks') then
    perform pgmq.create('webhooks');
  end if;
end
$$;

-- ---------------------------------------------------------------- events, deliveries, attempts

create table public.webhook_events (
  tenant_id uuid not null constraint webhook_events_tenant_id_fkey references public.tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  type text not null constraint webhook_events_type_check check (type = any (private.webhook_event_types())),
  -- The properties the event concerns (a guest's: those of their stays), for subscriptions
  -- limited to properties; the reservation, for the order of its events.
  property_ids uuid[] not null default '{}',
  reservation_id uuid,
  -- The body sent, but for the envelope's id and timestamp (docs/webhooks.md).
  data jsonb not null,
  occurred_at timestamptz not null default now(),
  constraint webhook_events_pkey primary key (tenant_id, id)
);
create index webhook_events_tenant_occurred_idx on public.webhook_events (tenant_id, occurred_at desc, id desc);

create table public.webhook_deliveries (
  tenant_id uuid not null,
  id uuid not null default gen_random_uuid(),
  event_id uuid not null,
  subscription_id uuid not null,
  -- Copied from the event: deliveries of one reservation's events to one subscription go
  -- in the order of `sequence`, each after the one before has ended.
  reservation_id uuid,
  sequence bigint generated always as identity,
  status text not null default 'pending'
    constraint webhook_deliveries_status_check check (status in ('pending', 'succeeded', 'failed', 'cancelled')),
  attempts integer not null default 0 constraint webhook_deliveries_attempts_check check (attempts >= 0),
  next_attempt_at timestamptz default now(),
  last_attempt_at timestamptz,
  last_status_code integer,
  ended_at timestamptz,
  created_at timestamptz not null default now(),
  -- No two attempts of one delivery are ever in flight together. A claim whose run was
  -- slowed or stopped can outlive its jobs' visibility, and a manual redelivery puts a
  -- second job beside the first: either could have a delivery posted twice at once. So a
  -- claim takes each delivery it will post with a lease: the instant its attempt starts,
  -- written when the claim is loaded if no other attempt holds the delivery (none started,
  -- or the last one started longer ago than an attempt can last: the post's timeout and a
  -- margin). A delivery held by another attempt waits until that one has ended. The
  -- claim's settlement gives its leases back, each only if it is still the one it took.
  attempt_started_at timestamptz,
  -- Deliveries of one key to one subscription go in the order of `sequence`, each after
  -- the one before has ended: a reservation's events, or a property's availability and
  -- rates (channel-sync.sql). Null: no order to keep.
  order_key uuid,
  constraint webhook_deliveries_pkey primary key (tenant_id, id),
  constraint webhook_deliveries_tenant_id_event_id_subscription_id_key unique (tenant_id, event_id, subscription_id),
  constraint webhook_deliveries_tenant_id_event_id_fkey foreign key (tenant_id, event_id)
    references public.webhook_events (tenant_id, id) on delete cascade,
  constraint webhook_deliveries_tenant_id_subscription_id_fkey foreign key (tenant_id, subscription_id)
    references public.webhook_subscriptions (tenant_id, id) on delete cascade,
  constraint webhook_deliveries_ended_exactly_when_not_pending check ((status = 'pending') = (ended_at is null))
);
comment on column public.webhook_deliveries.attempt_started_at is
  'When the attempt that may be in flight started: a claim holds the delivery from then until it settles, '
  'or until an attempt could no longer be under way. Null when no attempt is.';
create index webhook_deliveries_tenant_subscription_created_idx
  on public.webhook_deliveries (tenant_id, subscription_id, created_at desc, id desc);
-- The delivery before this one, for the same subscription and order key, still pending.
create index webhook_deliveries_tenant_order_key_idx
  on public.webhook_deliveries (tenant_id, subscription_id, order_key, sequence)
  where status = 'pending' and order_key is not null;

create table public.webhook_attempts (
  tenant_id uuid not null,
  id uuid not null default gen_random_uuid(),
  delivery_id uuid not null,
  attempt integer not null constraint webhook_attempts_attempt_check check (attempt >= 1),
  started_at timestamptz not null,
  duration_ms integer not null constraint webhook_attempts_duration_ms_check check (duration_ms >= 0),
  -- The endpoint's status, or null when there was none (refused, timed out, unsafe address).
  status_code integer constraint webhook_attempts_status_code_check check (status_code between 100 and 599),
  outcome text not null constraint webhook_attempts_outcome_check
    check (outcome in ('succeeded', 'retrying', 'failed', 'gone', 'refused')),
  error text constraint webhook_attempts_error_check check (length(error) <= 1000),
  -- The first kilobyte of the response body, as text.
  response_snippet text constraint webhook_attempts_response_snippet_check check (length(response_snippet) <= 1024),
  next_attempt_at timestamptz,
  constraint webhook_attempts_pkey primary key (tenant_id, id),
  constraint webhook_attempts_tenant_id_delivery_id_attempt_key unique (tenant_id, delivery_id, attempt),
  constraint webhook_attempts_tenant_id_delivery_id_fkey foreign key (tenant_id, delivery_id)
    references public.webhook_deliveries (tenant_id, id) on delete cascade
);

alter table public.webhook_events enable row level security;
alter table public.webhook_deliveries enable row level security;
alter table public.webhook_attempts enable row level security;
revoke all on public.webhook_events, public.webhook_deliveries, public.webhook_attempts from anon, authenticated;
grant select on public.webhook_events, public.webhook_deliveries, public.webhook_attempts to authenticated;

create policy "managers read webhook events" on public.webhook_events
  for select to authenticated
  using (tenant_id = (select private.request_tenant_id()) and (select private.request_is_manager()));
create policy "managers read webhook deliveries" on public.webhook_deliveries
  for select to authenticated
  using (tenant_id = (select private.request_tenant_id()) and (select private.request_is_manager()));
create policy "managers read webhook attempts" on public.webhook_attempts
  for select to authenticated
  using (tenant_id = (select private.request_tenant_id()) and (select private.request_is_manager()));

-- ---------------------------------------------------------------- emitting

-- A column's name as the API writes it: snake_case in camelCase.
create or replace function private.api_field_name(column_name text)
returns text
language sql immutable
as $$
  select lower(left(column_name, 1)) || substr(replace(initcap(column_name), '_', ''), 2)
$$;

-- A row as the API shows it: its columns under the API's names, but those left out;
-- timestamps as the calling function's time zone writes them (the triggers' is UTC,
-- whatever the session's).
create or replace function private.webhook_resource(resource jsonb, left_out text[])
returns jsonb
language sql immutable
as $$
  select coalesce(jsonb_object_agg(private.api_field_name(key), value), '{}'::jsonb)
  from jsonb_each(resource - left_out)
$$;

-- The API's names of the columns an update changed, but those ignored; null if none.
create or replace function private.webhook_changed_fields(new_row jsonb, old_row jsonb, ignored text[])
returns jsonb
language sql immutable
as $$
  select jsonb_agg(private.api_field_name(n.key) order by private.api_field_name(n.key))
  from jsonb_each(new_row) n
  join jsonb_each(old_row) o using (key)
  where n.value is distinct from o.value and not (n.key = any (ignored))
$$;

-- Whether any enabled subscription of the tenant wants an event of this type about these
-- properties (null: about any). Most tenants have none, and then a trigger stops here,
-- after one probe of an index, before it builds any payload.
create or replace function private.webhooks_wanted(tenant uuid, event_type text, properties uuid[])
returns boolean
language plpgsql stable
set search_path = ''
as $$
begin
  -- PL/pgSQL, not SQL: every change to a stay calls it, and its plan is kept per session
  -- where a SQL function's called from PL/pgSQL is made at every call.
  return exists (
    select from public.webhook_subscriptions s
    where s.tenant_id = tenant and s.enabled
      and (s.event_types = '{}' or event_type = any (s.event_types))
      and (s.property_ids = '{}' or properties is null or s.property_ids && properties));
end
$$;

-- Records an event, and a delivery with its job for every enabled subscription that wants
-- it, in order after the earlier deliveries of `order_key` (the reservation's unless
-- given). Returns the event.
create or replace function private.emit_webhook_event(
  tenant uuid, event_type text, properties uuid[], reservation uuid, data jsonb, order_key uuid default null
) returns uuid
language plpgsql
set search_path = ''
as $$
declare
  event uuid;
  jobs jsonb[];
begin
  insert into public.webhook_events (tenant_id, type, property_ids, reservation_id, data)
  values (tenant, event_type, coalesce(properties, '{}'), reservation, data)
  returning id into event;
  with delivered as (
    insert into public.webhook_deliveries (tenant_id, event_id, subscription_id, reservation_id, order_key)
    select tenant, event, s.id, reservation, coalesce(emit_webhook_event.order_key, reservation)
    from public.webhook_subscriptions s
    where s.tenant_id = tenant and s.enabled
      and (s.event_types = '{}' or event_type = any (s.event_types))
      and (s.property_ids = '{}' or s.property_ids && properties)
    returning id
  )
  select array_agg(jsonb_build_object('tenantId', tenant, 'deliveryId', d.id)) into jobs from delivered d;
  if jobs is not null then
    -- pgmq.send_batch's base form, as the notifications' jobs use it.
    perform pgmq.send_batch('webhooks', jobs, null::jsonb[], clock_timestamp());
  end if;
  return event;
end
$$;
revoke all on function private.emit_webhook_event(uuid, text, uuid[], uuid, jsonb, uuid) from public;

-- The triggers. They run as the owner (members write neither events nor the queue), and
-- in UTC, so that the payload's timestamps read the same whoever made the change.

create or replace function private.webhook_on_reservation()
returns trigger
language plpgsql security definer
set search_path = ''
set timezone = 'UTC'
as $$
declare
  event_type text := case
    when tg_op = 'INSERT' then 'reservation.created'
    when new.status is distinct from old.status and new.status in ('checked_in', 'checked_out', 'cancelled')
      then 'reservation.' || new.status
    else 'reservation.updated' end;
  changed jsonb;
begin
  if not private.webhooks_wanted(new.tenant_id, event_type, array[new.property_id]) then
    return null;
  end if;
  if event_type = 'reservation.updated' then
    -- What a manager or a channel changed; a payment's effect on the paid amount is the
    -- payment's own event.
    changed := private.webhook_changed_fields(to_jsonb(new), to_jsonb(old), array['updated_at', 'amount_paid', 'balance', 'stay']);
    if changed is null then
      return null;
    end if;
  end if;
  perform private.emit_webhook_event(new.tenant_id, event_type, array[new.property_id], new.id,
    jsonb_build_object('reservation', private.webhook_resource(to_jsonb(new), array['tenant_id', 'created_by', 'stay']))
      || case when changed is null then '{}'::jsonb else jsonb_build_object('changedFields', changed) end);
  return null;
end
$$;

create trigger webhook_on_reservation after insert or update on public.reservations
  for each row execute function private.webhook_on_reservation();

create or replace function private.webhook_on_payment()
returns trigger
language plpgsql security definer
set search_path = ''
set timezone = 'UTC'
as $$
declare
  stay public.reservations;
begin
  select * into stay from public.reservations r where r.tenant_id = new.tenant_id and r.id = new.reservation_id;
  if not private.webhooks_wanted(new.tenant_id, 'payment.recorded', array[stay.property_id]) then
    return null;
  end if;
  perform private.emit_webhook_event(new.tenant_id, 'payment.recorded', array[stay.property_id], new.reservation_id,
    jsonb_build_object(
      'payment', private.webhook_resource(to_jsonb(new), array['tenant_id', 'created_by']),
      'reservation', jsonb_build_object('id', stay.id, 'totalAmount', stay.total_amount, 'amountPaid', stay.amount_paid,
                                        'balance', stay.balance, 'currency', stay.currency)));
  return null;
end
$$;

create trigger webhook_on_payment after insert on public.payments
  for each row execute function private.webhook_on_payment();

create or replace function private.webhook_on_access_code()
returns trigger
language plpgsql security definer
set search_path = ''
set timezone = 'UTC'
as $$
declare
  event_type text := case tg_op when 'INSERT' then 'access_code.created' else 'access_code.revoked' end;
begin
  if tg_op = 'UPDATE' and not (new.status = 'revoked' and old.status is distinct from 'revoked') then
    return null;
  end if;
  if not private.webhooks_wanted(new.tenant_id, event_type, array[new.property_id]) then
    return null;
  end if;
  perform private.emit_webhook_event(new.tenant_id, event_type, array[new.property_id], new.reservation_id,
    jsonb_build_object('accessCode', private.webhook_resource(to_jsonb(new), array['tenant_id', 'created_by'])));
  return null;
end
$$;

create trigger webhook_on_access_code after insert or update of status on public.access_codes
  for each row execute function private.webhook_on_access_code();

create or replace function private.webhook_on_task_status()
returns trigger
language plpgsql security definer
set search_path = ''
set timezone = 'UTC'
as $$
begin
  if new.status is not distinct from old.status
     or not private.webhooks_wanted(new.tenant_id, 'task.status_changed', array[new.property_id]) then
    return null;
  end if;
  perform private.emit_webhook_event(new.tenant_id, 'task.status_changed', array[new.property_id], new.reservation_id,
    jsonb_build_object('task', private.webhook_resource(to_jsonb(new), array['tenant_id', 'created_by']),
                       'previousStatus', old.status));
  return null;
end
$$;

create trigger webhook_on_task_status after update of status on public.tasks
  for each row execute function private.webhook_on_task_status();

-- A guest belongs to no property: a subscription limited to properties gets a guest's
-- events when the guest has a stay at one of them.
create or replace function private.webhook_on_guest()
returns trigger
language plpgsql security definer
set search_path = ''
set timezone = 'UTC'
as $$
declare
  stays_at uuid[];
  changed jsonb;
begin
  if not private.webhooks_wanted(new.tenant_id, 'guest.updated', null) then
    return null;
  end if;
  stays_at := array(select distinct r.property_id from public.reservations r
                    where r.tenant_id = new.tenant_id and r.guest_id = new.id);
  if not private.webhooks_wanted(new.tenant_id, 'guest.updated', stays_at) then
    return null;
  end if;
  changed := private.webhook_changed_fields(to_jsonb(new), to_jsonb(old), array['updated_at']);
  if changed is null then
    return null;
  end if;
  perform private.emit_webhook_event(new.tenant_id, 'guest.updated', stays_at, null,
    jsonb_build_object(
      'guest', private.webhook_resource(to_jsonb(new), array['tenant_id', 'created_by', 'email_undeliverable_cleared_at']),
      'changedFields', changed));
  return null;
end
$$;

create trigger webhook_on_guest after update on public.guests
  for each row execute function private.webhook_on_guest();

-- ---------------------------------------------------------------- test events and redelivery

-- A `webhook.test` event to one subscription, enabled or not, so that a manager can try an
-- endpoint before enabling it. Returns the delivery, or null when the manager cannot see
-- the subscription.
create or replace function private.send_webhook_test(subscription uuid)
returns uuid
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  tenant uuid := private.request_tenant_id();
  event uuid;
  delivery uuid;
begin
  if not coalesce(private.request_is_manager(), false) then
    raise exception 'only an owner or admin sends a test event' using errcode = '42501';
  end if;
  if not exists (select from public.webhook_subscriptions s where s.tenant_id = tenant and s.id = subscription) then
    return null;
  end if;
  insert into public.webhook_events (tenant_id, type, data)
  values (tenant, 'webhook.test', jsonb_build_object('subscriptionId', subscription))
  returning id into event;
  insert into public.webhook_deliveries (tenant_id, event_id, subscription_id)
  values (tenant, event, subscription)
  returning id into delivery;
  perform pgmq.send('webhooks', jsonb_build_object('tenantId', tenant, 'deliveryId', delivery), null::jsonb, clock_timestamp());
  return delivery;
end
$$;
revoke all on function private.send_webhook_test(uuid) from public;
grant execute on function private.send_webhook_test(uuid) to authenticated;

-- Sends a delivery that ended again, now, under the same webhook-id (a receiver that
-- dedupes by it sees a repeat). A pending delivery is left as it is. Returns the delivery,
-- or null when the manager cannot see it.
create or replace function private.redeliver_webhook(delivery uuid)
returns uuid
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  tenant uuid := private.request_tenant_id();
  found public.webhook_deliveries;
begin
  if not coalesce(private.request_is_manager(), false) then
    raise exception 'only an owner or admin redelivers an event' using errcode = '42501';
  end if;
  select * into found from public.webhook_deliveries d where d.tenant_id = tenant and d.id = delivery for update;
  if found.id is null then
    return null;
  end if;
  if found.status <> 'pending' then
    update public.webhook_deliveries d
    set status = 'pending', ended_at = null, next_attempt_at = now()
    where d.tenant_id = tenant and d.id = delivery;
    perform pgmq.send('webhooks', jsonb_build_object('tenantId', tenant, 'deliveryId', delivery), null::jsonb, clock_timestamp());
  end if;
  return delivery;
end
$$;
revoke all on function private.redeliver_webhook(uuid) from public;
grant execute on function private.redeliver_webhook(uuid) to authenticated;

-- ---------------------------------------------------------------- the worker's share

-- The webhooks worker works as background_worker in each job's tenant, as the
-- notifications worker does: it reads the delivery, its event and its subscription (with
-- the secrets it signs with), records each attempt and the delivery's state, takes and
-- gives back each delivery's lease, and marks a subscription failing, healthy again, or
-- disabled.
grant select on public.webhook_subscriptions to background_worker;
grant update (enabled, disabled_reason, disabled_at, failing_since) on public.webhook_subscriptions to background_worker;
create policy "background jobs read the job's webhook subscriptions" on public.webhook_subscriptions
  for select to background_worker using (tenant_id = (select private.request_tenant_id()));
create policy "background jobs mark webhook subscriptions" on public.webhook_subscriptions
  for update to background_worker
  using (tenant_id = (select private.request_tenant_id()))
  with check (tenant_id = (select private.request_tenant_id()));
grant select on public.webhook_events to background_worker;
create policy "background jobs read the job's webhook events" on public.webhook_events
  for select to background_worker using (tenant_id = (select private.request_tenant_id()));
grant select on public.webhook_deliveries to background_worker;
grant update (status, attempts, next_attempt_at, last_attempt_at, last_status_code, ended_at, attempt_started_at)
  on public.webhook_deliveries to background_worker;
create policy "background jobs read the job's webhook deliveries" on public.webhook_deliveries
  for select to background_worker using (tenant_id = (select private.request_tenant_id()));
create policy "background jobs record webhook deliveries" on public.webhook_deliveries
  for update to background_worker
  using (tenant_id = (select private.request_tenant_id()))
  with check (tenant_id = (select private.request_tenant_id()));
grant select, insert on public.webhook_attempts to background_worker;
create policy "background jobs read the job's webhook attempts" on public.webhook_attempts
  for select to background_worker using (tenant_id = (select private.request_tenant_id()));
create policy "background jobs record webhook attempts" on public.webhook_attempts
  for insert to background_worker with check (tenant_id = (select private.request_tenant_id()));

-- ---------------------------------------------------------------- claims

-- A claim across many tenants costs what one tenant's does: the worker loads a claim in
-- one call and settles it in one call, where each tenant's context and load were
-- statements of their own for Postgres to parse and plan, for the pooler to relay and for
-- the worker to build and read. Both keep one plan per connection, one that reaches each
-- row by its key (the tenant's context and its id), as the notifications worker's do
-- (notifications.sql says why).

-- One tenant's deliveries of a claim, read under RLS as background_worker in its context
-- (the caller sets it), with each one's event and subscription, and the lease taken on
-- each it may post: pending, and no other attempt holding it.
create function private.load_webhook_claim(delivery_ids uuid[], lease_seconds integer)
returns table (
  id uuid, status text, attempts integer, subscription_id uuid,
  attempt_started_at timestamptz, attempt_fresh boolean,
  event_id uuid, type text, data jsonb, occurred_at timestamptz,
  url text, enabled boolean, secret text, previous_secret text, previous_secret_expires_at timestamptz,
  failing_since timestamptz, earlier_pending_until timestamptz
)
language plpgsql
set search_path = ''
set plan_cache_mode = force_generic_plan
set enable_seqscan = off
as $$
declare
  leased uuid[];
  lease_start timestamptz := now();
begin
  with taken as (
    update public.webhook_deliveries d
    set attempt_started_at = lease_start
    from unnest(delivery_ids) as wanted (id)
    where d.tenant_id = (select private.request_tenant_id()) and d.id = wanted.id
      and d.status = 'pending'
      and (d.attempt_started_at is null or d.attempt_started_at < lease_start - make_interval(secs => lease_seconds))
    returning d.id
  )
  select coalesce(array_agg(taken.id), '{}') into leased from taken;

  return query
    select d.id, d.status, d.attempts, d.subscription_id,
           d.attempt_started_at, d.id = any(leased),
           e.id, e.type, e.data, e.occurred_at,
           s.url, s.enabled, s.secret, s.previous_secret, s.previous_secret_expires_at, s.failing_since,
           -- The latest next attempt among the same order key's earlier deliveries to the
           -- same subscription that have not ended (one without a next attempt counts as
           -- due now): this one waits until then. Null: none is pending.
           (select max(coalesce(p.next_attempt_at, now())) from public.webhook_deliveries p
            where p.tenant_id = d.tenant_id and p.subscription_id = d.subscription_id
              and p.order_key = d.order_key and p.status = 'pending' and p.sequence < d.sequence)
    from unnest(delivery_ids) as wanted (id)
    join public.webhook_deliveries d on d.tenant_id = (select private.request_tenant_id()) and d.id = wanted.id
    join public.webhook_events e on e.tenant_id = d.tenant_id and e.id = d.event_id
    join public.webhook_subscriptions s on s.tenant_id = d.tenant_id and s.id = d.subscription_id;
end
$$;
revoke all on function private.load_webhook_claim(uuid[], integer) from public;
grant execute on function private.load_webhook_claim(uuid[], integer) to background_worker;

-- The whole claim in one call, each tenant's part as background_worker in that tenant's
-- context; tenant_ids and delivery_ids pair up by position. The caller's role is back when
-- it returns.
create function private.load_webhook_claims(tenant_ids uuid[], delivery_ids uuid[], lease_seconds integer)
returns table (
  tenant_id uuid,
  id uuid, status text, attempts integer, subscription_id uuid,
  attempt_started_at timestamptz, attempt_fresh boolean,
  event_id uuid, type text, data jsonb, occurred_at timestamptz,
  url text, enabled boolean, secret text, previous_secret text, previous_secret_expires_at timestamptz,
  failing_since timestamptz, earlier_pending_until timestamptz
)
language plpgsql
set search_path = ''
as $$
declare
  caller_role text := current_setting('role');
  tenant uuid;
begin
  if cardinality(tenant_ids) is distinct from cardinality(delivery_ids) then
    raise exception 'a claim pairs each delivery with its tenant: % tenants for % deliveries',
      cardinality(tenant_ids), cardinality(delivery_ids) using errcode = '22023';
  end if;
  if lease_seconds is null or lease_seconds < 1 then
    raise exception 'a lease lasts a whole number of seconds from 1' using errcode = '22023';
  end if;
  perform set_config('role', 'background_worker', true);
  for tenant in select distinct t from unnest(tenant_ids) as t loop
    perform set_config('app.tenant_id', tenant::text, true);
    return query
      select tenant, l.*
      from private.load_webhook_claim(array(
        select x.delivery_id from unnest(tenant_ids, delivery_ids) as x (tenant_id, delivery_id)
        where x.tenant_id = tenant), lease_seconds) l;
  end loop;
  perform set_config('role', caller_role, true);
end
$$;
revoke all on function private.load_webhook_claims(uuid[], uuid[], integer) from public;

-- The claim's outcomes in one call:
--   {finished: [msg_id], postponed: [{msgId, delaySeconds}],
--    tenants: [{tenantId, attempts: [...], deliveries: [...], subscriptions: [...], released: [...]}]}
-- `finished` jobs are deleted; `postponed` ones come back after their delay (a retry, or a
-- delivery waiting for the one before it). Then, as background_worker in each tenant's
-- context: the attempts are inserted, the deliveries take their new state (a pending one
-- only), the leases the claim took, [{id, startedAt}], are cleared where the delivery
-- still carries that one, and the subscriptions take theirs: failing since a time, healthy
-- again, or disabled (the trigger below tells the managers). The caller's role is back
-- when it returns, as an operator calling it from the SQL editor expects.
create or replace function private.settle_webhook_claim(claim jsonb)
returns void
language plpgsql
set search_path = ''
set plan_cache_mode = force_generic_plan
set enable_seqscan = off
as $$
declare
  caller_role text := current_setting('role');
  tenant record;
begin
  perform pgmq.delete('webhooks', array(select m::bigint from jsonb_array_elements_text(claim -> 'finished') as f(m)));
  perform pgmq.set_vt('webhooks', p."msgId", p."delaySeconds")
  from jsonb_to_recordset(claim -> 'postponed') as p("msgId" bigint, "delaySeconds" integer);

  perform set_config('role', 'background_worker', true);
  -- Tenants in one order in every claim, so that two claims settling at once take the
  -- rows they share (a subscription's) in the same order, never in a cycle.
  for tenant in
    select * from jsonb_to_recordset(claim -> 'tenants')
      as t("tenantId" uuid, attempts jsonb, deliveries jsonb, subscriptions jsonb, released jsonb)
    order by t."tenantId"
  loop
    perform set_config('app.tenant_id', tenant."tenantId"::text, true);

    insert into public.webhook_attempts (tenant_id, delivery_id, attempt, started_at, duration_ms, status_code, outcome,
                                         error, response_snippet, next_attempt_at)
    select (select private.request_tenant_id()), a."deliveryId", a.attempt, a."startedAt", a."durationMs", a."statusCode",
           a.outcome, a.error, a."responseSnippet", a."nextAttemptAt"
    from jsonb_to_recordset(coalesce(tenant.attempts, '[]')) as a(
      "deliveryId" uuid, attempt integer, "startedAt" timestamptz, "durationMs" integer, "statusCode" integer,
      outcome text, error text, "responseSnippet" text, "nextAttemptAt" timestamptz)
    on conflict on constraint webhook_attempts_tenant_id_delivery_id_attempt_key do nothing;

    update public.webhook_deliveries d
    set status = c.status,
        attempts = coalesce(c.attempts, d.attempts),
        next_attempt_at = c."nextAttemptAt",
        last_attempt_at = coalesce(c."lastAttemptAt", d.last_attempt_at),
        last_status_code = coalesce(c."lastStatusCode", d.last_status_code),
        ended_at = case when c.status = 'pending' then null else now() end
    from jsonb_to_recordset(coalesce(tenant.deliveries, '[]')) as c(
      id uuid, status text, attempts integer, "nextAttemptAt" timestamptz, "lastAttemptAt" timestamptz, "lastStatusCode" integer)
    where d.tenant_id = (select private.request_tenant_id()) and d.id = c.id and d.status = 'pending';

    if jsonb_array_length(coalesce(tenant.released, '[]')) > 0 then
      update public.webhook_deliveries d
      set attempt_started_at = null
      from jsonb_to_recordset(tenant.released) as r(id uuid, "startedAt" timestamptz)
      where d.tenant_id = (select private.request_tenant_id()) and d.id = r.id and d.attempt_started_at = r."startedAt";
    end if;

    -- failingSince: set it if unset (a failure), or clear it (a success); disable: why.
    update public.webhook_subscriptions s
    set failing_since = case when c.healthy then null else coalesce(s.failing_since, c."failingSince") end,
        enabled = case when c.disable is not null then false else s.enabled end,
        disabled_reason = case when c.disable is not null and s.enabled then c.disable else s.disabled_reason end
    from jsonb_to_recordset(coalesce(tenant.subscriptions, '[]')) as c(
      id uuid, healthy boolean, "failingSince" timestamptz, disable text)
    where s.tenant_id = (select private.request_tenant_id()) and s.id = c.id;
  end loop;
  perform set_config('role', caller_role, true);
end
$$;
revoke all on function private.settle_webhook_claim(jsonb) from public;

-- ---------------------------------------------------------------- telling the managers

-- A subscription the worker disabled (its endpoint answered 410 Gone, or every delivery
-- failed for a day) has nobody to tell but the tenant: a `system` notification,
-- `webhook_disabled`, delivered in_app to the owners' and admins' inboxes like a failed
-- notification's notice. A manager's own disabling tells nobody.
create or replace function private.notify_webhook_disabled()
returns trigger
language plpgsql security definer
set search_path = ''
set timezone = 'UTC'
as $$
declare
  notice uuid;
begin
  insert into public.notifications (tenant_id, recipient_id, recipient_type, template_key, channel, context)
  values (new.tenant_id, null, 'system', 'webhook_disabled', 'in_app',
          jsonb_build_object('subscriptionId', new.id, 'url', new.url, 'reason', new.disabled_reason,
                             'failingSince', new.failing_since, 'disabledAt', new.disabled_at))
  returning id into notice;
  perform private.send_notification_jobs(array[notice], new.tenant_id);
  return null;
end
$$;
revoke all on function private.notify_webhook_disabled() from public;

create trigger notify_webhook_disabled after update of enabled on public.webhook_subscriptions
  for each row when (old.enabled and not new.enabled and new.disabled_reason in ('gone', 'failing'))
  execute function private.notify_webhook_disabled();

-- ---------------------------------------------------------------- not in a schema diff
-- A schema diff writes none of what follows: pg_cron's jobs are rows of cron.job. A
-- migration that changes them says so by hand (docs/architecture.md, Migrations).

-- On a hosted project pg_cron calls the webhooks worker every ten seconds through pg_net,
-- with the Vault secrets the notifications worker's schedule reads (notifications.sql says
-- how to create them), and each run follows the queue as the notifications worker's does.
-- The local stack runs it on the same cadence.
do $$
begin
  if not exists (select 1 from pg_available_extensions where name = 'pg_net')
     or not exists (select 1 from pg_namespace where nspname = 'vault')
     or not exists (select 1 from pg_available_extensions where name = 'pg_cron') then
    raise notice 'pg_net, Vault or pg_cron is missing: the webhooks worker is not scheduled here';
    return;
  end if;
  create extension if not exists pg_net;
  create extension if not exists pg_cron;
  perform cron.unschedule(jobid) from cron.job where jobname = 'webhooks-worker';
  perform cron.schedule('webhooks-worker', '10 seconds', $job$
    select net.http_post(
      url := (select decrypted_secret from vault.decrypted_secrets where name = 'project_url')
             || '/functions/v1/webhooks-worker',
      headers := jsonb_build_object(
        'content-type', 'application/json',
        'authorization', 'Bearer ' || (select decrypted_secret from vault.decrypted_secrets where name = 'service_role_key')),
      body := '{"follow": true}'::jsonb,
      timeout_milliseconds := 55000)
  $job$);
end
$$;
