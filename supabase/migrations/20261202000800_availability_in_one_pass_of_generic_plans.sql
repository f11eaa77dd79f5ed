SET local check_function_bodies = off;

DROP TRIGGER "touch_updated_at" ON "public"."rate_plan_days";

DROP FUNCTION "private"."availability"(uuid, date, date, integer, integer);

DROP FUNCTION "private"."rate_plan_calendar"(uuid, date, date);

ALTER TABLE "public"."rate_plan_days"
  SET (fillfactor=50);

CREATE OR REPLACE FUNCTION private.rate_plan_days_derived_without_prices()
  RETURNS TRIGGER
  LANGUAGE plpgsql
  SET search_path TO ''
  AS $function$
begin
  if exists (
      select from (select distinct w.tenant_id, w.rate_plan_id from written w
                   where num_nonnulls(w.price, w.extra_adult_price, w.extra_child_price) > 0) w
      where exists (select from public.rate_plans p
                    where p.tenant_id = w.tenant_id and p.id = w.rate_plan_id and p.derived_from_id is not null)) then
    raise exception 'a derived plan takes its prices from its base plan; set them there'
      using errcode = '23514', constraint = 'rate_plan_days_derived_without_prices';
  end if;
  return null;
end
$function$;

CREATE OR REPLACE FUNCTION private.rate_plan_calendars (
  plans     uuid[],
  first_day date,
  last_day  date
)
  RETURNS TABLE (
    rate_plan_id        uuid,
    day                 date,
    price               bigint,
    extra_adult_price   bigint,
    extra_child_price   bigint,
    min_stay            integer,
    max_stay            integer,
    closed_to_arrival   boolean,
    closed_to_departure boolean,
    closed              boolean
  )
  LANGUAGE plpgsql
  STABLE
  SET search_path TO ''
  SET plan_cache_mode TO 'force_generic_plan'
  AS $function$
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
  ),
  own as materialized (
    select o.* from plan p cross join lateral (
      select o.* from public.rate_plan_days o
      where o.tenant_id = p.tenant_id and o.rate_plan_id = p.id and o.day between first_day and last_day) o
  ),
  base as materialized (
    select o.* from (select distinct p.tenant_id, p.derived_from_id from plan p where p.derived_from_id is not null) p
    cross join lateral (
      select o.* from public.rate_plan_days o
      where o.tenant_id = p.tenant_id and o.rate_plan_id = p.derived_from_id and o.day between first_day and last_day) o
  )
  select p.id, d.day::date,
    case when p.derived_from_id is null then coalesce(o.price, p.nightly_price)
         else private.derived_price(coalesce(bo.price, p.base_price), p.derived_percent, p.derived_amount) end,
    case when p.derived_from_id is null then coalesce(o.extra_adult_price, p.extra_adult_price)
         else private.derived_price(coalesce(bo.extra_adult_price, p.base_extra_adult_price), p.derived_percent, null) end,
    case when p.derived_from_id is null then coalesce(o.extra_child_price, p.extra_child_price)
         else private.derived_price(coalesce(bo.extra_child_price, p.base_extra_child_price), p.derived_percent, null) end,
    case when p.derived_from_id is null then coalesce(o.min_stay, p.min_stay)
         else coalesce(o.min_stay, greatest(p.min_stay, coalesce(bo.min_stay, p.base_min_stay))) end,
    case when p.derived_from_id is null then coalesce(o.max_stay, p.max_stay)
         else coalesce(o.max_stay, least(p.max_stay, coalesce(bo.max_stay, p.base_max_stay))) end,
    coalesce(o.closed_to_arrival, bo.closed_to_arrival, false),
    coalesce(o.closed_to_departure, bo.closed_to_departure, false),
    coalesce(o.closed, bo.closed, false)
  from plan p
  cross join generate_series(first_day, last_day, interval '1 day') d(day)
  left join own o on o.rate_plan_id = p.id and o.day = d.day::date
  left join base bo on bo.rate_plan_id = p.derived_from_id and bo.day = d.day::date
  order by p.id, d.day;
end
$function$;

CREATE OR REPLACE FUNCTION private.quote_stays (
  plans     uuid[],
  standards integer[],
  arrival   date,
  departure date,
  adults    integer,
  children  integer
)
  RETURNS TABLE (
    rate_plan_id       uuid,
    standard_occupancy integer,
    currency           text,
    total              bigint,
    nights             json,
    restrictions       jsonb
  )
  LANGUAGE plpgsql
  STABLE
  SET search_path TO ''
  SET plan_cache_mode TO 'force_generic_plan'
  AS $function$
begin
  return query
  with asked as materialized (
    select distinct a.plan, a.standard,
           greatest(0, adults - a.standard) as extra_adults,
           greatest(0, children - greatest(0, a.standard - adults)) as extra_children
    from unnest(plans, standards) a(plan, standard)
  ),
  calendar as materialized (
    select c.* from private.rate_plan_calendars(array(select distinct a.plan from asked a), arrival, departure) c
  ),
  priced as (
    select a.plan, a.standard, c.*,
           c.price + a.extra_adults * c.extra_adult_price + a.extra_children * c.extra_child_price as amount
    from asked a join calendar c on c.rate_plan_id = a.plan
  ),
  -- Kept (materialized): whatever the statistics say of the plans, each quote is made once.
  quoted as materialized (
    select n.plan, n.standard,
      coalesce(sum(n.amount) filter (where n.day < departure), 0)::bigint as total,
      coalesce(json_agg(json_build_object('date', n.day, 'amount', n.amount) order by n.day)
               filter (where n.day < departure), '[]') as nights,
      coalesce(jsonb_agg(jsonb_build_object('code', 'closed', 'date', n.day) order by n.day)
               filter (where n.day < departure and n.closed), '[]')
      || coalesce(jsonb_agg(jsonb_build_object('code', 'closed_to_arrival', 'date', n.day))
                  filter (where n.day = arrival and n.closed_to_arrival), '[]')
      || coalesce(jsonb_agg(jsonb_build_object('code', 'closed_to_departure', 'date', n.day))
                  filter (where n.day = departure and n.closed_to_departure), '[]')
      || coalesce(jsonb_agg(jsonb_build_object('code', 'min_stay', 'date', n.day, 'minStay', n.min_stay))
                  filter (where n.day = arrival and departure - arrival < n.min_stay), '[]')
      || coalesce(jsonb_agg(jsonb_build_object('code', 'max_stay', 'date', n.day, 'maxStay', n.max_stay))
                  filter (where n.day = arrival and departure - arrival > n.max_stay), '[]') as restrictions
    from priced n
    group by n.plan, n.standard
  )
  select p.id, q.standard, p.currency, q.total, q.nights,
    case when p.active then '[]'::jsonb else '[{"code": "inactive"}]'::jsonb end || q.restrictions
  from quoted q join public.rate_plans p on p.id = q.plan;
end
$function$;

CREATE OR REPLACE FUNCTION private.quote_stay (
  plan      uuid,
  room_type uuid,
  arrival   date,
  departure date,
  adults    integer,
  children  integer
)
  RETURNS jsonb
  LANGUAGE plpgsql
  STABLE
  SET search_path TO ''
  AS $function$
declare
  standard integer;
begin
  standard := coalesce((select rt.standard_occupancy from public.room_types rt where rt.id = room_type), adults + children);
  return (
    select jsonb_build_object('ratePlanId', q.rate_plan_id, 'currency', q.currency, 'total', q.total,
                              'nights', q.nights::jsonb, 'restrictions', q.restrictions)
    from private.quote_stays(array[plan], array[standard], arrival, departure, adults, children) q);
end
$function$;

CREATE OR REPLACE FUNCTION private.availability (
  for_property uuid,
  arrival      date,
  departure    date,
  adults       integer,
  children     integer
)
  RETURNS json
  LANGUAGE plpgsql
  STABLE
  SET search_path TO ''
  SET plan_cache_mode TO 'force_generic_plan'
  AS $function$
declare
  asked daterange := daterange(arrival, departure, '[)');
  tenant uuid;
  longest integer;
begin
  select p.tenant_id into tenant from public.properties p where p.id = for_property;
  if not found then
    return null;
  end if;
  -- No stay that meets the arrival checked in more than the tenant's longest stay before it.
  select coalesce(max(r.check_out - r.check_in), 0) into longest from public.reservations r where r.tenant_id = tenant;
  return (
  with types as materialized (
    select rt.id, rt.code, rt.name, rt.standard_occupancy, rt.max_occupancy, rt.max_adults, rt.max_children
    from public.room_types rt where rt.tenant_id = tenant and rt.property_id = for_property and rt.status = 'active'
  ),
  in_service as materialized (
    select u.id, u.name, u.room_type_id from public.units u
    where u.tenant_id = tenant and u.property_id = for_property and u.status = 'active'
  ),
  held as materialized (
    select h.room_type_id, h.unit_id, daterange(h.check_in, h.check_out, '[)') as stay
    from types t cross join lateral (
      select r.room_type_id, r.unit_id, r.check_in, r.check_out from public.reservations r
      where r.tenant_id = tenant and r.room_type_id = t.id and r.status in ('pending', 'confirmed', 'checked_in')
        and r.check_in < departure and r.check_in >= arrival - longest and r.check_out > arrival) h
  ),
  blocked as materialized (
    select u.room_type_id, b.unit_id, b.nights
    from in_service u join public.unit_blocks b on b.tenant_id = tenant and b.unit_id = u.id and b.nights && asked
  ),
  busy as (
    select h.unit_id as id from held h where h.unit_id is not null
    union
    select b.unit_id from blocked b
  ),
  -- Per type, its rooms on its fullest night: units in service less those blocked and
  -- the stays held that night. Each stay and block, cut to the nights asked, adds one
  -- from its first night and takes it back on the night after its last; the running sum
  -- on each night, all of the night's changes taken together, is what that night holds.
  changes as (
    select h.room_type_id, greatest(lower(h.stay), arrival) as night, 1 as change from held h
    union all
    select h.room_type_id, least(upper(h.stay), departure), -1 from held h
    union all
    select b.room_type_id, greatest(lower(b.nights), arrival), 1 from blocked b
    union all
    select b.room_type_id, least(upper(b.nights), departure), -1 from blocked b
  ),
  fullest as materialized (
    select f.room_type_id, max(f.taken) as taken
    from (select c.room_type_id, sum(c.change) over (partition by c.room_type_id order by c.night) as taken
          from changes c) f
    group by f.room_type_id
  ),
  rooms as materialized (
    select u.room_type_id, count(*) as units from in_service u group by u.room_type_id
  ),
  free as materialized (
    select u.room_type_id, json_agg(json_build_object('unitId', u.id, 'name', u.name) order by u.name) as units
    from in_service u where u.id not in (select busy.id from busy) group by u.room_type_id
  ),
  plans as materialized (
    select p.id, p.code, p.name, p.room_type_id from public.rate_plans p
    where p.tenant_id = tenant and p.property_id = for_property and p.active
  ),
  -- A quote depends on the room type only through its standard occupancy: each plan is
  -- quoted once for each standard occupancy among the types it sells, all in one call.
  pairs as materialized (
    select distinct p.id as plan_id, t.standard_occupancy
    from plans p join types t on p.room_type_id is null or p.room_type_id = t.id
  ),
  quotes as materialized (
    select p.code, p.room_type_id, q.standard_occupancy,
           json_build_object('ratePlanId', q.rate_plan_id, 'code', p.code, 'name', p.name, 'currency', q.currency,
                             'total', q.total, 'nights', q.nights, 'restrictions', q.restrictions,
                             'bookable', jsonb_array_length(q.restrictions) = 0) as entry
    from private.quote_stays(array(select a.plan_id from pairs a order by a.plan_id, a.standard_occupancy),
                             array(select a.standard_occupancy from pairs a order by a.plan_id, a.standard_occupancy),
                             arrival, departure, adults, children) q
    join plans p on p.id = q.rate_plan_id
  )
  select json_build_object(
    'propertyId', for_property, 'arrival', arrival, 'departure', departure, 'nights', departure - arrival,
    'adults', adults, 'children', children,
    'roomTypes', coalesce(json_agg(json_build_object(
      'roomTypeId', t.id, 'code', t.code, 'name', t.name, 'maxOccupancy', t.max_occupancy,
      'fitsParty', adults + children <= t.max_occupancy and adults <= coalesce(t.max_adults, t.max_occupancy)
                   and children <= coalesce(t.max_children, t.max_occupancy - 1),
      'available', greatest(0, coalesce((select r.units from rooms r where r.room_type_id = t.id), 0)
                                - coalesce((select f.taken from fullest f where f.room_type_id = t.id), 0)),
      'freeUnits', coalesce((select f.units from free f where f.room_type_id = t.id), '[]'),
      'ratePlans', coalesce((
        select json_agg(q.entry order by q.code) from quotes q
        where q.standard_occupancy = t.standard_occupancy and (q.room_type_id is null or q.room_type_id = t.id)), '[]')
    ) order by t.code), '[]'))
  from types t);
end
$function$;

CREATE OR REPLACE FUNCTION private.write_rate_calendar (
  changes jsonb
)
  RETURNS integer
  LANGUAGE plpgsql
  SET search_path TO ''
  SET plan_cache_mode TO 'force_generic_plan'
  AS $function$
declare
  tenant uuid := private.request_tenant_id();
  change jsonb;
  plan uuid;
  first_day date;
  last_day date;
  isodays integer[];
  every_day boolean;
  given jsonb;
  -- Whether each column is given, and its value.
  has_price boolean; new_price bigint;
  has_extra_adult_price boolean; new_extra_adult_price bigint;
  has_extra_child_price boolean; new_extra_child_price bigint;
  has_min_stay boolean; new_min_stay integer;
  has_max_stay boolean; new_max_stay integer;
  has_closed_to_arrival boolean; new_closed_to_arrival boolean;
  has_closed_to_departure boolean; new_closed_to_departure boolean;
  has_closed boolean; new_closed boolean;
  rows_written integer;
  written integer := 0;
begin
  for change in select c.value from jsonb_array_elements(changes) c loop
    plan := (change ->> 'plan')::uuid;
    first_day := (change ->> 'from')::date;
    last_day := (change ->> 'to')::date;
    isodays := array(select jsonb_array_elements_text(change -> 'isodays')::integer);
    every_day := isodays @> array[1, 2, 3, 4, 5, 6, 7];
    given := change -> 'set';
    has_price := given ? 'price'; new_price := (given ->> 'price')::bigint;
    has_extra_adult_price := given ? 'extra_adult_price'; new_extra_adult_price := (given ->> 'extra_adult_price')::bigint;
    has_extra_child_price := given ? 'extra_child_price'; new_extra_child_price := (given ->> 'extra_child_price')::bigint;
    has_min_stay := given ? 'min_stay'; new_min_stay := (given ->> 'min_stay')::integer;
    has_max_stay := given ? 'max_stay'; new_max_stay := (given ->> 'max_stay')::integer;
    has_closed_to_arrival := given ? 'closed_to_arrival'; new_closed_to_arrival := (given ->> 'closed_to_arrival')::boolean;
    has_closed_to_departure := given ? 'closed_to_departure';
    new_closed_to_departure := (given ->> 'closed_to_departure')::boolean;
    has_closed := given ? 'closed'; new_closed := (given ->> 'closed')::boolean;

    update public.rate_plan_days o set
      price = case when has_price then new_price else o.price end,
      extra_adult_price = case when has_extra_adult_price then new_extra_adult_price else o.extra_adult_price end,
      extra_child_price = case when has_extra_child_price then new_extra_child_price else o.extra_child_price end,
      min_stay = case when has_min_stay then new_min_stay else o.min_stay end,
      max_stay = case when has_max_stay then new_max_stay else o.max_stay end,
      closed_to_arrival = case when has_closed_to_arrival then new_closed_to_arrival else o.closed_to_arrival end,
      closed_to_departure = case when has_closed_to_departure then new_closed_to_departure else o.closed_to_departure end,
      closed = case when has_closed then new_closed else o.closed end,
      updated_at = now()
    where o.tenant_id = tenant and o.rate_plan_id = plan and o.day between first_day and last_day
      and (every_day or extract(isodow from o.day)::integer = any(isodays));
    get diagnostics rows_written = row_count;
    written := written + rows_written;

    -- A day another writer inserts meanwhile is updated as it would have been here.
    if exists (select from jsonb_each(given) g where g.value <> 'null'::jsonb) then
      insert into public.rate_plan_days as o (tenant_id, rate_plan_id, day, price, extra_adult_price, extra_child_price,
                                              min_stay, max_stay, closed_to_arrival, closed_to_departure, closed)
      select tenant, plan, d.day::date, new_price, new_extra_adult_price, new_extra_child_price, new_min_stay, new_max_stay,
             new_closed_to_arrival, new_closed_to_departure, new_closed
      from generate_series(first_day, last_day, interval '1 day') d(day)
      where (every_day or extract(isodow from d.day)::integer = any(isodays))
        and not exists (select from public.rate_plan_days e
                        where e.tenant_id = tenant and e.rate_plan_id = plan and e.day between first_day and last_day
                          and e.day = d.day::date)
      on conflict on constraint rate_plan_days_pkey do update set
        price = case when has_price then excluded.price else o.price end,
        extra_adult_price = case when has_extra_adult_price then excluded.extra_adult_price else o.extra_adult_price end,
        extra_child_price = case when has_extra_child_price then excluded.extra_child_price else o.extra_child_price end,
        min_stay = case when has_min_stay then excluded.min_stay else o.min_stay end,
        max_stay = case when has_max_stay then excluded.max_stay else o.max_stay end,
        closed_to_arrival = case when has_closed_to_arrival then excluded.closed_to_arrival else o.closed_to_arrival end,
        closed_to_departure = case when has_closed_to_departure then excluded.closed_to_departure
                                   else o.closed_to_departure end,
        closed = case when has_closed then excluded.closed else o.closed end,
        updated_at = now();
      get diagnostics rows_written = row_count;
      written := written + rows_written;
    end if;

    if exists (select from jsonb_each(given) g where g.value = 'null'::jsonb) then
      delete from public.rate_plan_days o
      where o.tenant_id = tenant and o.rate_plan_id = plan and o.day between first_day and last_day
        and num_nonnulls(o.price, o.extra_adult_price, o.extra_child_price, o.min_stay, o.max_stay, o.closed_to_arrival,
                         o.closed_to_departure, o.closed) = 0;
    end if;
  end loop;
  return written;
end
$function$;

CREATE TRIGGER touch_updated_at
  BEFORE UPDATE ON public.rate_plan_days
  FOR EACH ROW
  WHEN ((new.updated_at IS DISTINCT FROM now()))
  EXECUTE FUNCTION private.touch_updated_at();
