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
  -- The calendar import that holds the unit on these nights (calendar-imports.sql); null for
  -- a block a member made.
  calendar_import_id uuid,
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
-- is every stay of their tenant. PL/pgSQL, so that a connection keeps its plan. The held
-- stays are a range of check-ins of one btree, as availability reads them: no stay that
-- meets the first night checked in more than the tenant's longest stay before it.
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
    where r.tenant_id = for_tenant and r.room_type_id = of_room_type
      and r.status in ('pending', 'confirmed', 'checked_in') and r.id is distinct from except_reservation
      and r.check_in < upper(over_nights) and r.check_out > lower(over_nights)
      and r.check_in >= lower(over_nights) - (select coalesce(max(l.check_out - l.check_in), 0)
                                              from public.reservations l where l.tenant_id = for_tenant)
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
