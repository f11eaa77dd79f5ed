-- Room types, unit blocks and the inventory guarantee: every unit is of one room type, a
-- reservation is made for one, and on no night does a type hold more stays than it has
-- units in service that night, whoever writes (supabase/schemas/inventory.sql). Existing
-- units join a type made per property for their kind and capacity, as a unit created
-- without a type does; existing reservations with a unit take its type. The schema part
-- is what scripts/schema-compare.sh --schemas --sql writes from supabase/schemas; the
-- backfills, and the order that lets a column become required after them, by hand.

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

create trigger forbid_tenant_change before update of tenant_id, created_at, created_by on public.room_types
  for each row execute function private.forbid_tenant_change();
create trigger touch_updated_at before update on public.room_types
  for each row execute function private.touch_updated_at();

alter table public.room_types enable row level security;
revoke all on public.room_types from anon;

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

-- Units: a room type each.
alter table public.units add column room_type_id uuid;

insert into public.room_types (tenant_id, property_id, code, name, standard_occupancy, max_occupancy, created_by)
select u.tenant_id, u.property_id, upper(u.type) || '-' || u.capacity,
       initcap(replace(u.type, '_', ' ')) || ' for ' || u.capacity, least(2, u.capacity), u.capacity, null
from public.units u
group by u.tenant_id, u.property_id, u.type, u.capacity;

-- The units and reservations keep their updated_at, and no reservation trigger reacts:
-- nothing about them changed but the type they always were.
alter table public.units disable trigger touch_updated_at;
update public.units u set room_type_id = rt.id
from public.room_types rt
where rt.tenant_id = u.tenant_id and rt.property_id = u.property_id and rt.code = upper(u.type) || '-' || u.capacity;
alter table public.units enable trigger touch_updated_at;

alter table public.units alter column room_type_id set not null;
alter table public.units add constraint units_tenant_id_property_id_room_type_id_fkey
  foreign key (tenant_id, property_id, room_type_id) references public.room_types (tenant_id, property_id, id);
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

-- Reservations: the room type booked.
alter table public.reservations add column room_type_id uuid;
alter table public.reservations add constraint reservations_tenant_id_property_id_room_type_id_fkey
  foreign key (tenant_id, property_id, room_type_id) references public.room_types (tenant_id, property_id, id);

alter table public.reservations disable trigger user;
update public.reservations r set room_type_id = u.room_type_id
from public.units u
where u.tenant_id = r.tenant_id and u.id = r.unit_id;
alter table public.reservations enable trigger user;

create index reservations_tenant_room_type_stay_idx on public.reservations using gist (tenant_id, room_type_id, stay)
  where status in ('pending', 'confirmed', 'checked_in') and room_type_id is not null;

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
    if nights < plan.min_stay or nights > coalesce(plan.max_stay, nights) then
      raise exception 'rate plan % takes stays of % to % nights, not %',
        plan.code, plan.min_stay, coalesce(plan.max_stay::text, 'any number of'), nights using errcode = '23514';
    end if;
    new.currency := coalesce(new.currency, plan.currency);
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

  return new;
end
$$;

-- The background jobs read them as they read the rest of the job's tenant.
grant select on public.room_types to background_worker;
create policy "background jobs read the job's room types" on public.room_types
  for select to background_worker using (tenant_id = (select private.request_tenant_id()));

-- What a property can sell on a night, enforced whoever writes: on no night does a room
-- type hold more stays (pending, confirmed, checked in) than it has units in service that
-- night. A unit is in service on a night when its status is active and no dated block
-- (out of order: a burst pipe, a renovation) covers the night. A block never covers a
-- night its unit holds a stay.
--
-- Every write that takes from a room type's inventory (a stay booked, moved, lengthened
-- or given another type; a block; a unit leaving service or its type) first takes the
-- type's inventory lock, then counts with what is committed: the next writer of the same
-- type waits, and its count sees the first one's stay. The count is a statement of its own
-- after the lock, which at read committed sees what committed while it waited; at
-- serializable, Postgres's own checks refuse one of two writers that could not both have
-- seen the other; repeatable read would count with a snapshot taken before the wait, so
-- such a write is refused there.

create table public.unit_blocks (
  tenant_id uuid not null default private.request_tenant_id()
    constraint unit_blocks_tenant_id_fkey references public.tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  -- The unit's property, filled from the unit when a writer gives none.
  property_id uuid not null,
  unit_id uuid not null,
  -- The first night blocked, and the first night the unit is back (exclusive, as a stay's
  -- check-out is).
  starts_on date not null,
  ends_on date not null,
  nights daterange generated always as (daterange(starts_on, ends_on, '[)')) stored,
  reason text not null constraint unit_blocks_reason_check check (length(btrim(reason)) between 1 and 500),
  created_by uuid default auth.uid()
    constraint unit_blocks_created_by_fkey references auth.users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint unit_blocks_pkey primary key (tenant_id, id),
  constraint unit_blocks_ends_after_start check (ends_on > starts_on),
  constraint unit_blocks_at_most_3660_nights check (ends_on - starts_on <= 3660),
  constraint unit_blocks_tenant_id_property_id_unit_id_fkey
    foreign key (tenant_id, property_id, unit_id) references public.units (tenant_id, property_id, id) on delete cascade,
  -- One block at a time on a unit's night: a longer outage is one block made longer.
  constraint unit_blocks_no_overlap exclude using gist (tenant_id with =, unit_id with =, nights with &&)
);
create index unit_blocks_tenant_property_starts_idx on public.unit_blocks (tenant_id, property_id, starts_on);

create trigger forbid_tenant_change before update of tenant_id, created_at, created_by on public.unit_blocks
  for each row execute function private.forbid_tenant_change();
create trigger touch_updated_at before update on public.unit_blocks
  for each row execute function private.touch_updated_at();

alter table public.unit_blocks enable row level security;
revoke all on public.unit_blocks from anon;

-- The front desk and housekeeping take a room out of order and back as owners and admins
-- do; removing the record is for owners and admins, as for reservations.
create policy "members read unit blocks" on public.unit_blocks
  for select to authenticated
  using (tenant_id = (select private.request_tenant_id()) and (select private.request_is_member()));
create policy "members create unit blocks" on public.unit_blocks
  for insert to authenticated
  with check (
    tenant_id = (select private.request_tenant_id()) and (select private.request_is_member())
    and created_by is not distinct from (select auth.uid())
  );
create policy "members update unit blocks" on public.unit_blocks
  for update to authenticated
  using (tenant_id = (select private.request_tenant_id()) and (select private.request_is_member()))
  with check (tenant_id = (select private.request_tenant_id()) and (select private.request_is_member()));
create policy "managers delete unit blocks" on public.unit_blocks
  for delete to authenticated
  using (tenant_id = (select private.request_tenant_id()) and (select private.request_is_manager()));

-- The inventory lock of one room type: an advisory transaction lock, so it needs no
-- privilege on the type, ends with the transaction and stays on the one server connection
-- a transaction pooler gives it. Its class is the bytes "PMS" and 2 (the unit calendar's
-- is "PMS" and 1, reservations.sql); two types sharing a hash only wait for each other.
create or replace function private.lock_room_type_inventory(tenant uuid, room_type uuid)
returns void
language plpgsql
set search_path = ''
as $$
begin
  if current_setting('transaction_isolation') = 'repeatable read' then
    raise exception 'a write that takes from a room type''s inventory runs at read committed or serializable, not repeatable read'
      using errcode = '0A000';
  end if;
  perform pg_catalog.pg_advisory_xact_lock(1347244802, pg_catalog.hashtext(tenant::text || '/' || room_type::text));
end
$$;
revoke all on function private.lock_room_type_inventory(uuid, uuid) from public;
-- A block's trigger runs as the member who writes it.
grant execute on function private.lock_room_type_inventory(uuid, uuid) to authenticated;

-- The nights of `over_nights` on which the room type could not hold `more_stays` more
-- stays: its held stays (but `except_reservation`) and the stays asked for against its
-- active units not blocked that night (by a block other than `except_block`). Empty when
-- every night has room. Reads as its caller: the inventory triggers that run as the
-- tables' owner count every stay of the tenant, a member counts what members read, which
-- is every stay of their tenant. PL/pgSQL, so that a connection keeps its plan.
create or replace function private.room_type_shortfall(
  for_tenant uuid,
  of_room_type uuid,
  over_nights daterange,
  except_reservation uuid,
  except_block uuid,
  more_stays integer
)
returns date[]
language plpgsql
stable
set search_path = ''
as $$
begin
  return (
  with in_service as (
    select u.id from public.units u
    where u.tenant_id = for_tenant and u.room_type_id = of_room_type and u.status = 'active'
  ),
  held as (
    select night::date as night, count(*) as stays
    from public.reservations r
    cross join lateral generate_series(greatest(r.check_in, lower(over_nights)), least(r.check_out, upper(over_nights)) - 1,
                                       interval '1 day') night
    where r.tenant_id = for_tenant and r.room_type_id = of_room_type and r.stay && over_nights
      and r.status in ('pending', 'confirmed', 'checked_in') and r.id is distinct from except_reservation
    group by 1
  ),
  blocked as (
    select night::date as night, count(*) as units
    from public.unit_blocks b
    join in_service u on u.id = b.unit_id
    cross join lateral generate_series(greatest(b.starts_on, lower(over_nights)), least(b.ends_on, upper(over_nights)) - 1,
                                       interval '1 day') night
    where b.tenant_id = for_tenant and b.nights && over_nights and b.id is distinct from except_block
    group by 1
  )
  select coalesce(array_agg(n.night order by n.night), '{}')
  from (select night::date as night
        from generate_series(lower(over_nights), upper(over_nights) - 1, interval '1 day') night) n
  left join held h on h.night = n.night
  left join blocked b on b.night = n.night
  where coalesce(h.stays, 0) + more_stays > (select count(*) from in_service) - coalesce(b.units, 0));
end
$$;
revoke all on function private.room_type_shortfall(uuid, uuid, daterange, uuid, uuid, integer) from public;
grant execute on function private.room_type_shortfall(uuid, uuid, daterange, uuid, uuid, integer) to authenticated;

-- A held stay's claim on inventory, after reservation_before_write has given it its unit's
-- room type: a unit blocked on one of its nights takes no stay, and its room type must
-- have room on every night. A stay that keeps its type and only shortens takes nothing
-- more, and is let through even where the type is already short.
create or replace function private.reserve_room_type_inventory()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  asked daterange := daterange(new.check_in, new.check_out, '[)');
  block record;
  short date[];
  was_held boolean := tg_op = 'UPDATE' and old.status in ('pending', 'confirmed', 'checked_in');
begin
  if new.unit_id is not null and (not was_held
      or (new.unit_id, new.check_in, new.check_out) is distinct from (old.unit_id, old.check_in, old.check_out)) then
    -- The unit's own calendar first, under its lock (lock_unit_calendar): a stay asked for
    -- on a taken unit is told so, rather than that its type is full.
    if exists (select from public.reservations r
               where r.tenant_id = new.tenant_id and r.unit_id = new.unit_id and r.id <> new.id
                 and r.status in ('pending', 'confirmed', 'checked_in') and r.stay && asked) then
      raise exception 'the unit is already booked for some of these nights'
        using errcode = '23P01', constraint = 'reservations_no_overlapping_stays';
    end if;
    select b.id, b.starts_on, b.ends_on into block from public.unit_blocks b
    where b.tenant_id = new.tenant_id and b.unit_id = new.unit_id and b.nights && asked
    order by b.starts_on limit 1;
    if found then
      raise exception 'the unit is out of order from % to %', block.starts_on, block.ends_on
        using errcode = 'PT409', constraint = 'reservations_unit_blocked',
              detail = jsonb_build_object('blockId', block.id, 'startsOn', block.starts_on, 'endsOn', block.ends_on)::text;
    end if;
  end if;

  if new.room_type_id is null
      or (was_held and new.room_type_id = old.room_type_id and new.check_in >= old.check_in and new.check_out <= old.check_out) then
    return new;
  end if;
  perform private.lock_room_type_inventory(new.tenant_id, new.room_type_id);
  short := private.room_type_shortfall(new.tenant_id, new.room_type_id, asked, new.id, null, 1);
  if cardinality(short) > 0 then
    raise exception 'the room type has no room left on %', array_to_string(short, ', ')
      using errcode = 'PT409', constraint = 'reservations_room_type_inventory',
            detail = jsonb_build_object('roomTypeId', new.room_type_id, 'nights', to_jsonb(short))::text;
  end if;
  return new;
end
$$;
revoke all on function private.reserve_room_type_inventory() from public;

create trigger reserve_room_type_inventory
  before insert or update of room_type_id, unit_id, check_in, check_out, status on public.reservations
  for each row
  when (new.status in ('pending', 'confirmed', 'checked_in') and (new.room_type_id is not null or new.unit_id is not null))
  execute function private.reserve_room_type_inventory();

-- A block's rules: it stays on its unit; the unit holds no stay on its nights; and the
-- unit's room type keeps room for its stays without the unit on those nights. It takes
-- the unit's calendar lock, as a stay put on the unit does, and then the type's. It reads
-- as the caller: a unit the caller may not see is no unit, before anything of its tenant
-- is counted.
create or replace function private.unit_block_before_write()
returns trigger
language plpgsql
set search_path = ''
as $$
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

  perform pg_catalog.pg_advisory_xact_lock(1347244801, pg_catalog.hashtext(new.tenant_id::text || '/' || new.unit_id::text));
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
$$;
revoke all on function private.unit_block_before_write() from public;

create trigger unit_block_before_write before insert or update on public.unit_blocks
  for each row execute function private.unit_block_before_write();

-- A unit leaving its room type's inventory (out of service, archived, given another type,
-- deleted) from the property's today on: it holds no stay from then on, and its type keeps
-- room for its stays without it.
create or replace function private.unit_leaves_inventory()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  -- The night that began yesterday is still under way until its check-out.
  today date := (select (now() at time zone p.timezone)::date - 1 from public.properties p
                 where p.tenant_id = old.tenant_id and p.id = old.property_id);
  held_stay record;
  last_night date;
  short date[];
begin
  if tg_op = 'UPDATE' then
    select r.id, r.confirmation_code, r.check_in, r.check_out into held_stay from public.reservations r
    where r.tenant_id = old.tenant_id and r.unit_id = old.id and r.status in ('pending', 'confirmed', 'checked_in')
      and r.check_out > today
    order by r.check_in limit 1;
    if found then
      raise exception 'the unit holds stay % from % to %', held_stay.confirmation_code, held_stay.check_in, held_stay.check_out
        using errcode = 'PT409', constraint = 'units_hold_stays',
              detail = jsonb_build_object('reservationId', held_stay.id, 'confirmationCode', held_stay.confirmation_code,
                                          'checkIn', held_stay.check_in, 'checkOut', held_stay.check_out)::text,
              hint = 'Move the stay to another unit first, or block the unit for the nights it is free.';
    end if;
  end if;
  perform private.lock_room_type_inventory(old.tenant_id, old.room_type_id);
  select max(r.check_out) into last_night from public.reservations r
  where r.tenant_id = old.tenant_id and r.room_type_id = old.room_type_id
    and r.status in ('pending', 'confirmed', 'checked_in') and r.check_out > today;
  if last_night is not null then
    short := private.room_type_shortfall(old.tenant_id, old.room_type_id, daterange(today, last_night, '[)'), null, null, 0);
    if cardinality(short) > 0 then
      raise exception 'without the unit its room type has no room for its stays on %', array_to_string(short, ', ')
        using errcode = 'PT409', constraint = 'units_room_type_inventory',
              detail = jsonb_build_object('roomTypeId', old.room_type_id, 'nights', to_jsonb(short))::text;
    end if;
  end if;
  return null;
end
$$;
revoke all on function private.unit_leaves_inventory() from public;

create trigger unit_leaves_inventory_on_update after update of status, room_type_id on public.units
  for each row
  when (old.status = 'active' and (new.status <> 'active' or new.room_type_id <> old.room_type_id))
  execute function private.unit_leaves_inventory();
create trigger unit_leaves_inventory_on_delete after delete on public.units
  for each row when (old.status = 'active') execute function private.unit_leaves_inventory();

grant select on public.unit_blocks to background_worker;
create policy "background jobs read the job's unit blocks" on public.unit_blocks
  for select to background_worker using (tenant_id = (select private.request_tenant_id()));
