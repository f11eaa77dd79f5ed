-- Availability, rates and restrictions (ARI) of a property for a channel manager to
-- mirror, as runs of days, for an API key with ari:read.

-- What a channel mirrors of one of the key's properties from first_day to last_day (both
-- included), for a key with ari:read; null for a property it does not act for. Per active
-- room type, its units in service and the rooms it has left each night (units in service,
-- less those blocked and the stays held that night, never below 0); per active rate plan,
-- its calendar as it applies (private.rate_plan_calendars). Both as runs of consecutive
-- days that carry the same values, {from, to, ...} with both ends included, which is how
-- channels take their updates: a year of one price is one run, not 365 days.
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
  rooms as (
    select u.room_type_id, count(*)::integer as units from in_service u group by u.room_type_id
  ),
  -- Each held stay and each block, cut to the days asked, takes a room from its first
  -- night and gives it back the night after its last.
  held as materialized (
    select h.room_type_id, h.check_in, h.check_out
    from types t cross join lateral (
      select r.room_type_id, r.check_in, r.check_out from public.reservations r
      where r.tenant_id = tenant and r.room_type_id = t.id and r.status in ('pending', 'confirmed', 'checked_in')
        and r.check_in <= last_day and r.check_in >= first_day - longest and r.check_out > first_day) h
  ),
  blocked as materialized (
    select u.room_type_id, lower(b.nights) as starts_on, upper(b.nights) as ends_on
    from in_service u join public.unit_blocks b on b.tenant_id = tenant and b.unit_id = u.id
    where b.nights && daterange(first_day, last_day, '[]')
  ),
  changes as (
    select c.room_type_id, c.day, sum(c.change)::integer as change
    from (
      select h.room_type_id, greatest(h.check_in, first_day) as day, 1 as change from held h
      union all select h.room_type_id, least(h.check_out, last_day + 1), -1 from held h
      union all select b.room_type_id, greatest(b.starts_on, first_day), 1 from blocked b
      union all select b.room_type_id, least(b.ends_on, last_day + 1), -1 from blocked b
    ) c
    group by c.room_type_id, c.day
  ),
  nights as (
    select t.id as room_type_id, d.day::date as day,
           greatest(0, coalesce(r.units, 0) - coalesce(sum(c.change) over (partition by t.id order by d.day), 0))::integer
             as available
    from types t
    cross join generate_series(first_day, last_day, interval '1 day') d(day)
    left join rooms r on r.room_type_id = t.id
    left join changes c on c.room_type_id = t.id and c.day = d.day::date
  ),
  -- A run starts where a day's value differs from the day before's.
  night_runs as (
    select n.room_type_id, n.day, n.available,
           sum(n.starts) over (partition by n.room_type_id order by n.day) as run
    from (select n.*, case when n.available is distinct from lag(n.available) over (partition by n.room_type_id order by n.day)
                           then 1 else 0 end as starts
          from nights n) n
  ),
  availability as materialized (
    select a.room_type_id,
           json_agg(json_build_object('from', a.first, 'to', a.last, 'available', a.available) order by a.first) as runs
    from (select r.room_type_id, r.run, min(r.day) as first, max(r.day) as last, min(r.available) as available
          from night_runs r group by r.room_type_id, r.run) a
    group by a.room_type_id
  ),
  plans as materialized (
    select p.id, p.code, p.name, p.room_type_id, p.currency from public.rate_plans p
    where p.tenant_id = tenant and p.property_id = for_property and p.active
  ),
  days as (
    select c.*,
           case when (c.price, c.extra_adult_price, c.extra_child_price, c.min_stay, c.max_stay, c.closed_to_arrival,
                      c.closed_to_departure, c.closed)
                     is distinct from
                     lag((c.price, c.extra_adult_price, c.extra_child_price, c.min_stay, c.max_stay, c.closed_to_arrival,
                          c.closed_to_departure, c.closed)) over (partition by c.rate_plan_id order by c.day)
                then 1 else 0 end as starts
    from private.rate_plan_calendars(array(select p.id from plans p), first_day, last_day) c
  ),
  day_runs as (
    select d.*, sum(d.starts) over (partition by d.rate_plan_id order by d.day) as run from days d
  ),
  calendars as materialized (
    select r.rate_plan_id,
           json_agg(json_build_object('from', r.first, 'to', r.last, 'price', r.price, 'extraAdultPrice', r.extra_adult_price,
                                      'extraChildPrice', r.extra_child_price, 'minStay', r.min_stay, 'maxStay', r.max_stay,
                                      'closedToArrival', r.closed_to_arrival, 'closedToDeparture', r.closed_to_departure,
                                      'closed', r.closed) order by r.first) as runs
    from (select d.rate_plan_id, d.run, min(d.day) as first, max(d.day) as last, min(d.price) as price,
                 min(d.extra_adult_price) as extra_adult_price, min(d.extra_child_price) as extra_child_price,
                 min(d.min_stay) as min_stay, min(d.max_stay) as max_stay, bool_and(d.closed_to_arrival) as closed_to_arrival,
                 bool_and(d.closed_to_departure) as closed_to_departure, bool_and(d.closed) as closed
          from day_runs d group by d.rate_plan_id, d.run) r
    group by r.rate_plan_id
  )
  select json_build_object(
    'propertyId', for_property, 'from', first_day, 'to', last_day,
    'roomTypes', coalesce((
      select json_agg(json_build_object('roomTypeId', t.id, 'code', t.code, 'name', t.name,
                                        'units', coalesce((select r.units from rooms r where r.room_type_id = t.id), 0),
                                        'availability', (select a.runs from availability a where a.room_type_id = t.id))
                      order by t.code)
      from types t), '[]'),
    'ratePlans', coalesce((
      select json_agg(json_build_object('ratePlanId', p.id, 'code', p.code, 'name', p.name, 'roomTypeId', p.room_type_id,
                                        'currency', p.currency,
                                        'days', (select c.runs from calendars c where c.rate_plan_id = p.id))
                      order by p.code)
      from plans p), '[]')));
end
$$;

revoke all on function private.channel_ari(uuid, date, date) from public;
grant execute on function private.channel_ari(uuid, date, date) to api_integration;

