-- Reservations: who stays where, when, at what price, and where the stay is in
-- its lifecycle. The database enforces the lifecycle and that a unit is never
-- booked twice for the same night.
--
-- The maxima of amounts. Amounts are bigint minor units here, but every client (and the
-- API itself, which refuses to read a bigint it cannot hold exactly) reads them as
-- JavaScript numbers, exact only up to 2^53 - 1. So no amount, and no sum the schema
-- keeps, may pass that:
-- - a nightly price is at most 10^9, so the default total of a stay (the price times at
--   most 365 nights) stays within 3.65 * 10^11 (properties.sql);
-- - a reservation's total, a payment and a payment link are each at most 10^12;
-- - a reservation's amount_paid, the sum of its payments that apply_payment keeps, is at
--   most 10^12: a payment that would take it further is refused, whoever records it. So
--   the balance (total_amount - amount_paid) lies within -10^12 and 10^12.
-- 10^12 minor units is ten billion in a currency of cents. The API's schemas
-- (src/money/limits.ts: MAX_AMOUNT, MAX_NIGHTLY_PRICE) take exactly the same, and
-- src/http/database-refusals.ts answers each rule as a 422 naming the field a client sent.
create table public.reservations (
  tenant_id uuid not null default private.request_tenant_id()
    constraint reservations_tenant_id_fkey references public.tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  property_id uuid not null,
  unit_id uuid,
  guest_id uuid not null,
  rate_plan_id uuid,
  -- Always assigned by the database on insert.
  confirmation_code text not null default private.random_code(8)
    constraint reservations_confirmation_code_check check (confirmation_code ~ '^[0-9A-Z]{8}$'),
  check_in date not null,
  check_out date not null,
  stay daterange generated always as (daterange(check_in, check_out, '[)')) stored,
  adults integer not null default 1 constraint reservations_adults_check check (adults between 1 and 50),
  children integer not null default 0 constraint reservations_children_check check (children between 0 and 50),
  status text not null default 'pending'
    constraint reservations_status_check
      check (status in ('pending', 'confirmed', 'checked_in', 'checked_out', 'cancelled', 'no_show')),
  -- A writer's own total, or null: priced from the rate plan's calendar (price_overridden).
  total_amount bigint not null constraint reservations_total_amount_check check (total_amount >= 0)
    constraint reservations_total_amount_within_maximum check (total_amount <= 1000000000000),
  -- Defaults to the rate plan's currency, else the property's.
  currency text not null constraint reservations_currency_check check (private.is_iso_currency(currency)),
  -- Kept by the payments triggers; nobody writes it directly.
  amount_paid bigint not null default 0
    constraint reservations_amount_paid_within_maximum check (amount_paid <= 1000000000000),
  balance bigint generated always as (total_amount - amount_paid) stored,
  source text not null default 'direct'
    constraint reservations_source_check
      check (source in ('direct', 'phone', 'email', 'walk_in', 'website', 'channel_manager', 'ota', 'other')),
  -- The booking's id in the system it came from (a channel manager, an OTA).
  external_reference text
    constraint reservations_external_reference_check check (length(external_reference) between 1 and 200),
  notes text constraint reservations_notes_check check (length(notes) <= 4000),
  cancellation_reason text
    constraint reservations_cancellation_reason_check check (length(cancellation_reason) <= 1000),
  confirmed_at timestamptz,
  checked_in_at timestamptz,
  checked_out_at timestamptz,
  cancelled_at timestamptz,
  no_show_at timestamptz,
  created_by uuid default auth.uid()
    constraint reservations_created_by_fkey references auth.users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  -- What was booked. A unit of this type is assigned by check-in; with a unit and no
  -- type, the unit's type. Null only for a stay booked before room types, with no unit.
  room_type_id uuid,
  -- Whether total_amount is a writer's own, kept when the stay changes, rather than its
  -- rate plan's calendar's.
  price_overridden boolean not null default false,
  -- The channel a booking came through, by the name its channel manager gives it
  -- ("Booking.com", "Expedia", "Airbnb"): set by an integration (external.sql), which
  -- changes and cancels only the stays that carry one.
  channel text constraint reservations_channel_check check (length(btrim(channel)) between 1 and 100),
  constraint reservations_pkey primary key (tenant_id, id),
  constraint reservations_tenant_id_confirmation_code_key unique (tenant_id, confirmation_code),
  -- Targets for children that must match the reservation's currency or property.
  constraint reservations_tenant_id_id_currency_key unique (tenant_id, id, currency),
  constraint reservations_tenant_id_property_id_id_key unique (tenant_id, property_id, id),
  constraint reservations_check_out_after_check_in check (check_out > check_in),
  constraint reservations_stay_at_most_365_nights check (check_out - check_in <= 365),
  constraint reservations_tenant_id_property_id_fkey
    foreign key (tenant_id, property_id) references public.properties (tenant_id, id),
  constraint reservations_tenant_id_property_id_unit_id_fkey
    foreign key (tenant_id, property_id, unit_id) references public.units (tenant_id, property_id, id),
  constraint reservations_tenant_id_property_id_room_type_id_fkey
    foreign key (tenant_id, property_id, room_type_id) references public.room_types (tenant_id, property_id, id),
  constraint reservations_tenant_id_guest_id_fkey
    foreign key (tenant_id, guest_id) references public.guests (tenant_id, id),
  constraint reservations_tenant_id_property_id_rate_plan_id_currency_fkey
    foreign key (tenant_id, property_id, rate_plan_id, currency)
    references public.rate_plans (tenant_id, property_id, id, currency),
  constraint reservations_no_overlapping_stays
    exclude using gist (tenant_id with =, unit_id with =, stay with &&)
    where (status in ('pending', 'confirmed', 'checked_in'))
);

-- The list's dates read one range of a btree, in the list's order. A stay meets the
-- dates when it checks out after `from` and checks in before `to`. Both are comparisons of
-- dates, which are leakproof, so under RLS they can bound an index scan; what no btree can
-- bound is "checks out after `from`" for the stays that checked in long before it. No
-- stay of a tenant is longer than its longest, so every stay that meets `from` checked in
-- at most that many days before it: the list adds that lower bound on check-in
-- (src/reservations/queries.ts), and the longest stay is one step down the index of stay
-- lengths. A page is then the first rows of (tenant_id, check_in, id) from that bound, and
-- its count an index-only scan of the same range, check-out included in the index for the
-- filter.
create index reservations_tenant_check_in_id_idx on public.reservations (tenant_id, check_in, id) include (check_out);
create index reservations_tenant_stay_length_idx on public.reservations (tenant_id, (check_out - check_in));
-- The status filter, in the list's order: a page is the first rows of one index range.
create index reservations_tenant_status_check_in_idx on public.reservations (tenant_id, status, check_in, id);
-- The exact total of a status filter counts the tenant's index entries for the status and
-- reads nothing else. Deduplicated, (tenant_id, status) holds a status's row ids side by
-- side, hundreds to a page, where (tenant_id, status, check_in, id) holds one entry per
-- row. The page itself still reads the wider index, in the list's order.
create index reservations_tenant_status_idx on public.reservations (tenant_id, status);
create index reservations_tenant_property_check_in_idx on public.reservations (tenant_id, property_id, check_in);
create index reservations_tenant_guest_idx on public.reservations (tenant_id, guest_id);
create index reservations_tenant_unit_idx on public.reservations (tenant_id, unit_id) where unit_id is not null;
-- A room type's held stays over a range of nights, for its inventory (inventory.sql) and
-- availability (rates.sql): a range of check-ins, bounded below by the tenant's longest
-- stay as the list's dates are. Comparisons of dates are leakproof, so the range bounds
-- the scan under the policies too, where an overlap of ranges (not leakproof) could not.
-- One index for both: a second, GiST on the stay, cost every held stay's write a GiST
-- insert, and a connection's generic plan of availability took it by a hair's cost for a
-- scan of every stay the type ever held.
create index reservations_tenant_room_type_check_in_idx on public.reservations (tenant_id, room_type_id, check_in)
  include (check_out, unit_id) where status in ('pending', 'confirmed', 'checked_in');
create index reservations_tenant_rate_plan_idx on public.reservations (tenant_id, rate_plan_id) where rate_plan_id is not null;
-- A channel manager that resends a booking finds the one it created: a booking's
-- reference is its channel's (two OTAs may number bookings alike), and a stay without a
-- channel keeps one reference per source.
create unique index reservations_tenant_channel_external_reference_key
  on public.reservations (tenant_id, source, channel, external_reference) nulls not distinct
  where external_reference is not null;
-- An integration syncs its property's reservations by `updatedSince`, in the order they changed.
create index reservations_tenant_property_updated_idx on public.reservations (tenant_id, property_id, updated_at);

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
$$;

create trigger reservation_before_write before insert or update on public.reservations
  for each row execute function private.reservation_before_write();
create trigger forbid_tenant_change before update of tenant_id, created_at, created_by on public.reservations
  for each row execute function private.forbid_tenant_change();
create trigger touch_updated_at before update on public.reservations
  for each row execute function private.touch_updated_at();
-- Later capabilities react to a status change with after-update triggers of their own on
-- this table: tasks (create_cleaning_task_on_checkout), notifications
-- (notify_reservation_status), access codes (revoke_access_codes_when_stay_ends) and
-- outbound webhooks (webhook_on_reservation); the status tallies below keep theirs here.
-- They fire in name order, and none depends on another having run.

alter table public.reservations enable row level security;
revoke all on public.reservations from anon;

create policy "members read reservations" on public.reservations
  for select to authenticated
  using (tenant_id = (select private.request_tenant_id()) and (select private.request_is_member()));
create policy "members create reservations" on public.reservations
  for insert to authenticated
  with check (
    tenant_id = (select private.request_tenant_id()) and (select private.request_is_member())
    and created_by is not distinct from (select auth.uid())
  );
create policy "members update reservations" on public.reservations
  for update to authenticated
  using (tenant_id = (select private.request_tenant_id()) and (select private.request_is_member()))
  with check (tenant_id = (select private.request_tenant_id()) and (select private.request_is_member()));
-- Staff cancel; removing the record altogether is for owners and admins.
create policy "managers delete reservations" on public.reservations
  for delete to authenticated
  using (tenant_id = (select private.request_tenant_id()) and (select private.request_is_manager()));

-- Concurrent writes of overlapping stays on one unit: one wins and the others get
-- reservations_no_overlapping_stays (409), never a deadlock.
--
-- An exclusion constraint inserts the new index entry first and looks for conflicts
-- after. Two transactions that each inserted an overlapping stay then wait for each
-- other, and Postgres aborts one of them with 40P01 (a unique index would make the second
-- wait instead; exclusion constraints have no such path). So a write that puts a stay on
-- a unit's calendar first takes a lock on that calendar: the next writer waits until the
-- first commits or rolls back, and its own check then sees a committed stay.
--
-- The lock is an advisory transaction lock: it needs no privilege on units (staff may
-- book but not edit units), ends with the transaction, and so stays with the one server
-- connection a transaction pooler gives the transaction. Its keys are a class of its own
-- (the bytes "PMS" and 1) and a hash of the tenant and the unit; two units sharing a
-- hash only wait for each other now and then.
create or replace function private.lock_unit_nights(tenant uuid, unit uuid)
returns void
language plpgsql
set search_path = ''
as $$
begin
  perform pg_catalog.pg_advisory_xact_lock(1347244801, pg_catalog.hashtext(tenant::text || '/' || unit::text));
end;
$$;

comment on function private.lock_unit_nights(uuid, uuid) is
  'Takes the lock of one unit''s calendar until the transaction ends: every write that puts a stay or a block on the unit''s nights takes it first.';

create or replace function private.lock_unit_calendar()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  perform private.lock_unit_nights(new.tenant_id, new.unit_id);
  return new;
end;
$$;

comment on function private.lock_unit_calendar() is
  'Serializes writes of stays on one unit''s calendar, so that overlapping writes end in reservations_no_overlapping_stays rather than a deadlock.';

-- Only writes the exclusion constraint checks: a stay that occupies its unit.
create trigger lock_unit_calendar
  before insert or update of unit_id, check_in, check_out, status on public.reservations
  for each row
  when (new.unit_id is not null and new.status in ('pending', 'confirmed', 'checked_in'))
  execute function private.lock_unit_calendar();

-- The reservation list's exact total without counting rows, where its filters allow:
-- by status, by property, both, or none; counting a large tenant's stays would read every
-- one of their index entries on each request.
--
-- The reservation triggers keep a tally per tenant, property and status as rows of signed
-- changes (+1 where a stay enters a status or property, -1 where it leaves one), inserted
-- and never updated, so that concurrent writes to one property never wait for each other
-- on a counter's row. A total is the sum of its rows, read in the list's own statement and
-- snapshot, so it is as exact as a count. Every minute pg_cron folds each key's rows into
-- one, which keeps the sums short; a database without pg_cron keeps them correct, only
-- longer. An integration reads its property's tallies (external.sql).
create table public.reservation_status_tallies (
  tenant_id uuid not null
    constraint reservation_status_tallies_tenant_id_fkey references public.tenants (id) on delete cascade,
  property_id uuid not null,
  status text not null
    constraint reservation_status_tallies_status_check
      check (status in ('pending', 'confirmed', 'checked_in', 'checked_out', 'cancelled', 'no_show')),
  reservations integer not null,
  -- A property that still has reservations cannot be deleted, so the tally rows it takes
  -- with it sum to nothing.
  constraint reservation_status_tallies_tenant_id_property_id_fkey
    foreign key (tenant_id, property_id) references public.properties (tenant_id, id) on delete cascade
);
-- The total reads the tenant's rows for its statuses, the property among them, and the
-- counts themselves from the index.
create index reservation_status_tallies_tenant_status_property_idx
  on public.reservation_status_tallies (tenant_id, status, property_id) include (reservations);
create index reservation_status_tallies_tenant_property_idx
  on public.reservation_status_tallies (tenant_id, property_id);

alter table public.reservation_status_tallies enable row level security;
revoke all on public.reservation_status_tallies from anon, authenticated, api_integration;
grant select on public.reservation_status_tallies to authenticated, api_integration;

-- Whoever reads a tenant's or a property's reservations reads their tallies, and no one
-- writes them but the trigger.
create policy "members read their tenant's reservation tallies" on public.reservation_status_tallies
  for select to authenticated
  using (tenant_id = (select private.request_tenant_id()) and (select private.request_is_member()));

-- A stay's move between statuses or properties, its arrival and its removal, as tally rows.
-- A reservation removed with its tenant (the tenant's cascade) writes nothing: its
-- tenant's tallies go with the tenant.
create or replace function private.tally_reservation_status()
returns trigger
language plpgsql security definer
set search_path = ''
as $$
begin
  if tg_op = 'DELETE' then
    if exists (select from public.tenants t where t.id = old.tenant_id) then
      insert into public.reservation_status_tallies (tenant_id, property_id, status, reservations)
      values (old.tenant_id, old.property_id, old.status, -1);
    end if;
  elsif tg_op = 'UPDATE' then
    insert into public.reservation_status_tallies (tenant_id, property_id, status, reservations)
    values (old.tenant_id, old.property_id, old.status, -1), (new.tenant_id, new.property_id, new.status, 1);
  else
    insert into public.reservation_status_tallies (tenant_id, property_id, status, reservations)
    values (new.tenant_id, new.property_id, new.status, 1);
  end if;
  return null;
end
$$;
revoke all on function private.tally_reservation_status() from public;

create trigger tally_reservation_status_on_insert_or_delete
  after insert or delete on public.reservations
  for each row execute function private.tally_reservation_status();
create trigger tally_reservation_status_on_move
  after update of status, property_id on public.reservations
  for each row
  when (old.status is distinct from new.status or old.property_id is distinct from new.property_id)
  execute function private.tally_reservation_status();

-- Each key's rows folded into one, and keys that sum to nothing dropped. Rows written
-- while it runs are not in its snapshot and stay as they are; a reader sees the rows
-- before the fold or after it, which sum alike. Returns how many rows it removed.
create or replace function private.fold_reservation_status_tallies()
returns integer
language plpgsql security definer
set search_path = ''
as $$
declare
  removed integer;
begin
  with folded_keys as (
    select tenant_id, property_id, status
    from public.reservation_status_tallies
    group by tenant_id, property_id, status
    having count(*) > 1 or sum(reservations) = 0
  ),
  taken as (
    delete from public.reservation_status_tallies t
    using folded_keys k
    where t.tenant_id = k.tenant_id and t.property_id = k.property_id and t.status = k.status
    returning t.tenant_id, t.property_id, t.status, t.reservations
  ),
  kept as (
    insert into public.reservation_status_tallies (tenant_id, property_id, status, reservations)
    select tenant_id, property_id, status, sum(reservations)::integer
    from taken
    group by tenant_id, property_id, status
    having sum(reservations) <> 0
    returning 1
  )
  select (select count(*) from taken) - (select count(*) from kept) into removed;
  return removed;
end
$$;
revoke all on function private.fold_reservation_status_tallies() from public;

-- ---------------------------------------------------------------- not in a schema diff
-- A schema diff writes none of what follows: pg_cron's jobs are rows of cron.job. A
-- migration that changes them says so by hand (docs/architecture.md, Migrations).

-- The tallies folded every minute. A database without pg_cron applies this as a no-op.
do $$
begin
  if not exists (select 1 from pg_available_extensions where name = 'pg_cron') then
    raise notice 'pg_cron is missing: reservation status tallies are not folded on a schedule here';
    return;
  end if;
  create extension if not exists pg_cron;
  perform cron.unschedule(jobid) from cron.job where jobname = 'fold-reservation-status-tallies';
  perform cron.schedule('fold-reservation-status-tallies', '* * * * *',
    'select private.fold_reservation_status_tallies()');
end
$$;
