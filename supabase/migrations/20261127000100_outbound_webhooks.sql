-- Outbound webhooks: a tenant subscribes HTTPS endpoints to domain events, and every
-- change that makes an event records it, one delivery per subscription it matches, and a
-- job on the pgmq queue `webhooks` for each delivery, in the change's own transaction, so
-- a change rolled back delivers nothing. The `webhooks-worker` function drains the queue
-- and signs each request as the Standard Webhooks specification says (docs/webhooks.md).
--
-- - webhook_subscriptions: an endpoint, the event types and properties it wants (empty:
--   all), whether it is enabled and why not, and its signing secret (with the previous
--   one during a rotation's overlap). Owners and admins manage them; the secret is never
--   readable through RLS'd selects: the API shows it once, at creation and at rotation.
-- - webhook_events: what happened, with the payload as it was at that moment.
-- - webhook_deliveries: one per (event, subscription), its state and next attempt.
-- - webhook_attempts: every request the worker made, with its outcome.

-- ---------------------------------------------------------------- the queue

do $$
begin
  if not exists (select 1 from pgmq.list_queues() q where q.queue_name = 'webhooks') then
    perform pgmq.create('webhooks');
  end if;
end
$$;

-- ---------------------------------------------------------------- event types

-- The event types, versioned with the payload's `version` (docs/webhooks.md). The SQL
-- helpers here have no SET clause, so that Postgres inlines them or keeps their plans (a
-- schema test holds every private SQL function to it): every name in them is qualified.
create or replace function private.webhook_event_types()
returns text[]
language sql immutable
as $$
  select array['reservation.created', 'reservation.updated', 'reservation.checked_in', 'reservation.checked_out',
               'reservation.cancelled', 'payment.recorded', 'access_code.created', 'access_code.revoked',
               'task.status_changed', 'guest.updated', 'webhook.test']
$$;

-- ---------------------------------------------------------------- subscriptions

create table public.webhook_subscriptions (
  tenant_id uuid not null default private.request_tenant_id()
    constraint webhook_subscriptions_tenant_id_fkey references public.tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  -- Checked again at delivery, after DNS resolution (src/webhook-delivery/endpoint.ts).
  url text not null constraint webhook_subscriptions_url_check
    check (length(url) <= 2000 and url ~ '^https?://[^/?#@[:space:]]+'),
  description text constraint webhook_subscriptions_description_check check (length(description) <= 500),
  -- Empty: every event type (webhook.test only ever goes to the subscription it tests).
  event_types text[] not null default '{}' constraint webhook_subscriptions_event_types_check
    check (event_types <@ private.webhook_event_types() and not ('webhook.test' = any (event_types))
           and cardinality(event_types) <= 20),
  -- Empty: every property. A guest event reaches a subscription limited to properties when
  -- the guest has a stay at one of them.
  property_ids uuid[] not null default '{}'
    constraint webhook_subscriptions_property_ids_check check (cardinality(property_ids) <= 100),
  enabled boolean not null default true,
  -- Why it is disabled: by a manager, because the endpoint answered 410 Gone, or because
  -- every delivery failed for a day.
  disabled_reason text constraint webhook_subscriptions_disabled_reason_check
    check (disabled_reason in ('manual', 'gone', 'failing')),
  disabled_at timestamptz,
  -- When the deliveries started failing without a success since; null while healthy.
  failing_since timestamptz,
  -- whsec_ and the base64 of 32 random bytes, as Standard Webhooks secrets are written.
  secret text not null default 'whsec_' || encode(extensions.gen_random_bytes(32), 'base64')
    constraint webhook_subscriptions_secret_check check (secret ~ '^whsec_[A-Za-z0-9+/]{43}=$'),
  -- The secret a rotation replaced, still signing beside the new one until it expires.
  previous_secret text constraint webhook_subscriptions_previous_secret_check
    check (previous_secret ~ '^whsec_[A-Za-z0-9+/]{43}=$'),
  previous_secret_expires_at timestamptz,
  created_by uuid default auth.uid()
    constraint webhook_subscriptions_created_by_fkey references auth.users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint webhook_subscriptions_pkey primary key (tenant_id, id),
  constraint webhook_subscriptions_disabled_with_reason_and_time
    check (enabled = (disabled_reason is null) and enabled = (disabled_at is null)),
  constraint webhook_subscriptions_previous_secret_with_expiry
    check ((previous_secret is null) = (previous_secret_expires_at is null))
);

-- What an event matches: the tenant's enabled subscriptions.
create index webhook_subscriptions_tenant_enabled_idx on public.webhook_subscriptions (tenant_id) where enabled;
create index webhook_subscriptions_tenant_created_idx on public.webhook_subscriptions (tenant_id, created_at, id);

-- A subscription's properties are the tenant's; its secrets change only by rotation
-- (private.rotate_webhook_secret) and are never set by hand; disabling stamps the time.
create or replace function private.webhook_subscription_before_write()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  if exists (select from unnest(new.property_ids) as p(id)
             where not exists (select from public.properties pr where pr.tenant_id = new.tenant_id and pr.id = p.id)) then
    raise exception 'a webhook subscription names a property the tenant does not have'
      using errcode = '23503', constraint = 'webhook_subscriptions_property_ids_fkey';
  end if;
  if tg_op = 'UPDATE' then
    if new.enabled and not old.enabled then
      new.disabled_reason := null;
      new.disabled_at := null;
      new.failing_since := null;
    elsif not new.enabled and old.enabled then
      new.disabled_reason := coalesce(new.disabled_reason, 'manual');
      new.disabled_at := coalesce(new.disabled_at, now());
    end if;
  elsif not new.enabled then
    new.disabled_reason := coalesce(new.disabled_reason, 'manual');
    new.disabled_at := coalesce(new.disabled_at, now());
  end if;
  return new;
end
$$;

create trigger webhook_subscription_before_write before insert or update on public.webhook_subscriptions
  for each row execute function private.webhook_subscription_before_write();
create trigger forbid_tenant_change before update of tenant_id, created_at, created_by on public.webhook_subscriptions
  for each row execute function private.forbid_tenant_change();
create trigger touch_updated_at before update on public.webhook_subscriptions
  for each row execute function private.touch_updated_at();

alter table public.webhook_subscriptions enable row level security;
revoke all on public.webhook_subscriptions from anon, authenticated;
-- Every column but the secrets; those only through the definer functions below.
grant select (tenant_id, id, url, description, event_types, property_ids, enabled, disabled_reason, disabled_at,
              failing_since, previous_secret_expires_at, created_by, created_at, updated_at)
  on public.webhook_subscriptions to authenticated;
grant insert (url, description, event_types, property_ids, enabled) on public.webhook_subscriptions to authenticated;
grant update (url, description, event_types, property_ids, enabled) on public.webhook_subscriptions to authenticated;
grant delete on public.webhook_subscriptions to authenticated;

create policy "managers read webhook subscriptions" on public.webhook_subscriptions
  for select to authenticated
  using (tenant_id = (select private.request_tenant_id()) and (select private.request_is_manager()));
create policy "managers create webhook subscriptions" on public.webhook_subscriptions
  for insert to authenticated
  with check (tenant_id = (select private.request_tenant_id()) and (select private.request_is_manager()));
create policy "managers update webhook subscriptions" on public.webhook_subscriptions
  for update to authenticated
  using (tenant_id = (select private.request_tenant_id()) and (select private.request_is_manager()))
  with check (tenant_id = (select private.request_tenant_id()));
create policy "managers delete webhook subscriptions" on public.webhook_subscriptions
  for delete to authenticated
  using (tenant_id = (select private.request_tenant_id()) and (select private.request_is_manager()));

-- The secret of a subscription the manager can see: what creation and rotation answer.
create or replace function private.webhook_subscription_secret(subscription uuid)
returns text
language plpgsql stable security definer
set search_path = ''
as $$
declare
  found text;
begin
  if not coalesce(private.request_is_manager(), false) then
    raise exception 'only an owner or admin reads a webhook secret' using errcode = '42501';
  end if;
  select s.secret into found from public.webhook_subscriptions s
  where s.tenant_id = private.request_tenant_id() and s.id = subscription;
  return found;
end
$$;
revoke all on function private.webhook_subscription_secret(uuid) from public;
grant execute on function private.webhook_subscription_secret(uuid) to authenticated;

-- A new secret; the one it replaces keeps signing beside it for `overlap` (at most a
-- week), so a receiver can switch without missing a delivery. Returns the new secret, or
-- null when the manager cannot see the subscription.
create or replace function private.rotate_webhook_secret(subscription uuid, overlap interval default interval '24 hours')
returns text
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  rotated text;
begin
  if not coalesce(private.request_is_manager(), false) then
    raise exception 'only an owner or admin rotates a webhook secret' using errcode = '42501';
  end if;
  if overlap < interval '0' or overlap > interval '7 days' then
    raise exception 'a rotation''s overlap is between 0 and 7 days' using errcode = '22023';
  end if;
  update public.webhook_subscriptions s
  set previous_secret = case when overlap > interval '0' then s.secret end,
      previous_secret_expires_at = case when overlap > interval '0' then now() + overlap end,
      secret = 'whsec_' || encode(extensions.gen_random_bytes(32), 'base64')
  where s.tenant_id = private.request_tenant_id() and s.id = subscription
  returning s.secret into rotated;
  return rotated;
end
$$;
revoke all on function private.rotate_webhook_secret(uuid, interval) from public;
grant execute on function private.rotate_webhook_secret(uuid, interval) to authenticated;

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
  constraint webhook_deliveries_pkey primary key (tenant_id, id),
  constraint webhook_deliveries_tenant_id_event_id_subscription_id_key unique (tenant_id, event_id, subscription_id),
  constraint webhook_deliveries_tenant_id_event_id_fkey foreign key (tenant_id, event_id)
    references public.webhook_events (tenant_id, id) on delete cascade,
  constraint webhook_deliveries_tenant_id_subscription_id_fkey foreign key (tenant_id, subscription_id)
    references public.webhook_subscriptions (tenant_id, id) on delete cascade,
  constraint webhook_deliveries_ended_exactly_when_not_pending check ((status = 'pending') = (ended_at is null))
);
create index webhook_deliveries_tenant_subscription_created_idx
  on public.webhook_deliveries (tenant_id, subscription_id, created_at desc, id desc);
-- The delivery before this one, for the same subscription and reservation, still pending.
create index webhook_deliveries_tenant_order_idx
  on public.webhook_deliveries (tenant_id, subscription_id, reservation_id, sequence)
  where status = 'pending' and reservation_id is not null;

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
-- it. Returns the event.
create or replace function private.emit_webhook_event(
  tenant uuid, event_type text, properties uuid[], reservation uuid, data jsonb
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
    insert into public.webhook_deliveries (tenant_id, event_id, subscription_id, reservation_id)
    select tenant, event, s.id, reservation
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
revoke all on function private.emit_webhook_event(uuid, text, uuid[], uuid, jsonb) from public;

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
-- the secrets it signs with), records each attempt and the delivery's state, and marks a
-- subscription failing, healthy again, or disabled.
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
grant update (status, attempts, next_attempt_at, last_attempt_at, last_status_code, ended_at)
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

-- The worker records a claim in one call, as private.settle_notification_claim does for
-- notifications (that migration says why):
--   {finished: [msg_id], postponed: [{msgId, delaySeconds}],
--    tenants: [{tenantId, attempts: [...], deliveries: [...], subscriptions: [...]}]}
-- `finished` jobs are deleted; `postponed` ones come back after their delay (a retry, or a
-- delivery waiting for the one before it). Then, as background_worker in each tenant's
-- context: the attempts are inserted, the deliveries take their new state (a pending one
-- only), and the subscriptions theirs: failing since a time, healthy again, or disabled
-- (the trigger below tells the managers).
create or replace function private.settle_webhook_claim(claim jsonb)
returns void
language plpgsql
set search_path = ''
as $$
declare
  tenant record;
begin
  perform pgmq.delete('webhooks', array(select m::bigint from jsonb_array_elements_text(claim -> 'finished') as f(m)));
  perform pgmq.set_vt('webhooks', p."msgId", p."delaySeconds")
  from jsonb_to_recordset(claim -> 'postponed') as p("msgId" bigint, "delaySeconds" integer);

  perform set_config('role', 'background_worker', true);
  for tenant in
    select * from jsonb_to_recordset(claim -> 'tenants')
      as t("tenantId" uuid, attempts jsonb, deliveries jsonb, subscriptions jsonb)
  loop
    perform set_config('app.tenant_id', tenant."tenantId"::text, true);

    insert into public.webhook_attempts (tenant_id, delivery_id, attempt, started_at, duration_ms, status_code, outcome,
                                         error, response_snippet, next_attempt_at)
    select private.request_tenant_id(), a."deliveryId", a.attempt, a."startedAt", a."durationMs", a."statusCode", a.outcome,
           a.error, a."responseSnippet", a."nextAttemptAt"
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
    where d.id = c.id and d.status = 'pending';

    -- failingSince: set it if unset (a failure), or clear it (a success); disable: why.
    update public.webhook_subscriptions s
    set failing_since = case when c.healthy then null else coalesce(s.failing_since, c."failingSince") end,
        enabled = case when c.disable is not null then false else s.enabled end,
        disabled_reason = case when c.disable is not null and s.enabled then c.disable else s.disabled_reason end
    from jsonb_to_recordset(coalesce(tenant.subscriptions, '[]')) as c(
      id uuid, healthy boolean, "failingSince" timestamptz, disable text)
    where s.id = c.id;
  end loop;
end
$$;
revoke all on function private.settle_webhook_claim(jsonb) from public;

-- ---------------------------------------------------------------- telling the managers

-- A subscription the worker disabled (its endpoint answered 410 Gone, or every delivery
-- failed for a day) has nobody to tell but the tenant: a `system` notification,
-- `webhook_disabled`, delivered in_app to the owners' and admins' inboxes like a failed
-- notification's notice. A manager's own disabling tells nobody.
alter table public.notifications
  drop constraint notifications_template_key_check,
  add constraint notifications_template_key_check check (template_key in (
    'checkin_reminder', 'checkout_summary', 'reservation_cancelled', 'access_code_delivery',
    'check_in_alerts', 'nightly_summary', 'delivery_failed', 'webhook_disabled'));
alter table public.notification_preferences
  drop constraint notification_preferences_template_key_check,
  add constraint notification_preferences_template_key_check check (template_key in (
    'checkin_reminder', 'checkout_summary', 'reservation_cancelled', 'access_code_delivery',
    'check_in_alerts', 'nightly_summary', 'marketing_emails', 'delivery_failed', 'webhook_disabled'));
alter table public.inbox_messages
  drop constraint inbox_messages_template_key_check,
  add constraint inbox_messages_template_key_check
    check (template_key in ('check_in_alerts', 'delivery_failed', 'webhook_disabled'));

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

-- ---------------------------------------------------------------- the schedule

-- On a hosted project pg_cron calls the webhooks worker every ten seconds through pg_net,
-- with the Vault secrets the notifications worker's schedule reads (migration
-- *_schedules.sql says how to create them). The local stack runs it on the same cadence.
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
      body := '{}'::jsonb,
      timeout_milliseconds := 55000)
  $job$);
end
$$;
