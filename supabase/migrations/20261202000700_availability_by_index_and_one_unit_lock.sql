-- Availability and the rate calendar read by index ranges that hold whatever the
-- statistics say: the calendar's days as one key range, a room type's held stays as one
-- range of a new (tenant, type, check-in) index bounded by leakproof comparisons, the
-- nights counted in one pass, each plan quoted once per standard occupancy in one pass
-- over its calendar, and null for a property the caller cannot see. A derived plan's
-- days are checked for prices once a statement, not once a day. One lock helper for a
-- unit's calendar; the rate plan read once by a priced reservation write; the workers
-- read the rate calendar of their job's tenant, as they read its plans.
SET local check_function_bodies = off;

DROP TRIGGER "rate_plan_day_before_write" ON "public"."rate_plan_days";

DROP FUNCTION "private"."rate_plan_day_before_write"();

CREATE OR REPLACE FUNCTION private.availability (
  for_property uuid,
  arrival      date,
  departure    date,
  adults       integer,
  children     integer
)
  RETURNS jsonb
  LANGUAGE plpgsql
  STABLE
  SET search_path TO ''
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
  nights as materialized (
    select night::date as night from generate_series(arrival, departure - 1, interval '1 day') night
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
  -- the stays held that night, each counted in one pass.
  taken as (
    select h.room_type_id, n.night from held h join nights n on h.stay @> n.night
    union all
    select b.room_type_id, n.night from blocked b join nights n on b.nights @> n.night
  ),
  fullest as (
    select f.room_type_id, max(f.taken) as taken
    from (select taken.room_type_id, count(*) as taken from taken group by taken.room_type_id, taken.night) f
    group by f.room_type_id
  ),
  rooms as (
    select u.room_type_id, count(*) as units from in_service u group by u.room_type_id
  ),
  plans as materialized (
    select p.id, p.code, p.name, p.room_type_id from public.rate_plans p
    where p.tenant_id = tenant and p.property_id = for_property and p.active
  ),
  -- A quote depends on the room type only through its standard occupancy: each plan is
  -- quoted once for each standard occupancy among the types it sells.
  quotes as materialized (
    select q.plan_id, q.standard_occupancy,
           private.quote_stay(q.plan_id, q.room_type_id, arrival, departure, adults, children) as quote
    from (select distinct on (p.id, t.standard_occupancy) p.id as plan_id, t.standard_occupancy, t.id as room_type_id
          from plans p join types t on p.room_type_id is null or p.room_type_id = t.id
          order by p.id, t.standard_occupancy, t.id) q
  )
  select jsonb_build_object(
    'propertyId', for_property, 'arrival', arrival, 'departure', departure, 'nights', departure - arrival,
    'adults', adults, 'children', children,
    'roomTypes', coalesce(jsonb_agg(jsonb_build_object(
      'roomTypeId', t.id, 'code', t.code, 'name', t.name, 'maxOccupancy', t.max_occupancy,
      'fitsParty', adults + children <= t.max_occupancy and adults <= coalesce(t.max_adults, t.max_occupancy)
                   and children <= coalesce(t.max_children, t.max_occupancy - 1),
      'available', greatest(0, coalesce((select r.units from rooms r where r.room_type_id = t.id), 0)
                                - coalesce((select f.taken from fullest f where f.room_type_id = t.id), 0)),
      'freeUnits', coalesce((
        select jsonb_agg(jsonb_build_object('unitId', u.id, 'name', u.name) order by u.name)
        from in_service u where u.room_type_id = t.id and u.id not in (select busy.id from busy)), '[]'),
      'ratePlans', coalesce((
        select jsonb_agg(q.quote || jsonb_build_object('code', p.code, 'name', p.name,
                                                       'bookable', jsonb_array_length(q.quote -> 'restrictions') = 0)
                         order by p.code)
        from plans p join quotes q on q.plan_id = p.id and q.standard_occupancy = t.standard_occupancy
        where p.room_type_id is null or p.room_type_id = t.id), '[]')
    ) order by t.code), '[]'))
  from types t);
end
$function$;

CREATE OR REPLACE FUNCTION private.lock_unit_nights (
  tenant uuid,
  unit   uuid
)
  RETURNS void
  LANGUAGE plpgsql
  SET search_path TO ''
  AS $function$
begin
  perform pg_catalog.pg_advisory_xact_lock(1347244801, pg_catalog.hashtext(tenant::text || '/' || unit::text));
end;
$function$;

CREATE OR REPLACE FUNCTION private.lock_unit_calendar()
  RETURNS TRIGGER
  LANGUAGE plpgsql
  SET search_path TO ''
  AS $function$
begin
  perform private.lock_unit_nights(new.tenant_id, new.unit_id);
  return new;
end;
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
  rate_plan record;
  standard integer;
  extra_adults integer;
  extra_children integer;
  day record;
  amount bigint;
  total bigint := 0;
  nights jsonb := '[]';
  -- Each kind of restriction in the order they are told.
  inactive jsonb := '[]';
  closed jsonb := '[]';
  on_arrival jsonb := '[]';
  on_departure jsonb := '[]';
  stay_length jsonb := '[]';
begin
  select p.id, p.currency, p.active into rate_plan from public.rate_plans p where p.id = plan;
  if not found then
    return null;
  end if;
  if not rate_plan.active then
    inactive := jsonb_build_array(jsonb_build_object('code', 'inactive'));
  end if;
  standard := coalesce((select rt.standard_occupancy from public.room_types rt where rt.id = room_type), adults + children);
  extra_adults := greatest(0, adults - standard);
  extra_children := greatest(0, children - greatest(0, standard - adults));
  -- One pass over the calendar, arrival to departure: each night's amount, and what the
  -- nights, the arrival day and the departure day refuse.
  for day in select c.* from private.rate_plan_calendar(plan, arrival, departure) c loop
    if day.day < departure then
      amount := day.price + extra_adults * day.extra_adult_price + extra_children * day.extra_child_price;
      total := total + amount;
      nights := nights || jsonb_build_object('date', day.day, 'amount', amount);
      if day.closed then
        closed := closed || jsonb_build_object('code', 'closed', 'date', day.day);
      end if;
    end if;
    if day.day = arrival then
      if day.closed_to_arrival then
        on_arrival := jsonb_build_array(jsonb_build_object('code', 'closed_to_arrival', 'date', day.day));
      end if;
      if departure - arrival < day.min_stay then
        stay_length := stay_length || jsonb_build_object('code', 'min_stay', 'date', day.day, 'minStay', day.min_stay);
      end if;
      if departure - arrival > day.max_stay then
        stay_length := stay_length || jsonb_build_object('code', 'max_stay', 'date', day.day, 'maxStay', day.max_stay);
      end if;
    elsif day.day = departure and day.closed_to_departure then
      on_departure := jsonb_build_array(jsonb_build_object('code', 'closed_to_departure', 'date', day.day));
    end if;
  end loop;
  return jsonb_build_object(
    'ratePlanId', rate_plan.id, 'currency', rate_plan.currency, 'total', total, 'nights', nights,
    'restrictions', inactive || closed || on_arrival || on_departure || stay_length);
end
$function$;

CREATE OR REPLACE FUNCTION private.rate_plan_calendar (
  plan      uuid,
  first_day date,
  last_day  date
)
  RETURNS TABLE (
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
  AS $function$
declare
  p public.rate_plans;
  b public.rate_plans;
begin
  select * into p from public.rate_plans rp where rp.id = plan;
  if not found then
    return;
  end if;
  if p.derived_from_id is not null then
    select * into b from public.rate_plans rp where rp.tenant_id = p.tenant_id and rp.id = p.derived_from_id;
  end if;
  return query
  with own as (
    select o.* from public.rate_plan_days o
    where o.tenant_id = p.tenant_id and o.rate_plan_id = p.id and o.day between first_day and last_day
  ),
  base as (
    select o.* from public.rate_plan_days o
    where o.tenant_id = p.tenant_id and o.rate_plan_id = b.id and o.day between first_day and last_day
  )
  select d.day::date,
    case when p.derived_from_id is null then coalesce(o.price, p.nightly_price)
         else private.derived_price(coalesce(bo.price, b.nightly_price), p.derived_percent, p.derived_amount) end,
    case when p.derived_from_id is null then coalesce(o.extra_adult_price, p.extra_adult_price)
         else private.derived_price(coalesce(bo.extra_adult_price, b.extra_adult_price), p.derived_percent, null) end,
    case when p.derived_from_id is null then coalesce(o.extra_child_price, p.extra_child_price)
         else private.derived_price(coalesce(bo.extra_child_price, b.extra_child_price), p.derived_percent, null) end,
    case when p.derived_from_id is null then coalesce(o.min_stay, p.min_stay)
         else coalesce(o.min_stay, greatest(p.min_stay, coalesce(bo.min_stay, b.min_stay))) end,
    case when p.derived_from_id is null then coalesce(o.max_stay, p.max_stay)
         else coalesce(o.max_stay, least(p.max_stay, coalesce(bo.max_stay, b.max_stay))) end,
    coalesce(o.closed_to_arrival, bo.closed_to_arrival, false),
    coalesce(o.closed_to_departure, bo.closed_to_departure, false),
    coalesce(o.closed, bo.closed, false)
  from generate_series(first_day, last_day, interval '1 day') d(day)
  left join own o on o.day = d.day::date
  left join base bo on bo.day = d.day::date
  order by d.day;
end
$function$;

CREATE OR REPLACE FUNCTION private.rate_plan_days_derived_without_prices()
  RETURNS TRIGGER
  LANGUAGE plpgsql
  SET search_path TO ''
  AS $function$
begin
  if exists (
      select from written w
      join public.rate_plans p on p.tenant_id = w.tenant_id and p.id = w.rate_plan_id
      where p.derived_from_id is not null and num_nonnulls(w.price, w.extra_adult_price, w.extra_child_price) > 0) then
    raise exception 'a derived plan takes its prices from its base plan; set them there'
      using errcode = '23514', constraint = 'rate_plan_days_derived_without_prices';
  end if;
  return null;
end
$function$;

CREATE OR REPLACE FUNCTION private.reservation_before_write()
  RETURNS TRIGGER
  LANGUAGE plpgsql
  SET search_path TO ''
  AS $function$
declare
  next_statuses text[];
  plan public.rate_plans;
  unit_capacity integer;
  unit_status text;
  unit_room_type uuid;
  room_type public.room_types;
  quote jsonb;
  restrictions jsonb;
  property_currency text;
  nights integer := new.check_out - new.check_in;
begin
  -- Before anything that counts nights: the stay column cannot even be built otherwise.
  if nights <= 0 then
    raise exception 'check-out (%) must be after check-in (%)', new.check_out, new.check_in using errcode = '23514';
  end if;
  if nights > 365 then
    raise exception 'a stay is at most 365 nights, not %', nights using errcode = '23514';
  end if;

  if tg_op = 'INSERT' then
    if new.status not in ('pending', 'confirmed') then
      raise exception 'a reservation starts as pending or confirmed, not %', new.status using errcode = '23514';
    end if;
    new.amount_paid := 0;
    new.confirmed_at := case when new.status = 'confirmed' then now() end;
    new.checked_in_at := null;
    new.checked_out_at := null;
    new.cancelled_at := null;
    new.no_show_at := null;
    loop
      new.confirmation_code := private.random_code(8);
      exit when not exists (
        select 1 from public.reservations r
        where r.tenant_id = new.tenant_id and r.confirmation_code = new.confirmation_code);
    end loop;
    select p.currency into property_currency from public.properties p
    where p.tenant_id = new.tenant_id and p.id = new.property_id and p.status = 'active';
    if not found then
      raise exception 'property % is not an active property of this tenant', new.property_id using errcode = '23503';
    end if;
  else
    if new.amount_paid is distinct from old.amount_paid and pg_trigger_depth() = 1 then
      raise exception 'amount_paid is derived from payments and cannot be set' using errcode = '42501';
    end if;
    if new.confirmation_code is distinct from old.confirmation_code then
      raise exception 'confirmation_code cannot change' using errcode = '42501';
    end if;
    if old.status = 'checked_in' and new.check_in is distinct from old.check_in then
      raise exception 'a checked_in reservation cannot move its arrival date'
        using errcode = 'PT409', constraint = 'reservations_arrival_fixed_after_check_in',
              detail = jsonb_build_object('currentStatus', old.status)::text,
              hint = 'The guest has arrived; change the check-out date instead.';
    end if;

    if new.status is distinct from old.status then
      next_statuses := case old.status
        when 'pending' then array['confirmed', 'cancelled']
        when 'confirmed' then array['checked_in', 'cancelled', 'no_show']
        when 'checked_in' then array['checked_out']
        else array[]::text[]
      end;
      if not (new.status = any (next_statuses)) then
        raise exception 'a % reservation cannot become %', old.status, new.status
          using errcode = 'PT409', constraint = 'reservations_status_transition',
                detail = jsonb_build_object('currentStatus', old.status, 'requestedStatus', new.status,
                                            'allowedStatuses', to_jsonb(next_statuses))::text,
                hint = case when cardinality(next_statuses) = 0 then format('%s is final', old.status)
                            else format('allowed next: %s', array_to_string(next_statuses, ', ')) end;
      end if;
      case new.status
        when 'confirmed' then new.confirmed_at := now();
        when 'checked_in' then new.checked_in_at := now();
        when 'checked_out' then new.checked_out_at := now();
        when 'cancelled' then new.cancelled_at := now();
        when 'no_show' then new.no_show_at := now();
      end case;
    elsif old.status in ('checked_out', 'cancelled', 'no_show')
      and (new.property_id, new.unit_id, new.room_type_id, new.guest_id, new.rate_plan_id, new.check_in, new.check_out,
           new.adults, new.children, new.total_amount, new.currency)
          is distinct from
          (old.property_id, old.unit_id, old.room_type_id, old.guest_id, old.rate_plan_id, old.check_in, old.check_out,
           old.adults, old.children, old.total_amount, old.currency) then
      raise exception 'a % reservation can no longer change its stay or price', old.status
        using errcode = 'PT409', constraint = 'reservations_final_stay_fixed',
              detail = jsonb_build_object('currentStatus', old.status)::text;
    end if;
  end if;

  if new.status = 'checked_in' and new.unit_id is null then
    raise exception 'assign a unit before checking in' using errcode = '23514';
  end if;

  if new.rate_plan_id is not null and (tg_op = 'INSERT'
      or (new.rate_plan_id, new.check_in, new.check_out) is distinct from (old.rate_plan_id, old.check_in, old.check_out)) then
    select * into plan from public.rate_plans rp
    where rp.tenant_id = new.tenant_id and rp.id = new.rate_plan_id and rp.property_id = new.property_id;
    if not found then
      raise exception 'rate plan % does not belong to property %', new.rate_plan_id, new.property_id using errcode = '23503';
    end if;
    if not plan.active then
      raise exception 'rate plan % is not active', plan.code using errcode = '23514';
    end if;
    if new.currency is distinct from plan.currency and new.currency is not null then
      raise exception 'rate plan % is priced in currency %, not %', plan.code, plan.currency, new.currency using errcode = '23514';
    end if;
    new.currency := coalesce(new.currency, plan.currency);
    -- A stay booked on a plan for one room type, with no type or unit, is of that type.
    if new.room_type_id is null and new.unit_id is null then
      new.room_type_id := plan.room_type_id;
    end if;
  end if;

  -- On insert the property was read above; coalesce reads it again only for an update.
  new.currency := coalesce(new.currency, property_currency, (
    select p.currency from public.properties p where p.tenant_id = new.tenant_id and p.id = new.property_id));

  if new.unit_id is not null and (tg_op = 'INSERT'
      or (new.unit_id, new.room_type_id, new.adults, new.children)
         is distinct from (old.unit_id, old.room_type_id, old.adults, old.children)) then
    select u.capacity, u.status, u.room_type_id into unit_capacity, unit_status, unit_room_type from public.units u
    where u.tenant_id = new.tenant_id and u.id = new.unit_id and u.property_id = new.property_id;
    if not found then
      raise exception 'unit % does not belong to property %', new.unit_id, new.property_id using errcode = '23503';
    end if;
    if new.adults + new.children > unit_capacity then
      raise exception 'the unit sleeps %, not %', unit_capacity, new.adults + new.children using errcode = '23514';
    end if;
    new.room_type_id := coalesce(new.room_type_id, unit_room_type);
    if new.room_type_id <> unit_room_type then
      raise exception 'the unit is not of the stay''s room type'
        using errcode = '23514', constraint = 'reservations_unit_of_room_type',
              hint = 'Change roomTypeId with the unit to move the stay to another room type.';
    end if;
    if unit_status <> 'active' and (tg_op = 'INSERT' or new.unit_id is distinct from old.unit_id)
        and new.status in ('pending', 'confirmed', 'checked_in') then
      raise exception 'the unit is %, and takes no stays', replace(unit_status, '_', ' ')
        using errcode = 'PT409', constraint = 'reservations_unit_in_service',
              detail = jsonb_build_object('unitStatus', unit_status)::text;
    end if;
  end if;

  -- The party the room type takes, when the stay is booked or its type or party changes.
  if new.room_type_id is not null and (tg_op = 'INSERT'
      or (new.room_type_id, new.adults, new.children) is distinct from (old.room_type_id, old.adults, old.children)) then
    select * into room_type from public.room_types rt
    where rt.tenant_id = new.tenant_id and rt.id = new.room_type_id and rt.property_id = new.property_id;
    if not found then
      raise exception 'room type % does not belong to property %', new.room_type_id, new.property_id
        using errcode = '23503', constraint = 'reservations_tenant_id_property_id_room_type_id_fkey';
    end if;
    if room_type.status <> 'active' and (tg_op = 'INSERT' or new.room_type_id is distinct from old.room_type_id) then
      raise exception 'room type % is archived and takes no new stays', room_type.code
        using errcode = '23514', constraint = 'reservations_room_type_active';
    end if;
    if new.adults + new.children > room_type.max_occupancy
        or new.adults > coalesce(room_type.max_adults, room_type.max_occupancy)
        or new.children > coalesce(room_type.max_children, room_type.max_occupancy - 1) then
      raise exception 'room type % takes at most % guests (% adults, % children), not % adults and % children',
        room_type.code, room_type.max_occupancy, coalesce(room_type.max_adults, room_type.max_occupancy),
        coalesce(room_type.max_children, room_type.max_occupancy - 1), new.adults, new.children
        using errcode = 'PT422', constraint = 'reservations_room_type_occupancy',
              detail = jsonb_build_object('maxOccupancy', room_type.max_occupancy,
                'maxAdults', coalesce(room_type.max_adults, room_type.max_occupancy),
                'maxChildren', coalesce(room_type.max_children, room_type.max_occupancy - 1))::text;
    end if;
  end if;

  -- The price: a total the writer gives is kept and marked as theirs; without one (null),
  -- the stay is priced from its rate plan's calendar, night by night, and priced again
  -- whenever its plan, room type, dates or party change (rates.sql, private.quote_stay).
  if tg_op = 'INSERT' then
    new.price_overridden := new.total_amount is not null;
  elsif new.total_amount is null then
    new.price_overridden := false;
  elsif new.total_amount is distinct from old.total_amount then
    new.price_overridden := true;
  else
    new.price_overridden := old.price_overridden;
  end if;
  if new.rate_plan_id is not null and (tg_op = 'INSERT' or (not new.price_overridden and old.price_overridden)
      or (new.rate_plan_id, new.room_type_id, new.check_in, new.check_out, new.adults, new.children)
         is distinct from (old.rate_plan_id, old.room_type_id, old.check_in, old.check_out, old.adults, old.children)) then
    -- Read above when the plan or the dates changed; read here when only the type or party did.
    if plan.id is distinct from new.rate_plan_id then
      select * into plan from public.rate_plans rp where rp.tenant_id = new.tenant_id and rp.id = new.rate_plan_id;
    end if;
    if plan.room_type_id is not null and new.room_type_id is distinct from plan.room_type_id then
      raise exception 'rate plan % sells another room type', plan.code
        using errcode = '23514', constraint = 'reservations_rate_plan_room_type';
    end if;
    quote := private.quote_stay(new.rate_plan_id, new.room_type_id, new.check_in, new.check_out, new.adults, new.children);
    -- The plan's restrictions hold for a stay booked on it or moved, not for one whose
    -- party alone changes; an inactive plan is refused above.
    if tg_op = 'INSERT'
        or (new.rate_plan_id, new.check_in, new.check_out) is distinct from (old.rate_plan_id, old.check_in, old.check_out) then
      restrictions := coalesce((select jsonb_agg(r) from jsonb_array_elements(quote -> 'restrictions') r
                                where r ->> 'code' <> 'inactive'), '[]');
      if jsonb_array_length(restrictions) > 0 then
        raise exception 'rate plan % does not sell this stay: %', plan.code,
          (select string_agg(r ->> 'code', ', ') from jsonb_array_elements(restrictions) r)
          using errcode = 'PT422', constraint = 'reservations_rate_restricted',
                detail = jsonb_build_object('ratePlanId', plan.id, 'restrictions', restrictions)::text;
      end if;
    end if;
    if not new.price_overridden then
      new.total_amount := (quote ->> 'total')::bigint;
    end if;
  end if;
  new.total_amount := coalesce(new.total_amount, 0);

  return new;
end
$function$;

CREATE OR REPLACE FUNCTION private.unit_block_before_write()
  RETURNS TRIGGER
  LANGUAGE plpgsql
  SET search_path TO ''
  AS $function$
declare
  unit record;
  held_stay record;
  short date[];
begin
  if tg_op = 'UPDATE' and (new.unit_id, new.property_id) is distinct from (old.unit_id, old.property_id) then
    raise exception 'a block stays on its unit' using errcode = 'PT409', constraint = 'unit_blocks_unit_fixed';
  end if;
  -- Before the range below can be built.
  if new.ends_on <= new.starts_on then
    raise exception 'endsOn (%) must be after startsOn (%)', new.ends_on, new.starts_on
      using errcode = '23514', constraint = 'unit_blocks_ends_after_start';
  end if;
  select u.property_id, u.room_type_id, u.status into unit from public.units u
  where u.tenant_id = new.tenant_id and u.id = new.unit_id and u.property_id = coalesce(new.property_id, u.property_id);
  if not found then
    raise exception 'unit % is not a unit of this tenant''s property', new.unit_id
      using errcode = '23503', constraint = 'unit_blocks_tenant_id_property_id_unit_id_fkey';
  end if;
  new.property_id := unit.property_id;
  if tg_op = 'UPDATE' and new.starts_on >= old.starts_on and new.ends_on <= old.ends_on then
    return new;
  end if;

  perform private.lock_unit_nights(new.tenant_id, new.unit_id);
  -- Another block of the unit on these nights is told as such, before its nights are
  -- counted twice out of the type (unit_blocks_no_overlap holds it in any case).
  if exists (select from public.unit_blocks b
             where b.tenant_id = new.tenant_id and b.unit_id = new.unit_id and b.id <> new.id
               and b.nights && daterange(new.starts_on, new.ends_on, '[)')) then
    raise exception 'the unit is already blocked for some of these nights'
      using errcode = '23P01', constraint = 'unit_blocks_no_overlap';
  end if;
  select r.id, r.confirmation_code, r.check_in, r.check_out into held_stay from public.reservations r
  where r.tenant_id = new.tenant_id and r.unit_id = new.unit_id and r.status in ('pending', 'confirmed', 'checked_in')
    and r.stay && daterange(new.starts_on, new.ends_on, '[)')
  order by r.check_in limit 1;
  if found then
    raise exception 'the unit holds stay % from % to %', held_stay.confirmation_code, held_stay.check_in, held_stay.check_out
      using errcode = 'PT409', constraint = 'unit_blocks_no_held_stay',
            detail = jsonb_build_object('reservationId', held_stay.id, 'confirmationCode', held_stay.confirmation_code,
                                        'checkIn', held_stay.check_in, 'checkOut', held_stay.check_out)::text,
            hint = 'Move the stay to another unit first.';
  end if;

  if unit.status = 'active' then
    perform private.lock_room_type_inventory(new.tenant_id, unit.room_type_id);
    short := private.room_type_shortfall(new.tenant_id, unit.room_type_id, daterange(new.starts_on, new.ends_on, '[)'),
                                         null, new.id, 1);
    if cardinality(short) > 0 then
      raise exception 'without the unit its room type has no room for its stays on %', array_to_string(short, ', ')
        using errcode = 'PT409', constraint = 'unit_blocks_room_type_inventory',
              detail = jsonb_build_object('roomTypeId', unit.room_type_id, 'nights', to_jsonb(short))::text;
    end if;
  end if;
  return new;
end
$function$;

CREATE INDEX reservations_tenant_room_type_check_in_idx ON public.reservations USING btree (tenant_id, room_type_id, check_in) INCLUDE (check_out, unit_id)
  WHERE (status = ANY (ARRAY['pending'::text, 'confirmed'::text, 'checked_in'::text]));

CREATE TRIGGER rate_plan_days_inserted_derived_without_prices
  AFTER INSERT ON public.rate_plan_days REFERENCING NEW TABLE AS written
  FOR EACH STATEMENT
  EXECUTE FUNCTION private.rate_plan_days_derived_without_prices();

CREATE TRIGGER rate_plan_days_updated_derived_without_prices
  AFTER UPDATE ON public.rate_plan_days REFERENCING NEW TABLE AS written
  FOR EACH STATEMENT
  EXECUTE FUNCTION private.rate_plan_days_derived_without_prices();

CREATE POLICY "background jobs read the job's rate plan days" ON "public"."rate_plan_days"
  FOR SELECT
  TO "background_worker"
  USING ((tenant_id = ( SELECT private.request_tenant_id() AS request_tenant_id)));

COMMENT ON FUNCTION "private"."lock_unit_nights"(uuid, uuid) IS 'Takes the lock of one unit''s calendar until the transaction ends: every write that puts a stay or a block on the unit''s nights takes it first.';

GRANT SELECT ON TABLE "public"."rate_plan_days" TO "background_worker";
