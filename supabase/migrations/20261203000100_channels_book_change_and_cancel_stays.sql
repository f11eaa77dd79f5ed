-- Channel managers book, change and cancel stays through the integration API: a
-- reservation keeps the channel it came through, a booking's reference is its
-- channel's, and a key with reservations:write reads what booking needs and writes
-- the stays of its properties that channels booked.

alter table public.reservations
  add column channel text constraint reservations_channel_check check (length(btrim(channel)) between 1 and 100);

drop index public.reservations_tenant_source_external_reference_key;
create unique index reservations_tenant_channel_external_reference_key
  on public.reservations (tenant_id, source, channel, external_reference) nulls not distinct
  where external_reference is not null;

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

