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

-- Half of each page is left free for the next version of its days: a bulk update of a
-- year of days then writes each new version beside the old one (a HOT update), with no
-- new entry in the key's index.
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
) with (fillfactor = 50);

create trigger forbid_tenant_change before update of tenant_id, created_at on public.rate_plan_days
  for each row execute function private.forbid_tenant_change();
-- A writer that sets updated_at to now() itself (the API's bulk update does, for every day
-- it writes) is spared a trigger call per day; any other update is stamped as everywhere.
create trigger touch_updated_at before update on public.rate_plan_days
  for each row when (new.updated_at is distinct from now()) execute function private.touch_updated_at();

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

-- Stays on plans for a party, each plan (plans[i]) quoted for a standard occupancy
-- (standards[i]) from the calendar, all in one statement: per pair, the plan's currency,
-- the total and each night's amount {date, amount}, and the restrictions that refuse the
-- stay (none when it is bookable), each {code, date, ...}: inactive, closed (each night),
-- closed_to_arrival, closed_to_departure, min_stay {minStay}, max_stay {maxStay}. No row
-- for a plan the caller cannot see. The nights are json, text as it is built, which
-- availability sets as it is into a response of many quotes.
create or replace function private.quote_stays(
  plans uuid[], standards integer[], arrival date, departure date, adults integer, children integer
)
returns table (
  rate_plan_id uuid, standard_occupancy integer, currency text, total bigint, nights json, restrictions jsonb
)
language plpgsql
stable
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
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
$$;

-- A stay on a plan for a room type and a party, quoted from the calendar
-- (private.quote_stays) for the room type's standard occupancy; without a room type, for
-- the party, with no extra amounts. Null for a plan the caller cannot see.
create or replace function private.quote_stay(
  plan uuid, room_type uuid, arrival date, departure date, adults integer, children integer
)
returns jsonb
language plpgsql
stable
set search_path = ''
as $$
declare
  standard integer;
begin
  standard := coalesce((select rt.standard_occupancy from public.room_types rt where rt.id = room_type), adults + children);
  return (
    select jsonb_build_object('ratePlanId', q.rate_plan_id, 'currency', q.currency, 'total', q.total,
                              'nights', q.nights::jsonb, 'restrictions', q.restrictions)
    from private.quote_stays(array[plan], array[standard], arrival, departure, adults, children) q);
end
$$;

-- Sets values on plans' days, the changes in order: each {plan, from, to, isodays, set},
-- where `set` names the columns to set (price, extra_adult_price, extra_child_price,
-- min_stay, max_stay, closed_to_arrival, closed_to_departure, closed) with their values,
-- on the days from `from` to `to` (both included) whose ISO day of the week is among
-- `isodays`. A column set to null takes the day back to its plan's default; a day left with
-- no value of its own is removed. A column not named keeps what the day has. Written as
-- the caller, under the table's policies (owners and admins), in the request's tenant;
-- another tenant's plan is refused by the days' foreign key. Gives the days written,
-- counted once per change.
--
-- Each change is two statements over one range of the days' key: the days that exist are
-- updated where they lie, and only the days missing are inserted. An upsert of every day
-- would look each one up in the key's index first, which is most of a bulk update's work.
create or replace function private.write_rate_calendar(changes jsonb)
returns integer
language plpgsql
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
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
$$;

-- A derived plan's prices are its base plan's: its days set restrictions only. Checked
-- once a statement over the rows it wrote, so that a bulk update of a year of many plans
-- looks up each plan once, not once a day.
create or replace function private.rate_plan_days_derived_without_prices()
returns trigger
language plpgsql
set search_path = ''
as $$
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
-- quote (private.quote_stays) and whether it is bookable (no restriction refuses it).
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
returns json
language plpgsql
stable
set search_path = ''
set plan_cache_mode = force_generic_plan
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
$$;
