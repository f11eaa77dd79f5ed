-- The rate calendar: what a rate plan charges and allows, night by night. A plan's own
-- fields (nightly_price, extra_adult_price, extra_child_price, min_stay, max_stay) are its
-- defaults; a day of the calendar overrides any of them for that date and adds the
-- restrictions a channel manager knows: closed to arrival, closed to departure, closed
-- (stop-sell). A derived plan takes its prices from its base plan, a percentage or an
-- amount off, and follows every change of it; its restrictions are its own day's where it
-- sets one, else its base plan's, never looser than its own minimum and maximum stay.
--
-- A stay is quoted from the calendar (private.quote_stay): each night's price for the
-- room type's standard occupancy, plus the extra-adult and extra-child amounts for each
-- guest above it (adults first), and the restrictions that refuse it: the arrival day's
-- minimum and maximum stay, closed to arrival on the arrival day, closed to departure on
-- the departure day, and closed on any night. A reservation on a plan is priced so,
-- night by night, unless its writer gave a total (reservations.sql).

create table public.rate_plan_days (
  tenant_id uuid not null default private.request_tenant_id()
    constraint rate_plan_days_tenant_id_fkey references public.tenants (id) on delete cascade,
  rate_plan_id uuid not null,
  day date not null,
  -- Null: the plan's default (or, for a derived plan's prices, its base plan's).
  price bigint constraint rate_plan_days_price_check check (price between 0 and 1000000000),
  extra_adult_price bigint constraint rate_plan_days_extra_adult_price_check check (extra_adult_price between 0 and 1000000000),
  extra_child_price bigint constraint rate_plan_days_extra_child_price_check check (extra_child_price between 0 and 1000000000),
  -- The fewest and most nights of a stay arriving on this day.
  min_stay integer constraint rate_plan_days_min_stay_check check (min_stay between 1 and 365),
  max_stay integer constraint rate_plan_days_max_stay_check check (max_stay between 1 and 365),
  closed_to_arrival boolean,
  closed_to_departure boolean,
  closed boolean,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint rate_plan_days_pkey primary key (tenant_id, rate_plan_id, day),
  constraint rate_plan_days_max_stay_not_below_min_stay check (max_stay >= min_stay),
  constraint rate_plan_days_tenant_id_rate_plan_id_fkey
    foreign key (tenant_id, rate_plan_id) references public.rate_plans (tenant_id, id) on delete cascade
);

create trigger forbid_tenant_change before update of tenant_id, created_at on public.rate_plan_days
  for each row execute function private.forbid_tenant_change();
create trigger touch_updated_at before update on public.rate_plan_days
  for each row execute function private.touch_updated_at();

alter table public.rate_plan_days enable row level security;
revoke all on public.rate_plan_days from anon;

create policy "members read rate plan days" on public.rate_plan_days
  for select to authenticated
  using (tenant_id = (select private.request_tenant_id()) and (select private.request_is_member()));
create policy "managers create rate plan days" on public.rate_plan_days
  for insert to authenticated
  with check (tenant_id = (select private.request_tenant_id()) and (select private.request_is_manager()));
create policy "managers update rate plan days" on public.rate_plan_days
  for update to authenticated
  using (tenant_id = (select private.request_tenant_id()) and (select private.request_is_manager()))
  with check (tenant_id = (select private.request_tenant_id()) and (select private.request_is_manager()));
create policy "managers delete rate plan days" on public.rate_plan_days
  for delete to authenticated
  using (tenant_id = (select private.request_tenant_id()) and (select private.request_is_manager()));

-- A derived plan's amount from its base plan's: a percentage of it, rounded half away from
-- zero to the minor unit, or an amount added; never below 0 or above a price's maximum.
create or replace function private.derived_price(base bigint, percent numeric, amount bigint)
returns bigint
language plpgsql
immutable
set search_path = ''
as $$
begin
  return least(1000000000, greatest(0, case when percent is not null then round(base * (100 + percent) / 100)
                                            else base + coalesce(amount, 0) end))::bigint;
end
$$;

-- The plan's calendar as it applies, for each day from first_day to last_day (both
-- included): its own day where set, its defaults otherwise, a derived plan's prices from
-- its base plan. Read as the caller, under the tables' policies. PL/pgSQL, as every
-- helper here, so that a connection keeps its plans.
--
-- The plan's days and its base plan's are each read as one range of their key (tenant,
-- plan, day), and only then set beside the generated days: joined to the days one by one,
-- the planner takes a guess at how many days a generated series holds (a thousand),
-- and hashes every plan day of every tenant instead.
create or replace function private.rate_plan_calendar(plan uuid, first_day date, last_day date)
returns table (
  day date, price bigint, extra_adult_price bigint, extra_child_price bigint, min_stay integer, max_stay integer,
  closed_to_arrival boolean, closed_to_departure boolean, closed boolean
)
language plpgsql
stable
set search_path = ''
as $$
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
$$;

-- A stay on a plan for a room type and a party, quoted from the calendar: its total and
-- each night's amount in the plan's currency, and the restrictions that refuse it (none
-- when it is bookable), each {code, date, ...}: inactive, closed (each night),
-- closed_to_arrival, closed_to_departure, min_stay {minStay}, max_stay {maxStay}. Without
-- a room type the price is for the party, with no extra amounts.
create or replace function private.quote_stay(
  plan uuid, room_type uuid, arrival date, departure date, adults integer, children integer
)
returns jsonb
language plpgsql
stable
set search_path = ''
as $$
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
$$;

-- A derived plan's prices are its base plan's: its days set restrictions only. Checked
-- once a statement over the rows it wrote, so that a bulk update of a year of many plans
-- looks up their plans once, not once a day.
create or replace function private.rate_plan_days_derived_without_prices()
returns trigger
language plpgsql
set search_path = ''
as $$
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
$$;

-- A trigger with a transition table takes one event.
create trigger rate_plan_days_inserted_derived_without_prices after insert on public.rate_plan_days
  referencing new table as written
  for each statement execute function private.rate_plan_days_derived_without_prices();
create trigger rate_plan_days_updated_derived_without_prices after update on public.rate_plan_days
  referencing new table as written
  for each statement execute function private.rate_plan_days_derived_without_prices();

-- What a property can sell from arrival to departure for a party: per active room type,
-- how many more stays it holds on every night (`available`, its units in service less
-- its held stays and blocks, on the fullest night), whether the party fits it, the units
-- free on every night (to assign), and each active plan that sells the type with its
-- quote (private.quote_stay) and whether it is bookable (no restriction refuses it).
-- Read as the caller, under the tables' policies: null when the caller cannot see the
-- property.
--
-- Every read names the property's tenant and is one range of an index led by it, bounded
-- by comparisons Postgres may apply before the tables' policies (equality and dates, which
-- are leakproof; a range's overlap is not, and under a policy it would only filter): a
-- room type's held stays over the nights are one range of (tenant, type, check-in) from
-- the tenant's longest stay before the arrival, as the reservation list's dates are
-- (reservations.sql), whatever the statistics say of how many stays the property has had.
-- The few rows read are kept (materialized) and counted per type and night from there.
create or replace function private.availability(
  for_property uuid, arrival date, departure date, adults integer, children integer
)
returns jsonb
language plpgsql
stable
set search_path = ''
as $$
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
$$;
