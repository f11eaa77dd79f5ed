-- Properties, the room types they sell, their rentable units and the rate plans that
-- price their stays.
-- Owners and admins set them up; everyone in the tenant reads them.
create table public.properties (
  tenant_id uuid not null default private.request_tenant_id()
    constraint properties_tenant_id_fkey references public.tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  name text not null constraint properties_name_check check (length(btrim(name)) between 1 and 200),
  timezone text not null constraint properties_timezone_check check (private.is_iana_timezone(timezone)),
  currency text not null constraint properties_currency_check check (private.is_iso_currency(currency)),
  address_line1 text constraint properties_address_line1_check check (length(address_line1) <= 200),
  address_line2 text constraint properties_address_line2_check check (length(address_line2) <= 200),
  city text constraint properties_city_check check (length(city) <= 100),
  region text constraint properties_region_check check (length(region) <= 100),
  postal_code text constraint properties_postal_code_check check (length(postal_code) <= 20),
  country_code text constraint properties_country_code_check check (country_code ~ '^[A-Z]{2}$'),
  email text constraint properties_email_check check (email ~ '^[^@\s]+@[^@\s]+\.[^@\s]+$'),
  phone text constraint properties_phone_check check (phone ~ '^\+[1-9][0-9]{6,14}$'),
  check_in_time time not null default '15:00',
  check_out_time time not null default '11:00',
  status text not null default 'active' constraint properties_status_check check (status in ('active', 'archived')),
  created_by uuid default auth.uid()
    constraint properties_created_by_fkey references auth.users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint properties_pkey primary key (tenant_id, id),
  constraint properties_tenant_id_name_key unique (tenant_id, name)
);

-- What a property sells: a kind of room (a double, a family suite), with the party it
-- takes. Every unit is of one room type; a stay is booked for a type and given a unit of
-- that type by check-in, and a type never holds more stays on a night than it has units in
-- service that night (inventory.sql).
create table public.room_types (
  tenant_id uuid not null default private.request_tenant_id()
    constraint room_types_tenant_id_fkey references public.tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  property_id uuid not null,
  code text not null constraint room_types_code_check check (code ~ '^[A-Z0-9][A-Z0-9_-]{0,31}$'),
  name text not null constraint room_types_name_check check (length(btrim(name)) between 1 and 200),
  description text constraint room_types_description_check check (length(description) <= 2000),
  -- The party a rate's price is for; guests beyond it pay a rate's extra-adult and
  -- extra-child amounts, up to the maxima.
  standard_occupancy integer not null default 2
    constraint room_types_standard_occupancy_check check (standard_occupancy between 1 and 100),
  max_occupancy integer not null default 2 constraint room_types_max_occupancy_check check (max_occupancy between 1 and 100),
  -- Null: up to max_occupancy adults, and children up to max_occupancy less one adult.
  max_adults integer constraint room_types_max_adults_check check (max_adults between 1 and 100),
  max_children integer constraint room_types_max_children_check check (max_children between 0 and 99),
  status text not null default 'active' constraint room_types_status_check check (status in ('active', 'archived')),
  created_by uuid default auth.uid()
    constraint room_types_created_by_fkey references auth.users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint room_types_pkey primary key (tenant_id, id),
  -- Lets units and reservations require a room type of their own property.
  constraint room_types_tenant_id_property_id_id_key unique (tenant_id, property_id, id),
  constraint room_types_tenant_id_property_id_code_key unique (tenant_id, property_id, code),
  constraint room_types_standard_within_max_occupancy check (standard_occupancy <= max_occupancy),
  constraint room_types_max_adults_within_max_occupancy check (max_adults <= max_occupancy),
  constraint room_types_max_children_below_max_occupancy check (max_children < max_occupancy),
  constraint room_types_tenant_id_property_id_fkey
    foreign key (tenant_id, property_id) references public.properties (tenant_id, id)
);

create table public.units (
  tenant_id uuid not null default private.request_tenant_id()
    constraint units_tenant_id_fkey references public.tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  property_id uuid not null,
  name text not null constraint units_name_check check (length(btrim(name)) between 1 and 100),
  type text not null default 'room'
    constraint units_type_check check (type in ('room', 'suite', 'apartment', 'house', 'dorm_bed', 'other')),
  capacity integer not null default 2 constraint units_capacity_check check (capacity between 1 and 100),
  floor text constraint units_floor_check check (length(floor) <= 20),
  -- Only an active unit counts in its room type's inventory and takes stays; a unit out
  -- of order for some nights keeps its status and gets a dated block (inventory.sql).
  status text not null default 'active'
    constraint units_status_check check (status in ('active', 'out_of_service', 'archived')),
  created_by uuid default auth.uid() constraint units_created_by_fkey references auth.users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  -- What it is sold as; set by unit_default_room_type when a writer gives none.
  room_type_id uuid not null,
  constraint units_pkey primary key (tenant_id, id),
  -- Lets reservations and tasks require that their unit is in their property.
  constraint units_tenant_id_property_id_id_key unique (tenant_id, property_id, id),
  constraint units_tenant_id_property_id_name_key unique (tenant_id, property_id, name),
  constraint units_tenant_id_property_id_fkey
    foreign key (tenant_id, property_id) references public.properties (tenant_id, id),
  constraint units_tenant_id_property_id_room_type_id_fkey
    foreign key (tenant_id, property_id, room_type_id) references public.room_types (tenant_id, property_id, id)
);
-- A room type's units, in service or not: its inventory.
create index units_tenant_room_type_idx on public.units (tenant_id, room_type_id);

-- A unit created without a room type joins its property's room type for its kind and
-- capacity (code ROOM-2, SUITE-4, ...; name "Room for 2"), made the first time with the
-- capacity as its maximum occupancy: so writers that predate room types keep working,
-- each unit has exactly one type, and the party a unit took before, its type takes.
create or replace function private.unit_default_room_type()
returns trigger
language plpgsql
set search_path = ''
as $$
declare
  default_code text := upper(new.type) || '-' || new.capacity;
begin
  if new.room_type_id is not null then
    return new;
  end if;
  select rt.id into new.room_type_id from public.room_types rt
  where rt.tenant_id = new.tenant_id and rt.property_id = new.property_id and rt.code = default_code;
  if new.room_type_id is null then
    insert into public.room_types (tenant_id, property_id, code, name, standard_occupancy, max_occupancy)
    values (new.tenant_id, new.property_id, default_code,
            initcap(replace(new.type, '_', ' ')) || ' for ' || new.capacity, least(2, new.capacity), new.capacity)
    on conflict on constraint room_types_tenant_id_property_id_code_key do nothing
    returning id into new.room_type_id;
    -- Another writer made it at the same moment.
    if new.room_type_id is null then
      select rt.id into new.room_type_id from public.room_types rt
      where rt.tenant_id = new.tenant_id and rt.property_id = new.property_id and rt.code = default_code;
    end if;
  end if;
  return new;
end
$$;

create trigger unit_default_room_type before insert on public.units
  for each row execute function private.unit_default_room_type();

create trigger forbid_tenant_change before update of tenant_id, created_at, created_by on public.properties
  for each row execute function private.forbid_tenant_change();
create trigger touch_updated_at before update on public.properties
  for each row execute function private.touch_updated_at();
create trigger forbid_tenant_change before update of tenant_id, created_at, created_by on public.room_types
  for each row execute function private.forbid_tenant_change();
create trigger touch_updated_at before update on public.room_types
  for each row execute function private.touch_updated_at();
create trigger forbid_tenant_change before update of tenant_id, created_at, created_by on public.units
  for each row execute function private.forbid_tenant_change();
create trigger touch_updated_at before update on public.units
  for each row execute function private.touch_updated_at();

alter table public.properties enable row level security;
alter table public.room_types enable row level security;
alter table public.units enable row level security;
revoke all on public.properties, public.room_types, public.units from anon;

create policy "members read properties" on public.properties
  for select to authenticated
  using (tenant_id = (select private.request_tenant_id()) and (select private.request_is_member()));
create policy "managers create properties" on public.properties
  for insert to authenticated
  with check (
    tenant_id = (select private.request_tenant_id()) and (select private.request_is_manager())
    and created_by is not distinct from (select auth.uid())
  );
create policy "managers update properties" on public.properties
  for update to authenticated
  using (tenant_id = (select private.request_tenant_id()) and (select private.request_is_manager()))
  with check (tenant_id = (select private.request_tenant_id()) and (select private.request_is_manager()));
create policy "managers delete properties" on public.properties
  for delete to authenticated
  using (tenant_id = (select private.request_tenant_id()) and (select private.request_is_manager()));

create policy "members read room types" on public.room_types
  for select to authenticated
  using (tenant_id = (select private.request_tenant_id()) and (select private.request_is_member()));
create policy "managers create room types" on public.room_types
  for insert to authenticated
  with check (
    tenant_id = (select private.request_tenant_id()) and (select private.request_is_manager())
    and created_by is not distinct from (select auth.uid())
  );
create policy "managers update room types" on public.room_types
  for update to authenticated
  using (tenant_id = (select private.request_tenant_id()) and (select private.request_is_manager()))
  with check (tenant_id = (select private.request_tenant_id()) and (select private.request_is_manager()));
create policy "managers delete room types" on public.room_types
  for delete to authenticated
  using (tenant_id = (select private.request_tenant_id()) and (select private.request_is_manager()));

create policy "members read units" on public.units
  for select to authenticated
  using (tenant_id = (select private.request_tenant_id()) and (select private.request_is_member()));
create policy "managers create units" on public.units
  for insert to authenticated
  with check (
    tenant_id = (select private.request_tenant_id()) and (select private.request_is_manager())
    and created_by is not distinct from (select auth.uid())
  );
create policy "managers update units" on public.units
  for update to authenticated
  using (tenant_id = (select private.request_tenant_id()) and (select private.request_is_manager()))
  with check (tenant_id = (select private.request_tenant_id()) and (select private.request_is_manager()));
create policy "managers delete units" on public.units
  for delete to authenticated
  using (tenant_id = (select private.request_tenant_id()) and (select private.request_is_manager()));

-- What a stay costs at a property. Owners and admins price; everyone reads.
create table public.rate_plans (
  tenant_id uuid not null default private.request_tenant_id()
    constraint rate_plans_tenant_id_fkey references public.tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  property_id uuid not null,
  name text not null constraint rate_plans_name_check check (length(btrim(name)) between 1 and 200),
  code text not null constraint rate_plans_code_check check (code ~ '^[A-Z0-9][A-Z0-9_-]{0,31}$'),
  currency text not null constraint rate_plans_currency_check check (private.is_iso_currency(currency)),
  -- At most 10^9 minor units, so that a stay's default total (the price times at most 365
  -- nights) stays far within the maximum of an amount (reservations.sql says why there is one).
  nightly_price bigint not null constraint rate_plans_nightly_price_check check (nightly_price >= 0)
    constraint rate_plans_nightly_price_within_maximum check (nightly_price <= 1000000000),
  min_stay integer not null default 1 constraint rate_plans_min_stay_check check (min_stay between 1 and 365),
  max_stay integer constraint rate_plans_max_stay_check check (max_stay between 1 and 365),
  cancellation_policy text not null default 'flexible'
    constraint rate_plans_cancellation_policy_check
      check (cancellation_policy in ('flexible', 'moderate', 'strict', 'non_refundable')),
  -- Free cancellation until this many hours before check-in; null with non_refundable.
  free_cancellation_hours integer
    constraint rate_plans_free_cancellation_hours_check check (free_cancellation_hours between 0 and 8760),
  active boolean not null default true,
  created_by uuid default auth.uid()
    constraint rate_plans_created_by_fkey references auth.users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  -- The room type it sells; null: every room type of its property, at the same prices.
  room_type_id uuid,
  -- What each guest above the room type's standard occupancy adds to a night's price.
  extra_adult_price bigint not null default 0
    constraint rate_plans_extra_adult_price_check check (extra_adult_price between 0 and 1000000000),
  extra_child_price bigint not null default 0
    constraint rate_plans_extra_child_price_check check (extra_child_price between 0 and 1000000000),
  -- A derived plan's prices are its base plan's, a percentage more or less (-10.00: ten
  -- percent off) or an amount added (negative: off), following every change of them
  -- (rates.sql). A base plan is not itself derived.
  derived_from_id uuid,
  derived_percent numeric(5, 2) constraint rate_plans_derived_percent_check check (derived_percent between -100 and 100),
  derived_amount bigint
    constraint rate_plans_derived_amount_check check (derived_amount between -1000000000 and 1000000000),
  constraint rate_plans_pkey primary key (tenant_id, id),
  -- Lets a reservation require a rate plan of its property in its own currency.
  constraint rate_plans_tenant_id_property_id_id_currency_key unique (tenant_id, property_id, id, currency),
  constraint rate_plans_tenant_id_property_id_code_key unique (tenant_id, property_id, code),
  constraint rate_plans_max_stay_not_below_min_stay check (max_stay is null or max_stay >= min_stay),
  constraint rate_plans_non_refundable_without_free_cancellation
    check (cancellation_policy <> 'non_refundable' or free_cancellation_hours is null),
  constraint rate_plans_derivation_complete check (
    (derived_from_id is null and derived_percent is null and derived_amount is null)
    or (derived_from_id is not null and num_nonnulls(derived_percent, derived_amount) = 1)),
  constraint rate_plans_tenant_id_property_id_fkey
    foreign key (tenant_id, property_id) references public.properties (tenant_id, id),
  constraint rate_plans_tenant_id_property_id_room_type_id_fkey
    foreign key (tenant_id, property_id, room_type_id) references public.room_types (tenant_id, property_id, id),
  -- The base plan is of the same property and currency.
  constraint rate_plans_tenant_id_property_id_derived_from_id_currency_fkey
    foreign key (tenant_id, property_id, derived_from_id, currency)
    references public.rate_plans (tenant_id, property_id, id, currency)
);
create index rate_plans_tenant_derived_from_idx on public.rate_plans (tenant_id, derived_from_id) where derived_from_id is not null;

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

create trigger forbid_tenant_change before update of tenant_id, created_at, created_by on public.rate_plans
  for each row execute function private.forbid_tenant_change();
create trigger touch_updated_at before update on public.rate_plans
  for each row execute function private.touch_updated_at();

alter table public.rate_plans enable row level security;
revoke all on public.rate_plans from anon;

create policy "members read rate plans" on public.rate_plans
  for select to authenticated
  using (tenant_id = (select private.request_tenant_id()) and (select private.request_is_member()));
create policy "managers create rate plans" on public.rate_plans
  for insert to authenticated
  with check (
    tenant_id = (select private.request_tenant_id()) and (select private.request_is_manager())
    and created_by is not distinct from (select auth.uid())
  );
create policy "managers update rate plans" on public.rate_plans
  for update to authenticated
  using (tenant_id = (select private.request_tenant_id()) and (select private.request_is_manager()))
  with check (tenant_id = (select private.request_tenant_id()) and (select private.request_is_manager()));
create policy "managers delete rate plans" on public.rate_plans
  for delete to authenticated
  using (tenant_id = (select private.request_tenant_id()) and (select private.request_is_manager()));
