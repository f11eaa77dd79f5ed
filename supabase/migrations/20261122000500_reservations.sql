-- Reservations: who stays where, when, at what price, and where the stay is in
-- its lifecycle. The database enforces the lifecycle and that a unit is never
-- booked twice for the same night.
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
  total_amount bigint not null default 0 constraint reservations_total_amount_check check (total_amount >= 0),
  -- Defaults to the rate plan's currency, else the property's.
  currency text not null constraint reservations_currency_check check (private.is_iso_currency(currency)),
  -- Kept by the payments triggers; nobody writes it directly.
  amount_paid bigint not null default 0,
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
  constraint reservations_tenant_id_guest_id_fkey
    foreign key (tenant_id, guest_id) references public.guests (tenant_id, id),
  constraint reservations_tenant_id_property_id_rate_plan_id_currency_fkey
    foreign key (tenant_id, property_id, rate_plan_id, currency)
    references public.rate_plans (tenant_id, property_id, id, currency),
  constraint reservations_no_overlapping_stays
    exclude using gist (tenant_id with =, unit_id with =, stay with &&)
    where (status in ('pending', 'confirmed', 'checked_in'))
);

create index reservations_tenant_check_in_idx on public.reservations (tenant_id, check_in);
create index reservations_tenant_property_check_in_idx on public.reservations (tenant_id, property_id, check_in);
create index reservations_tenant_guest_idx on public.reservations (tenant_id, guest_id);
create index reservations_tenant_unit_idx on public.reservations (tenant_id, unit_id) where unit_id is not null;
create index reservations_tenant_rate_plan_idx on public.reservations (tenant_id, rate_plan_id) where rate_plan_id is not null;
-- A channel manager that resends a booking finds the one it created.
create unique index reservations_tenant_source_external_reference_key
  on public.reservations (tenant_id, source, external_reference) where external_reference is not null;
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
      and (new.property_id, new.unit_id, new.guest_id, new.rate_plan_id, new.check_in, new.check_out,
           new.adults, new.children, new.total_amount, new.currency)
          is distinct from
          (old.property_id, old.unit_id, old.guest_id, old.rate_plan_id, old.check_in, old.check_out,
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
      or (new.unit_id, new.adults, new.children) is distinct from (old.unit_id, old.adults, old.children)) then
    select u.capacity into unit_capacity from public.units u
    where u.tenant_id = new.tenant_id and u.id = new.unit_id and u.property_id = new.property_id;
    if not found then
      raise exception 'unit % does not belong to property %', new.unit_id, new.property_id using errcode = '23503';
    end if;
    if new.adults + new.children > unit_capacity then
      raise exception 'the unit sleeps %, not %', unit_capacity, new.adults + new.children using errcode = '23514';
    end if;
  end if;

  return new;
end
$$;

create trigger reservation_before_write before insert or update on public.reservations
  for each row execute function private.reservation_before_write();
create trigger forbid_tenant_change before update of tenant_id, created_at, created_by on public.reservations
  for each row execute function private.forbid_tenant_change();
create trigger touch_updated_at before update on public.reservations
  for each row execute function private.touch_updated_at();
-- Later domains react to a status change with after-update triggers of their own on
-- this table: tasks (create_cleaning_task_on_checkout), notifications
-- (notify_reservation_status) and access codes (revoke_access_codes_when_stay_ends).
-- They fire in that order, by name, and none depends on another having run.

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
