-- What a channel reads of a year is set out one value a day: the ARI answers each room
-- type's holds and each plan's defaults and changed days, and the API counts and fills
-- them. A derived plan's price is worked out inline, and the calendars of every day start
-- from the days a plan sets (supabase/schemas/rates.sql and external.sql say how).

-- A derived plan's amount from its base plan's: a percentage of it, rounded half away from
-- zero to the minor unit, or an amount added; never below 0 or above a price's maximum.
-- SQL without a SET clause, so that the planner inlines it where the calendars work it out
-- for each day of a derived plan, instead of calling a function three times a day. It
-- names nothing but built-in operators and functions, which pg_catalog resolves first.
create or replace function private.derived_price(base bigint, percent numeric, amount bigint)
returns bigint
language sql
immutable
as $$
  select least(1000000000, greatest(0, case when percent is not null then round(base * (100 + percent) / 100)
                                            else base + coalesce(amount, 0) end))::bigint
$$;

-- The plans' calendars where something is set, from first_day to last_day (both
-- included), in no particular order: for each plan, a row without a day, what a day that
-- sets nothing takes (the plan's defaults; a derived plan's prices from its base plan's
-- defaults), and a row for each day that the plan or its base plan sets, as the day
-- applies. Read as the caller, under the tables' policies: a plan the caller cannot see
-- has no rows. What a channel reads of a year (private.channel_ari) and the calendar of
-- every day (private.rate_plan_calendars) both start here, so a day means the same to both.
--
-- Each plan's days and its base plan's are read as one range of their key (tenant, plan,
-- day), and joined to each other, never to a generated series of days: the planner takes
-- a guess at how many days a series holds (a thousand), and would hash every plan day of
-- every tenant instead.
create or replace function private.rate_plan_calendar_days(plans uuid[], first_day date, last_day date)
returns table (
  rate_plan_id uuid, day date, price bigint, extra_adult_price bigint, extra_child_price bigint, min_stay integer,
  max_stay integer, closed_to_arrival boolean, closed_to_departure boolean, closed boolean
)
language plpgsql
stable
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
begin
  return query
  with plan as materialized (
    select p.tenant_id, p.id, p.derived_from_id, p.derived_percent, p.derived_amount, p.nightly_price,
           p.extra_adult_price, p.extra_child_price, p.min_stay, p.max_stay,
           b.nightly_price as base_price, b.extra_adult_price as base_extra_adult_price,
           b.extra_child_price as base_extra_child_price, b.min_stay as base_min_stay, b.max_stay as base_max_stay
    from public.rate_plans p
    left join public.rate_plans b on b.tenant_id = p.tenant_id and b.id = p.derived_from_id
    where p.id = any(plans)
  )
  select p.id, d.day,
    case when p.derived_from_id is null then coalesce(d.price, p.nightly_price)
         else private.derived_price(coalesce(d.base_price, p.base_price), p.derived_percent, p.derived_amount) end,
    case when p.derived_from_id is null then coalesce(d.extra_adult_price, p.extra_adult_price)
         else private.derived_price(coalesce(d.base_extra_adult_price, p.base_extra_adult_price), p.derived_percent, null) end,
    case when p.derived_from_id is null then coalesce(d.extra_child_price, p.extra_child_price)
         else private.derived_price(coalesce(d.base_extra_child_price, p.base_extra_child_price), p.derived_percent, null) end,
    case when p.derived_from_id is null then coalesce(d.min_stay, p.min_stay)
         else coalesce(d.min_stay, greatest(p.min_stay, coalesce(d.base_min_stay, p.base_min_stay))) end,
    case when p.derived_from_id is null then coalesce(d.max_stay, p.max_stay)
         else coalesce(d.max_stay, least(p.max_stay, coalesce(d.base_max_stay, p.base_max_stay))) end,
    coalesce(d.closed_to_arrival, d.base_closed_to_arrival, false),
    coalesce(d.closed_to_departure, d.base_closed_to_departure, false),
    coalesce(d.closed, d.base_closed, false)
  from plan p
  cross join lateral (
    select null::date as day, null::bigint as price, null::bigint as extra_adult_price, null::bigint as extra_child_price,
           null::integer as min_stay, null::integer as max_stay, null::boolean as closed_to_arrival,
           null::boolean as closed_to_departure, null::boolean as closed, null::bigint as base_price,
           null::bigint as base_extra_adult_price, null::bigint as base_extra_child_price, null::integer as base_min_stay,
           null::integer as base_max_stay, null::boolean as base_closed_to_arrival, null::boolean as base_closed_to_departure,
           null::boolean as base_closed
    union all
    select coalesce(o.day, bo.day), o.price, o.extra_adult_price, o.extra_child_price, o.min_stay, o.max_stay,
           o.closed_to_arrival, o.closed_to_departure, o.closed, bo.price, bo.extra_adult_price, bo.extra_child_price,
           bo.min_stay, bo.max_stay, bo.closed_to_arrival, bo.closed_to_departure, bo.closed
    from (select o.* from public.rate_plan_days o
          where o.tenant_id = p.tenant_id and o.rate_plan_id = p.id and o.day between first_day and last_day) o
    full join (select bo.* from public.rate_plan_days bo
               where bo.tenant_id = p.tenant_id and bo.rate_plan_id = p.derived_from_id
                 and bo.day between first_day and last_day) bo on bo.day = o.day
  ) d;
end
$$;

-- The plans' calendars as they apply, for each plan and each day from first_day to
-- last_day (both included): the days something sets (private.rate_plan_calendar_days),
-- what a day that sets nothing takes on every other. One statement for any number of
-- plans, so that availability reads every plan of a property at once. PL/pgSQL, so that a
-- connection keeps its plans.
create or replace function private.rate_plan_calendars(plans uuid[], first_day date, last_day date)
returns table (
  rate_plan_id uuid, day date, price bigint, extra_adult_price bigint, extra_child_price bigint, min_stay integer,
  max_stay integer, closed_to_arrival boolean, closed_to_departure boolean, closed boolean
)
language plpgsql
stable
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
begin
  return query
  with days as materialized (
    select * from private.rate_plan_calendar_days(plans, first_day, last_day)
  )
  select p.rate_plan_id, g.day::date, coalesce(d.price, p.price), coalesce(d.extra_adult_price, p.extra_adult_price),
         coalesce(d.extra_child_price, p.extra_child_price), coalesce(d.min_stay, p.min_stay),
         case when d.day is null then p.max_stay else d.max_stay end,
         coalesce(d.closed_to_arrival, p.closed_to_arrival), coalesce(d.closed_to_departure, p.closed_to_departure),
         coalesce(d.closed, p.closed)
  from days p
  cross join generate_series(first_day, last_day, interval '1 day') g(day)
  left join days d on d.rate_plan_id = p.rate_plan_id and d.day = g.day::date
  where p.day is null
  order by p.rate_plan_id, g.day;
end
$$;

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
