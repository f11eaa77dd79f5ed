-- The integration API (/v1/external/*): a request carries an API key (api-keys.sql) and
-- runs as the role api_integration (baseline.sql), in the tenant of its key, for the
-- properties it acts for and as far as its scopes go: it sees those properties'
-- reservations and their payments, records payments on them, and nothing else. Here:
-- the request's context, the key's authentication, the rate limits that every instance
-- of the api function shares, and the idempotency keys that make an integration's
-- retries safe.

-- ---------------------------------------------------------------- the request's context

-- The properties the request's key acts for; null when it acts for all of its tenant's.
create or replace function private.request_property_ids()
returns uuid[]
language plpgsql stable
set search_path = ''
as $$
begin
  return nullif(pg_catalog.current_setting('app.property_ids', true), '')::uuid[];
end
$$;

-- Whether the request's key acts for every property of its tenant.
create or replace function private.request_all_properties()
returns boolean
language plpgsql stable
set search_path = ''
as $$
begin
  return coalesce(nullif(pg_catalog.current_setting('app.all_properties', true), '')::boolean, false);
end
$$;

-- Whether the request's key holds one of `wanted` scopes.
create or replace function private.request_has_scope(wanted text[])
returns boolean
language plpgsql stable
set search_path = ''
as $$
begin
  return coalesce(nullif(pg_catalog.current_setting('app.api_scopes', true), '')::text[] && wanted, false);
end
$$;

create or replace function private.request_api_key_id()
returns uuid
language plpgsql stable
set search_path = ''
as $$
begin
  return nullif(pg_catalog.current_setting('app.api_key_id', true), '')::uuid;
end
$$;

grant execute on function private.request_property_ids(), private.request_all_properties(),
  private.request_has_scope(text[]), private.request_api_key_id() to api_integration;

grant select on public.reservations to api_integration;
grant select, insert on public.payments to api_integration;

-- A key that acts on reservations in any way sees its properties' reservations: reading
-- them, writing them, or recording payments on them. Which routes a scope opens is the
-- API's to say (src/external); what the key can reach at all is said here.
create policy "integrations read their properties' reservations" on public.reservations
  for select to api_integration
  using (
    tenant_id = (select private.request_tenant_id())
    and (select private.request_has_scope('{reservations:read,reservations:write,payments:write}'))
    and ((select private.request_all_properties()) or property_id = any ((select private.request_property_ids())::uuid[]))
  );

-- An integration reads its properties' reservation tallies (reservations.sql), as it
-- reads their reservations.
create policy "integrations read their properties' reservation tallies" on public.reservation_status_tallies
  for select to api_integration
  using (
    tenant_id = (select private.request_tenant_id())
    and (select private.request_has_scope('{reservations:read,reservations:write,payments:write}'))
    and ((select private.request_all_properties()) or property_id = any ((select private.request_property_ids())::uuid[]))
  );

-- Payments on the reservations the key sees (the reservations' own policy above).
create policy "integrations read their properties' payments" on public.payments
  for select to api_integration
  using (
    tenant_id = (select private.request_tenant_id())
    and exists (select 1 from public.reservations r where r.tenant_id = payments.tenant_id and r.id = payments.reservation_id)
  );
create policy "integrations record payments on their properties' reservations" on public.payments
  for insert to api_integration
  with check (
    tenant_id = (select private.request_tenant_id())
    and (select private.request_has_scope('{payments:write}'))
    and source = 'external' and payment_link_id is null and created_by is null
    and exists (select 1 from public.reservations r where r.tenant_id = payments.tenant_id and r.id = payments.reservation_id)
  );

-- ---------------------------------------------------------------- bookings from channels

-- A key with reservations:write books stays on its properties for a room type and a rate
-- plan, and changes and cancels the stays that came through a channel (those that carry
-- one); the front desk's own bookings are theirs alone. The reservation triggers check
-- every rule for it as they do for staff, as the integration: so it reads its properties,
-- room types and rate plans, with the plans' calendars, as far as booking needs them. A
-- booking names no unit (the front desk assigns one) and never moves a stay past check-in.
grant select on public.properties, public.room_types, public.rate_plans, public.rate_plan_days to api_integration;
grant insert (property_id, room_type_id, guest_id, rate_plan_id, check_in, check_out, adults, children, status,
              total_amount, currency, source, channel, external_reference, notes)
  on public.reservations to api_integration;
grant update (room_type_id, guest_id, rate_plan_id, check_in, check_out, adults, children, status, total_amount,
              notes, cancellation_reason)
  on public.reservations to api_integration;

create policy "integrations booking stays read their properties" on public.properties
  for select to api_integration
  using (
    tenant_id = (select private.request_tenant_id())
    and (select private.request_has_scope('{reservations:write}'))
    and ((select private.request_all_properties()) or id = any ((select private.request_property_ids())::uuid[]))
  );
create policy "integrations booking stays read their properties' room types" on public.room_types
  for select to api_integration
  using (
    tenant_id = (select private.request_tenant_id())
    and (select private.request_has_scope('{reservations:write}'))
    and ((select private.request_all_properties()) or property_id = any ((select private.request_property_ids())::uuid[]))
  );
create policy "integrations booking stays read their properties' rate plans" on public.rate_plans
  for select to api_integration
  using (
    tenant_id = (select private.request_tenant_id())
    and (select private.request_has_scope('{reservations:write}'))
    and ((select private.request_all_properties()) or property_id = any ((select private.request_property_ids())::uuid[]))
  );
-- The days of the plans the policy above lets it read.
create policy "integrations booking stays read their rate plans' days" on public.rate_plan_days
  for select to api_integration
  using (
    tenant_id = (select private.request_tenant_id())
    and exists (select 1 from public.rate_plans p where p.tenant_id = rate_plan_days.tenant_id and p.id = rate_plan_days.rate_plan_id)
  );

create policy "integrations book stays on their properties" on public.reservations
  for insert to api_integration
  with check (
    tenant_id = (select private.request_tenant_id())
    and (select private.request_has_scope('{reservations:write}'))
    and ((select private.request_all_properties()) or property_id = any ((select private.request_property_ids())::uuid[]))
    and channel is not null and unit_id is null and created_by is null
  );
create policy "integrations change and cancel their properties' channel bookings" on public.reservations
  for update to api_integration
  using (
    tenant_id = (select private.request_tenant_id())
    and (select private.request_has_scope('{reservations:write}'))
    and ((select private.request_all_properties()) or property_id = any ((select private.request_property_ids())::uuid[]))
    and channel is not null
  )
  with check (
    tenant_id = (select private.request_tenant_id())
    and (select private.request_has_scope('{reservations:write}'))
    and ((select private.request_all_properties()) or property_id = any ((select private.request_property_ids())::uuid[]))
    and channel is not null and status in ('pending', 'confirmed', 'checked_in', 'cancelled')
  );

-- A channel's booking, by its reference, is written by one request at a time: a retry
-- that races the first waits here until the first commits, then finds its stay and books
-- nothing. An advisory transaction lock, of its own class (the bytes "PMS" and 3; the unit
-- calendar's is 1 and the room type inventory's 2), so that it needs no privilege on any
-- table and ends with the transaction on the connection a transaction pooler gives it.
create or replace function private.lock_channel_booking(source text, channel text, external_reference text)
returns void
language plpgsql
set search_path = ''
as $$
begin
  perform pg_catalog.pg_advisory_xact_lock(1347244803, pg_catalog.hashtext(
    pg_catalog.concat_ws('/', private.request_tenant_id(), source, channel, external_reference)));
end
$$;

-- The guest a channel's booking names: the tenant's guest with that email (in any case),
-- else with that name and phone number, else a new guest. A guest found keeps what the
-- front desk recorded; the channel only fills what was empty. Runs as the guests' owner:
-- an integration neither reads nor lists guests, it only learns the id of the one its
-- booking is for.
create or replace function private.channel_guest(
  first_name text, last_name text, email text, phone text, country_code text, locale text
)
returns uuid
language plpgsql
security definer
set search_path = ''
as $$
declare
  tenant uuid := private.request_tenant_id();
  found_id uuid;
begin
  if tenant is null or not private.request_has_scope('{reservations:write}') then
    raise exception 'only an integration with the reservations:write scope names a booking''s guest'
      using errcode = '42501';
  end if;
  if channel_guest.email is not null then
    select g.id into found_id from public.guests g
    where g.tenant_id = tenant and lower(g.email) = lower(channel_guest.email)
    order by g.created_at, g.id limit 1;
  elsif channel_guest.phone is not null then
    select g.id into found_id from public.guests g
    where g.tenant_id = tenant and lower(g.last_name) = lower(btrim(channel_guest.last_name))
      and lower(g.first_name) = lower(btrim(channel_guest.first_name)) and g.phone = channel_guest.phone
    order by g.created_at, g.id limit 1;
  end if;
  if found_id is not null then
    update public.guests g
    set phone = coalesce(g.phone, channel_guest.phone), country_code = coalesce(g.country_code, channel_guest.country_code)
    where g.tenant_id = tenant and g.id = found_id
      and ((g.phone is null and channel_guest.phone is not null)
           or (g.country_code is null and channel_guest.country_code is not null));
    return found_id;
  end if;
  insert into public.guests (tenant_id, first_name, last_name, email, phone, country_code, locale, created_by)
  values (tenant, btrim(channel_guest.first_name), btrim(channel_guest.last_name), channel_guest.email, channel_guest.phone,
          channel_guest.country_code, coalesce(channel_guest.locale, 'en'), null)
  returning id into found_id;
  return found_id;
end
$$;

revoke all on function private.lock_channel_booking(text, text, text),
  private.channel_guest(text, text, text, text, text, text) from public;
grant execute on function private.lock_channel_booking(text, text, text),
  private.channel_guest(text, text, text, text, text, text) to api_integration;

-- ---------------------------------------------------------------- availability, rates and restrictions

-- What a channel mirrors of one of the key's properties from first_day to last_day (both
-- included), for a key with ari:read; null for a property it does not act for. Per active
-- room type, its units in service and what takes one of them on a night: each held stay
-- and each block of a unit in service, as the nights it takes, counted from first_day
-- (holdStarts[i] to holdEnds[i], the end excluded; a hold may begin before first_day and
-- end after last_day). Per active rate plan, its calendar as
-- private.rate_plan_calendar_days gives it: the `defaults` of a day that sets nothing,
-- and for each value the days that differ from them (`changes`, each {days, values},
-- days counted from first_day). The API sets both out one value a day
-- (src/external/ari.ts): it counts the holds into the rooms left each night (units in
-- service, less the holds, never below 0) in one pass over an array, where SQL would make
-- and sort a row for each night of each type, and fills each value's other days with its
-- default. A year of a plan whose prices change is then a year of prices, not of every
-- value of every day.
--
-- Runs as the tables' owner: the count of held stays takes in every stay of the type, and
-- a key that reads availability need not read a single reservation. So it checks the key
-- itself, against the request's settings, before it reads anything.
create or replace function private.channel_ari(for_property uuid, first_day date, last_day date)
returns json
language plpgsql
stable
security definer
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
declare
  tenant uuid := private.request_tenant_id();
  longest integer;
begin
  if tenant is null or not private.request_has_scope('{ari:read}')
     or not (private.request_all_properties() or for_property = any (private.request_property_ids())) then
    return null;
  end if;
  perform from public.properties p where p.tenant_id = tenant and p.id = for_property;
  if not found then
    return null;
  end if;
  -- No stay that meets the first day checked in more than the tenant's longest stay before it.
  select coalesce(max(r.check_out - r.check_in), 0) into longest from public.reservations r where r.tenant_id = tenant;
  return (
  with types as materialized (
    select rt.id, rt.code, rt.name from public.room_types rt
    where rt.tenant_id = tenant and rt.property_id = for_property and rt.status = 'active'
  ),
  in_service as materialized (
    select u.id, u.room_type_id from public.units u
    where u.tenant_id = tenant and u.property_id = for_property and u.status = 'active'
  ),
  -- Each type's held stays, then its blocks, read by the type's index in one range each;
  -- materialized, as the planner may take a property to have one type, and read them again
  -- for each type it finds.
  stays as materialized (
    select t.id as room_type_id, s.starts, s.ends
    from types t cross join lateral (
      select array_agg(r.check_in - first_day) as starts, array_agg(r.check_out - first_day) as ends
      from public.reservations r
      where r.tenant_id = tenant and r.room_type_id = t.id and r.status in ('pending', 'confirmed', 'checked_in')
        and r.check_in <= last_day and r.check_in >= first_day - longest and r.check_out > first_day) s
  ),
  blocks as materialized (
    select u.room_type_id, array_agg(lower(b.nights) - first_day) as starts, array_agg(upper(b.nights) - first_day) as ends
    from in_service u join public.unit_blocks b on b.tenant_id = tenant and b.unit_id = u.id
    where b.nights && daterange(first_day, last_day, '[]')
    group by u.room_type_id
  ),
  rooms as materialized (
    select u.room_type_id, count(*)::integer as units from in_service u group by u.room_type_id
  ),
  plans as materialized (
    select p.id, p.code, p.name, p.room_type_id, p.currency from public.rate_plans p
    where p.tenant_id = tenant and p.property_id = for_property and p.active
  ),
  set_days as materialized (
    select c.* from private.rate_plan_calendar_days(array(select p.id from plans p), first_day, last_day) c
  ),
  -- For each plan and each of its values, the days that differ from its defaults, in order,
  -- and what they hold. The aggregates take the rows as the sorted subquery gives them: an
  -- aggregate with its own ORDER BY sorts its input again, once for each of the sixteen.
  calendars as materialized (
    select c.rate_plan_id, json_build_object(
      'price', json_build_object(
        'days', coalesce(array_agg(c.day - first_day) filter (where c.price is distinct from c.default_price), '{}'),
        'values', coalesce(array_agg(c.price) filter (where c.price is distinct from c.default_price), '{}')),
      'extraAdultPrice', json_build_object(
        'days', coalesce(array_agg(c.day - first_day) filter (where c.extra_adult_price is distinct from c.default_extra_adult_price), '{}'),
        'values', coalesce(array_agg(c.extra_adult_price) filter (where c.extra_adult_price is distinct from c.default_extra_adult_price), '{}')),
      'extraChildPrice', json_build_object(
        'days', coalesce(array_agg(c.day - first_day) filter (where c.extra_child_price is distinct from c.default_extra_child_price), '{}'),
        'values', coalesce(array_agg(c.extra_child_price) filter (where c.extra_child_price is distinct from c.default_extra_child_price), '{}')),
      'minStay', json_build_object(
        'days', coalesce(array_agg(c.day - first_day) filter (where c.min_stay is distinct from c.default_min_stay), '{}'),
        'values', coalesce(array_agg(c.min_stay) filter (where c.min_stay is distinct from c.default_min_stay), '{}')),
      'maxStay', json_build_object(
        'days', coalesce(array_agg(c.day - first_day) filter (where c.max_stay is distinct from c.default_max_stay), '{}'),
        'values', coalesce(array_agg(c.max_stay) filter (where c.max_stay is distinct from c.default_max_stay), '{}')),
      'closedToArrival', json_build_object(
        'days', coalesce(array_agg(c.day - first_day) filter (where c.closed_to_arrival is distinct from c.default_closed_to_arrival), '{}'),
        'values', coalesce(array_agg(c.closed_to_arrival) filter (where c.closed_to_arrival is distinct from c.default_closed_to_arrival), '{}')),
      'closedToDeparture', json_build_object(
        'days', coalesce(array_agg(c.day - first_day) filter (where c.closed_to_departure is distinct from c.default_closed_to_departure), '{}'),
        'values', coalesce(array_agg(c.closed_to_departure) filter (where c.closed_to_departure is distinct from c.default_closed_to_departure), '{}')),
      'closed', json_build_object(
        'days', coalesce(array_agg(c.day - first_day) filter (where c.closed is distinct from c.default_closed), '{}'),
        'values', coalesce(array_agg(c.closed) filter (where c.closed is distinct from c.default_closed), '{}'))) as changes
    from (select c.*, d.price as default_price, d.extra_adult_price as default_extra_adult_price,
                 d.extra_child_price as default_extra_child_price, d.min_stay as default_min_stay,
                 d.max_stay as default_max_stay, d.closed_to_arrival as default_closed_to_arrival,
                 d.closed_to_departure as default_closed_to_departure, d.closed as default_closed
          from set_days c join set_days d on d.rate_plan_id = c.rate_plan_id and d.day is null
          where c.day is not null
          order by c.rate_plan_id, c.day) c
    group by c.rate_plan_id
  )
  select json_build_object(
    'propertyId', for_property, 'from', first_day, 'to', last_day,
    'roomTypes', coalesce((
      select json_agg(json_build_object('roomTypeId', t.id, 'code', t.code, 'name', t.name,
                                        'units', coalesce(r.units, 0),
                                        'holdStarts', coalesce(s.starts, '{}') || coalesce(b.starts, '{}'),
                                        'holdEnds', coalesce(s.ends, '{}') || coalesce(b.ends, '{}'))
                      order by t.code)
      from types t left join rooms r on r.room_type_id = t.id left join stays s on s.room_type_id = t.id
      left join blocks b on b.room_type_id = t.id), '[]'),
    'ratePlans', coalesce((
      select json_agg(json_build_object('ratePlanId', p.id, 'code', p.code, 'name', p.name, 'roomTypeId', p.room_type_id,
                                        'currency', p.currency,
                                        'defaults', json_build_object('price', d.price, 'extraAdultPrice', d.extra_adult_price,
                                          'extraChildPrice', d.extra_child_price, 'minStay', d.min_stay, 'maxStay', d.max_stay,
                                          'closedToArrival', d.closed_to_arrival, 'closedToDeparture', d.closed_to_departure,
                                          'closed', d.closed),
                                        'changes', coalesce(c.changes, '{}'))
                      order by p.code)
      from plans p join set_days d on d.rate_plan_id = p.id and d.day is null
      left join calendars c on c.rate_plan_id = p.id), '[]')));
end
$$;

revoke all on function private.channel_ari(uuid, date, date) from public;
grant execute on function private.channel_ari(uuid, date, date) to api_integration;

-- ---------------------------------------------------------------- the key

-- The key a key id and a secret's hash name, or null: an unknown key id and a wrong secret
-- alike. The hashes are compared over all their bits whatever differs (the bits of their
-- XOR are counted), so timing says nothing about how close a guess was.
create or replace function private.api_key_matching(key_id text, secret_hash bytea)
returns public.api_keys
language plpgsql stable
set search_path = ''
as $$
declare
  key public.api_keys;
begin
  select * into key from public.api_keys k where k.key_id = api_key_matching.key_id;
  if found and length(api_key_matching.secret_hash) = 32
     and pg_catalog.bit_count(('x' || pg_catalog.encode(key.secret_hash, 'hex'))::bit(256)
                              # ('x' || pg_catalog.encode(api_key_matching.secret_hash, 'hex'))::bit(256)) = 0 then
    return key;
  end if;
  return null;
end
$$;

-- The key's outcome, for the request's answer: 'active' keys give their tenant, their
-- properties (null for all of the tenant's) and their scopes, a revoked or expired one
-- only says so, and an unknown key id or a wrong secret returns no row. Last use is
-- stamped at most once a minute, and never by waiting for another request's lock. The
-- key is found by private.api_key_matching, which the rate limiter shares.
create or replace function private.authenticate_api_key(key_id text, secret_hash bytea)
returns table (state text, tenant_id uuid, property_ids uuid[], all_properties boolean, scopes text[], api_key_id uuid)
language plpgsql security definer
set search_path = ''
as $$
declare
  key public.api_keys := private.api_key_matching(authenticate_api_key.key_id, authenticate_api_key.secret_hash);
begin
  if key.id is null then
    return;
  end if;
  if key.revoked_at is not null then
    return query select 'revoked'::text, null::uuid, null::uuid[], null::boolean, null::text[], null::uuid;
    return;
  end if;
  if key.expires_at is not null and key.expires_at <= now() then
    return query select 'expired'::text, null::uuid, null::uuid[], null::boolean, null::text[], null::uuid;
    return;
  end if;
  perform from public.api_keys k
  where k.tenant_id = key.tenant_id and k.id = key.id
    and (k.last_used_at is null or k.last_used_at < now() - interval '1 minute')
  for update skip locked;
  if found then
    update public.api_keys k set last_used_at = now() where k.tenant_id = key.tenant_id and k.id = key.id;
  end if;
  return query
    select 'active'::text, key.tenant_id,
           case when key.all_properties then null
                else array(select p.property_id from public.api_key_properties p
                           where p.tenant_id = key.tenant_id and p.api_key_id = key.id order by p.property_id) end,
           key.all_properties, key.scopes, key.id;
end
$$;

-- ---------------------------------------------------------------- rate limits

-- Rate limits of the external API, counted here so that every instance of the api
-- function shares one count:
--
-- - Each API key may make `rate_limit` requests per `rate_limit_window_seconds` (600 per
--   60 s unless an operator sets otherwise for a key). A fixed window per key: it starts
--   with the key's first request after the last window ended, so keys do not all reset at
--   the same moment. Every request with a valid, active key counts, whatever its answer,
--   except one refused for the limit itself.
-- - A client address (the first X-Forwarded-For value, which the gateway sets) that sent
--   `app.failed_api_key_limit` unknown keys or wrong secrets (20 unless set) within
--   `app.failed_api_key_window_seconds` (60 unless set) is refused until that window ends,
--   before its key is even looked at. An operator changes either setting for the database:
--     alter database postgres set app.failed_api_key_limit = '50';
--
-- The API asks private.admit_api_key_request in a statement of its own, ahead of the
-- request's transaction and in the same write to the connection (src/external/
-- integration-scope.ts), so it costs no round trip: the counter's row lock lasts that one
-- statement, never a whole request, and a request that fails later still counted. The
-- counters are UNLOGGED tables: a count lives for a minute, writing it to the WAL (and
-- waiting for the disk at every request's commit) would buy nothing, and after a crash
-- every key simply starts a fresh window.

-- One row per key that has made a request: its current window and the requests counted in
-- it. A request updates the row in place (a HOT update: no indexed column changes, and the
-- fill factor leaves room on the page), so the table holds one live row per key whatever
-- the traffic. A deleted key's row goes with it.
create unlogged table public.api_key_request_windows (
  tenant_id uuid not null
    constraint api_key_request_windows_tenant_id_fkey references public.tenants (id) on delete cascade,
  api_key_id uuid not null,
  window_start timestamptz not null,
  requests integer not null constraint api_key_request_windows_requests_check check (requests >= 1),
  constraint api_key_request_windows_pkey primary key (tenant_id, api_key_id),
  constraint api_key_request_windows_tenant_id_api_key_id_fkey
    foreign key (tenant_id, api_key_id) references public.api_keys (tenant_id, id) on delete cascade
) with (fillfactor = 50);

alter table public.api_key_request_windows enable row level security;
revoke all on public.api_key_request_windows from anon, authenticated;
grant select on public.api_key_request_windows to authenticated;

-- Managers may see how much of its limit each of their keys is using; only the counting
-- function, as the table's owner, writes.
create policy "managers read their keys' request windows" on public.api_key_request_windows
  for select to authenticated
  using (tenant_id = (select private.request_tenant_id()) and (select private.request_is_manager()));

-- Unknown keys and wrong secrets per client address. A key that does not exist has no
-- tenant, so neither has this table: it lives in the private schema, which the Data API
-- does not expose, with row-level security on and no policy, so only its owner (the
-- functions below) reads or writes it. Rows of ended windows are purged every ten minutes.
create unlogged table private.failed_api_key_attempts (
  client_address text not null
    constraint failed_api_key_attempts_client_address_check check (length(client_address) between 1 and 100),
  window_start timestamptz not null,
  failures integer not null constraint failed_api_key_attempts_failures_check check (failures >= 1),
  constraint failed_api_key_attempts_pkey primary key (client_address)
) with (fillfactor = 50);

alter table private.failed_api_key_attempts enable row level security;
revoke all on private.failed_api_key_attempts from public, anon, authenticated, api_integration;

-- The policy for failed keys per client address: its quota and window, from the database's
-- settings where an operator set them to a whole number in range, else 20 per 60 s.
-- private.admit_api_key_request reads them the same way in place, as every request needs them.
create or replace function private.failed_api_key_policy(out quota integer, out window_seconds integer)
language plpgsql stable
set search_path = ''
as $$
begin
  quota := coalesce(substring(pg_catalog.current_setting('app.failed_api_key_limit', true)
                              from '^\s*([1-9][0-9]{0,5})\s*$')::integer, 20);
  window_seconds := least(coalesce(substring(pg_catalog.current_setting('app.failed_api_key_window_seconds', true)
                                             from '^\s*([1-9][0-9]{0,4})\s*$')::integer, 60), 86400);
end
$$;

-- Admits a request to /v1/external/* or refuses it, counting it where it counts. One row:
--   outcome        'admitted'  the key is valid and active, and within its limit: counted
--                  'limited'   the key is valid and active, and its limit is spent
--                  'throttled' the client address sent too many unknown keys or wrong
--                              secrets in its window; the key was not looked at
--                  'invalid'   an unknown key id or a wrong secret: counted for the address
--                  'inactive'  a revoked or expired key: not counted anywhere
--   policy         'api-key' or 'failed-keys', the policy the numbers below are of (null
--                  for 'inactive', and for 'invalid' without a client address)
--   quota, window_seconds   the policy: quota requests (or failures) per window
--   remaining      what is left of the quota in the current window, after this request
--   reset_seconds  whole seconds until the current window ends, at least 1
-- It answers and never raises: a refused request is an answer, and an error would also
-- be written to the server's log at every refused request.
-- The count is exact however many requests race: each upsert locks the key's (or the
-- address's) row and counts on its latest version. Only the address check that comes
-- first reads without a lock, so requests racing with failed keys from one address can
-- pass its limit by as many as race; each of them still fails and is counted.
-- Every request runs this, so it makes as few statements as it can: the address's row,
-- the key's row, and one upsert, last, so that the key's row stays locked only until the
-- commit that follows at once; the rest is PL/pgSQL expressions.
create or replace function private.admit_api_key_request(key_id text, secret_hash bytea, client_address text)
returns table (outcome text, policy text, quota integer, window_seconds integer, remaining integer, reset_seconds integer)
language plpgsql security definer
set search_path = ''
as $$
declare
  address text := nullif(left(admit_api_key_request.client_address, 100), '');
  key public.api_keys;
  span interval;
  since timestamptz;
  used integer;
begin
  if address is not null then
    -- private.failed_api_key_policy, in place.
    policy := 'failed-keys';
    quota := coalesce(substring(pg_catalog.current_setting('app.failed_api_key_limit', true)
                                from '^\s*([1-9][0-9]{0,5})\s*$')::integer, 20);
    window_seconds := least(coalesce(substring(pg_catalog.current_setting('app.failed_api_key_window_seconds', true)
                                               from '^\s*([1-9][0-9]{0,4})\s*$')::integer, 60), 86400);
    span := make_interval(secs => window_seconds);
    select f.window_start, f.failures into since, used
    from private.failed_api_key_attempts f where f.client_address = address;
    if found and used >= quota and since > now() - span then
      outcome := 'throttled';
      remaining := 0;
      reset_seconds := greatest(1, ceil(extract(epoch from since + span - now())))::integer;
      return next;
      return;
    end if;
  end if;

  key := private.api_key_matching(admit_api_key_request.key_id, admit_api_key_request.secret_hash);
  if key.id is null then
    outcome := 'invalid';
    if address is null then
      return next;
      return;
    end if;
    insert into private.failed_api_key_attempts as f (client_address, window_start, failures)
    values (address, now(), 1)
    on conflict on constraint failed_api_key_attempts_pkey do update
      set window_start = case when f.window_start <= now() - span then now() else f.window_start end,
          failures = case when f.window_start <= now() - span then 1 else f.failures + 1 end
    returning f.window_start, f.failures into since, used;
    remaining := greatest(quota - used, 0);
    reset_seconds := greatest(1, ceil(extract(epoch from since + span - now())))::integer;
    return next;
    return;
  end if;

  if key.revoked_at is not null or (key.expires_at is not null and key.expires_at <= now()) then
    outcome := 'inactive';
    policy := null;
    quota := null;
    window_seconds := null;
    return next;
    return;
  end if;

  -- A window that has ended starts again with this request; within the window, the count
  -- goes up only while it is under the limit, so a refused request changes nothing.
  policy := 'api-key';
  quota := key.rate_limit;
  window_seconds := key.rate_limit_window_seconds;
  span := make_interval(secs => window_seconds);
  insert into public.api_key_request_windows as w (tenant_id, api_key_id, window_start, requests)
  values (key.tenant_id, key.id, now(), 1)
  on conflict on constraint api_key_request_windows_pkey do update
    set window_start = case when w.window_start <= now() - span then now() else w.window_start end,
        requests = case when w.window_start <= now() - span then 1 else w.requests + 1 end
    where w.window_start <= now() - span or w.requests < key.rate_limit
  returning w.window_start, w.requests into since, used;
  if found then
    outcome := 'admitted';
    remaining := quota - used;
  else
    select w.window_start into since
    from public.api_key_request_windows w where w.tenant_id = key.tenant_id and w.api_key_id = key.id;
    outcome := 'limited';
    remaining := 0;
  end if;
  reset_seconds := greatest(1, ceil(extract(epoch from since + span - now())))::integer;
  return next;
end
$$;

-- Addresses whose window has ended hold nothing the limiter reads again; cleared every
-- ten minutes on the schedule below.
create or replace function private.purge_failed_api_key_attempts()
returns integer
language plpgsql security definer
set search_path = ''
as $$
declare
  purged integer;
begin
  delete from private.failed_api_key_attempts f
  where f.window_start <= now() - make_interval(secs => (private.failed_api_key_policy()).window_seconds);
  get diagnostics purged = row_count;
  return purged;
end
$$;

revoke all on function private.request_property_ids(), private.request_all_properties(),
  private.request_has_scope(text[]), private.request_api_key_id(),
  private.api_key_matching(text, bytea), private.authenticate_api_key(text, bytea), private.failed_api_key_policy(),
  private.admit_api_key_request(text, bytea, text), private.purge_failed_api_key_attempts() from public;

-- ---------------------------------------------------------------- idempotency keys

-- An integration that retries a POST with the same Idempotency-Key gets the first
-- answer again instead of a second write. Keys belong to the API key that sent
-- them and are honoured for 24 hours. Only a completed request leaves its answer
-- here: one that failed rolled back its claim with everything else, so a retry runs again.
create table public.idempotency_keys (
  tenant_id uuid not null default private.request_tenant_id()
    constraint idempotency_keys_tenant_id_fkey references public.tenants (id) on delete cascade,
  api_key_id uuid not null default private.request_api_key_id(),
  key text not null constraint idempotency_keys_key_check check (length(key) between 1 and 255),
  -- SHA-256 of the operation and its parsed input: a different request under a used key is refused.
  request_hash bytea not null constraint idempotency_keys_request_hash_check check (length(request_hash) = 32),
  response_status integer constraint idempotency_keys_response_status_check check (response_status between 200 and 299),
  response_headers jsonb not null default '{}',
  response_body text,
  created_at timestamptz not null default now(),
  constraint idempotency_keys_pkey primary key (tenant_id, api_key_id, key),
  constraint idempotency_keys_tenant_id_api_key_id_fkey
    foreign key (tenant_id, api_key_id) references public.api_keys (tenant_id, id) on delete cascade
);
create index idempotency_keys_tenant_created_idx on public.idempotency_keys (tenant_id, created_at);

alter table public.idempotency_keys enable row level security;
revoke all on public.idempotency_keys from anon, authenticated;
grant select, insert, update on public.idempotency_keys to api_integration;

create policy "integrations use their own key's idempotency keys" on public.idempotency_keys
  for all to api_integration
  using (tenant_id = (select private.request_tenant_id()) and api_key_id = (select private.request_api_key_id()))
  with check (tenant_id = (select private.request_tenant_id()) and api_key_id = (select private.request_api_key_id()));

-- Expired keys are only ignored by the API; this clears them out, every hour on the
-- schedule below.
create or replace function private.purge_expired_idempotency_keys()
returns integer
language sql security definer
set search_path = ''
as $$
  with purged as (
    delete from public.idempotency_keys where created_at < now() - interval '24 hours' returning 1
  )
  select count(*)::integer from purged
$$;
revoke all on function private.purge_expired_idempotency_keys() from public;

-- ---------------------------------------------------------------- not in a schema diff
-- A schema diff writes none of what follows: pg_cron's jobs are rows of cron.job. A
-- migration that changes them says so by hand (docs/architecture.md, Migrations).
-- Schedules are data in cron.job, so each job is unscheduled by name before it is
-- scheduled again, and running these twice leaves one row per job. A database without
-- pg_cron applies them as no-ops.

-- Expired idempotency keys, cleared every hour.
do $$
begin
  if not exists (select 1 from pg_available_extensions where name = 'pg_cron') then
    raise notice 'pg_cron is missing: expired idempotency keys are not purged on a schedule here';
    return;
  end if;
  create extension if not exists pg_cron;
  perform cron.unschedule(jobid) from cron.job where jobname = 'purge-idempotency-keys';
  perform cron.schedule('purge-idempotency-keys', '17 * * * *', 'select private.purge_expired_idempotency_keys()');
end
$$;

-- Failed API key attempts of ended windows, cleared every ten minutes.
do $$
begin
  if not exists (select 1 from pg_available_extensions where name = 'pg_cron') then
    raise notice 'pg_cron is missing: failed API key attempts are not purged on a schedule here';
    return;
  end if;
  create extension if not exists pg_cron;
  perform cron.unschedule(jobid) from cron.job where jobname = 'purge-failed-api-key-attempts';
  perform cron.schedule('purge-failed-api-key-attempts', '*/10 * * * *', 'select private.purge_failed_api_key_attempts()');
end
$$;
