-- The rate calendar: per rate plan and day, the price (with extra-adult and extra-child
-- amounts above the room type's standard occupancy) and the restrictions (minimum and
-- maximum stay on arrival, closed to arrival, closed to departure, closed); derived plans;
-- quotes and availability; and reservations priced from the calendar night by night
-- unless their writer gave a total. Reservations that exist keep the total they have:
-- they are marked as priced by their writer. Written from scripts/schema-compare.sh
-- --schemas --sql, the tables as the schema files declare them, the backfill by hand.

SET local check_function_bodies = off;

-- Rate plans: the room type they sell, the extra amounts, derivation.
ALTER TABLE "public"."rate_plans"
  ADD COLUMN "room_type_id" uuid;

ALTER TABLE "public"."rate_plans"
  ADD COLUMN "extra_adult_price" bigint NOT NULL DEFAULT 0;

ALTER TABLE "public"."rate_plans"
  ADD COLUMN "extra_child_price" bigint NOT NULL DEFAULT 0;

ALTER TABLE "public"."rate_plans"
  ADD COLUMN "derived_from_id" uuid;

ALTER TABLE "public"."rate_plans"
  ADD COLUMN "derived_percent" numeric(5,2);

ALTER TABLE "public"."rate_plans"
  ADD COLUMN "derived_amount" bigint;

ALTER TABLE "public"."rate_plans"
  ADD CONSTRAINT "rate_plans_derivation_complete" CHECK ((((derived_from_id IS NULL) AND (derived_percent IS NULL) AND (derived_amount IS NULL)) OR ((derived_from_id IS
    NOT NULL) AND (num_nonnulls(derived_percent, derived_amount) = 1))));

ALTER TABLE "public"."rate_plans"
  ADD CONSTRAINT "rate_plans_derived_amount_check" CHECK (((derived_amount >= '-1000000000'::integer) AND (derived_amount <= 1000000000)));

ALTER TABLE "public"."rate_plans"
  ADD CONSTRAINT "rate_plans_derived_percent_check" CHECK (((derived_percent >= ('-100'::integer)::numeric) AND (derived_percent <= (100)::numeric)));

ALTER TABLE "public"."rate_plans"
  ADD CONSTRAINT "rate_plans_extra_adult_price_check" CHECK (((extra_adult_price >= 0) AND (extra_adult_price <= 1000000000)));

ALTER TABLE "public"."rate_plans"
  ADD CONSTRAINT "rate_plans_extra_child_price_check" CHECK (((extra_child_price >= 0) AND (extra_child_price <= 1000000000)));

ALTER TABLE "public"."rate_plans"
  ADD CONSTRAINT "rate_plans_tenant_id_property_id_derived_from_id_currency_fkey" FOREIGN KEY (tenant_id, property_id, derived_from_id, currency)
    REFERENCES public.rate_plans(tenant_id, property_id, id, currency);

ALTER TABLE "public"."rate_plans"
  ADD CONSTRAINT "rate_plans_tenant_id_property_id_room_type_id_fkey" FOREIGN KEY (tenant_id, property_id, room_type_id) REFERENCES public.room_types(tenant_id, property_id, id);

CREATE INDEX rate_plans_tenant_derived_from_idx ON public.rate_plans USING btree (tenant_id, derived_from_id)
  WHERE (derived_from_id IS NOT NULL);

-- One level of derivation: a plan derives from a base plan, which derives from none.
create or replace function private.rate_plan_derivation()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  if new.derived_from_id is not null and (new.derived_from_id = new.id or exists (
      select from public.rate_plans b where b.tenant_id = new.tenant_id and b.id = new.derived_from_id and b.derived_from_id is not null)) then
    raise exception 'a rate plan derives from a base plan, which derives from none'
      using errcode = '23514', constraint = 'rate_plans_derived_from_base';
  end if;
  if new.derived_from_id is not null and tg_op = 'UPDATE' and exists (
      select from public.rate_plans d where d.tenant_id = new.tenant_id and d.derived_from_id = new.id) then
    raise exception 'a plan other plans derive from cannot derive from another'
      using errcode = '23514', constraint = 'rate_plans_derived_from_base';
  end if;
  return new;
end
$$;

create trigger rate_plan_derivation before insert or update of derived_from_id on public.rate_plans
  for each row execute function private.rate_plan_derivation();

-- Reservations: a total left out is priced from the calendar; the ones there are keep theirs.
alter table public.reservations alter column total_amount drop default;
alter table public.reservations add column price_overridden boolean not null default true;
alter table public.reservations alter column price_overridden set default false;

-- The stay's own rules are checked first and named: check-out after check-in and at
-- most 365 nights (the stay range cannot be built otherwise, and a rate plan's limits
-- would be reported against a negative count); a currency that is not the rate plan's;
-- and a guest who has arrived keeps their arrival date.
create or replace function private.reservation_before_write()
returns trigger
language plpgsql
set search_path = ''
as $$
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
    select * into plan from public.rate_plans rp where rp.tenant_id = new.tenant_id and rp.id = new.rate_plan_id;
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
$$;

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
create or replace function private.rate_plan_calendar(plan uuid, first_day date, last_day date)
returns table (
  day date, price bigint, extra_adult_price bigint, extra_child_price bigint, min_stay integer, max_stay integer,
  closed_to_arrival boolean, closed_to_departure boolean, closed boolean
)
language plpgsql
stable
set search_path = ''
as $$
begin
  return query
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
  from public.rate_plans p
  left join public.rate_plans b on b.tenant_id = p.tenant_id and b.id = p.derived_from_id
  cross join generate_series(first_day, last_day, interval '1 day') d(day)
  left join public.rate_plan_days o on o.tenant_id = p.tenant_id and o.rate_plan_id = p.id and o.day = d.day::date
  left join public.rate_plan_days bo on bo.tenant_id = p.tenant_id and bo.rate_plan_id = b.id and bo.day = d.day::date
  where p.id = plan
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
begin
  return (
  with rate_plan as (
    select p.id, p.currency, p.active from public.rate_plans p where p.id = plan
  ),
  party as (
    select greatest(0, adults - s.standard) as extra_adults,
           greatest(0, children - greatest(0, s.standard - adults)) as extra_children
    from (select coalesce((select rt.standard_occupancy from public.room_types rt where rt.id = room_type), adults + children) as standard) s
  ),
  calendar as (
    select c.* from private.rate_plan_calendar(plan, arrival, departure) c
  ),
  nights as (
    select c.day, c.price + party.extra_adults * c.extra_adult_price + party.extra_children * c.extra_child_price as amount
    from calendar c cross join party
    where c.day < departure
  ),
  restrictions as (
    select 1 as ord, null::date as day, jsonb_build_object('code', 'inactive') as restriction
    from rate_plan where not rate_plan.active
    union all
    select 2, c.day, jsonb_build_object('code', 'closed', 'date', c.day) from calendar c where c.day < departure and c.closed
    union all
    select 3, c.day, jsonb_build_object('code', 'closed_to_arrival', 'date', c.day)
    from calendar c where c.day = arrival and c.closed_to_arrival
    union all
    select 4, c.day, jsonb_build_object('code', 'closed_to_departure', 'date', c.day)
    from calendar c where c.day = departure and c.closed_to_departure
    union all
    select 5, c.day, jsonb_build_object('code', 'min_stay', 'date', c.day, 'minStay', c.min_stay)
    from calendar c where c.day = arrival and departure - arrival < c.min_stay
    union all
    select 6, c.day, jsonb_build_object('code', 'max_stay', 'date', c.day, 'maxStay', c.max_stay)
    from calendar c where c.day = arrival and departure - arrival > c.max_stay
  )
  select jsonb_build_object(
    'ratePlanId', rate_plan.id,
    'currency', rate_plan.currency,
    'total', (select coalesce(sum(n.amount), 0) from nights n),
    'nights', (select coalesce(jsonb_agg(jsonb_build_object('date', n.day, 'amount', n.amount) order by n.day), '[]') from nights n),
    'restrictions', (select coalesce(jsonb_agg(r.restriction order by r.ord, r.day), '[]') from restrictions r)
  )
  from rate_plan);
end
$$;

-- A derived plan's prices are its base plan's: its days set restrictions only.
create or replace function private.rate_plan_day_before_write()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  if num_nonnulls(new.price, new.extra_adult_price, new.extra_child_price) > 0 and exists (
      select from public.rate_plans p where p.tenant_id = new.tenant_id and p.id = new.rate_plan_id and p.derived_from_id is not null) then
    raise exception 'a derived plan takes its prices from its base plan; set them there'
      using errcode = '23514', constraint = 'rate_plan_days_derived_without_prices';
  end if;
  return new;
end
$$;

create trigger rate_plan_day_before_write before insert or update on public.rate_plan_days
  for each row execute function private.rate_plan_day_before_write();

-- What a property can sell from arrival to departure for a party: per active room type,
-- how many more stays it holds on every night (`available`, its units in service less
-- its held stays and blocks, on the fullest night), whether the party fits it, the units
-- free on every night (to assign), and each active plan that sells the type with its
-- quote (private.quote_stay) and whether it is bookable (no restriction refuses it).
-- Read as the caller, under the tables' policies.
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
begin
  return (
  with types as (
    select rt.id, rt.code, rt.name, rt.max_occupancy, rt.max_adults, rt.max_children
    from public.room_types rt where rt.property_id = for_property and rt.status = 'active'
  ),
  nights as (
    select night::date as night from generate_series(arrival, departure - 1, interval '1 day') night
  ),
  in_service as (
    select u.id, u.name, u.room_type_id from public.units u join types t on t.id = u.room_type_id where u.status = 'active'
  ),
  held as (
    select r.room_type_id, n.night, count(*) as stays
    from public.reservations r join nights n on r.stay @> n.night
    where r.property_id = for_property and r.room_type_id in (select t.id from types t)
      and r.status in ('pending', 'confirmed', 'checked_in') and r.stay && asked
    group by r.room_type_id, n.night
  ),
  blocked as (
    select u.room_type_id, n.night, count(*) as units
    from public.unit_blocks b join in_service u on u.id = b.unit_id join nights n on b.nights @> n.night
    where b.property_id = for_property and b.nights && asked
    group by u.room_type_id, n.night
  ),
  busy as (
    select r.unit_id as id from public.reservations r
    where r.property_id = for_property and r.unit_id is not null and r.status in ('pending', 'confirmed', 'checked_in')
      and r.stay && asked
    union
    select b.unit_id from public.unit_blocks b where b.property_id = for_property and b.nights && asked
  )
  select jsonb_build_object(
    'propertyId', for_property, 'arrival', arrival, 'departure', departure, 'nights', departure - arrival,
    'adults', adults, 'children', children,
    'roomTypes', coalesce(jsonb_agg(jsonb_build_object(
      'roomTypeId', t.id, 'code', t.code, 'name', t.name, 'maxOccupancy', t.max_occupancy,
      'fitsParty', adults + children <= t.max_occupancy and adults <= coalesce(t.max_adults, t.max_occupancy)
                   and children <= coalesce(t.max_children, t.max_occupancy - 1),
      'available', (
        select greatest(0, coalesce(min((select count(*) from in_service u where u.room_type_id = t.id)
                                        - coalesce(b.units, 0) - coalesce(h.stays, 0)), 0))
        from nights n
        left join held h on h.room_type_id = t.id and h.night = n.night
        left join blocked b on b.room_type_id = t.id and b.night = n.night),
      'freeUnits', coalesce((
        select jsonb_agg(jsonb_build_object('unitId', u.id, 'name', u.name) order by u.name)
        from in_service u where u.room_type_id = t.id and u.id not in (select busy.id from busy)), '[]'),
      'ratePlans', coalesce((
        select jsonb_agg(q.quote || jsonb_build_object('code', p.code, 'name', p.name,
                                                       'bookable', jsonb_array_length(q.quote -> 'restrictions') = 0)
                         order by p.code)
        from public.rate_plans p
        cross join lateral (select private.quote_stay(p.id, t.id, arrival, departure, adults, children) as quote) q
        where p.property_id = for_property and p.active and (p.room_type_id is null or p.room_type_id = t.id)), '[]')
    ) order by t.code), '[]'))
  from types t);
end
$$;
