-- Door codes for a reservation's stay. By default a code opens from the
-- property's check-in time on arrival day to its check-out time on departure
-- day, in the property's timezone; it stops working when the stay ends early.
create or replace function private.random_door_code()
returns text
language plpgsql
set search_path = ''
as $$
begin
  -- Six digits from a cryptographic source: door codes are secrets, unlike confirmation codes.
  return lpad(((('x' || encode(extensions.gen_random_bytes(4), 'hex'))::bit(32)::bigint & 2147483647) % 1000000)::text, 6, '0');
end
$$;
grant execute on function private.random_door_code() to authenticated, service_role;

create table public.access_codes (
  tenant_id uuid not null default private.request_tenant_id()
    constraint access_codes_tenant_id_fkey references public.tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  reservation_id uuid not null,
  -- Taken from the reservation.
  property_id uuid not null,
  code text not null default private.random_door_code()
    constraint access_codes_code_check check (code ~ '^[0-9]{4,12}$'),
  valid_from timestamptz not null,
  valid_until timestamptz not null,
  status text not null default 'active' constraint access_codes_status_check check (status in ('active', 'revoked')),
  revoked_at timestamptz,
  created_by uuid default auth.uid()
    constraint access_codes_created_by_fkey references auth.users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint access_codes_pkey primary key (tenant_id, id),
  constraint access_codes_valid_until_after_valid_from check (valid_until > valid_from),
  constraint access_codes_tenant_id_property_id_reservation_id_fkey foreign key (tenant_id, property_id, reservation_id)
    references public.reservations (tenant_id, property_id, id) on delete cascade,
  -- One door code cannot open two stays at the same property at the same time.
  constraint access_codes_no_shared_active_code
    exclude using gist (tenant_id with =, property_id with =, code with =, tstzrange(valid_from, valid_until) with &&)
    where (status = 'active')
);
create index access_codes_tenant_reservation_idx on public.access_codes (tenant_id, reservation_id);

-- A revoked door code refuses every update, a repeated revoke included: the API's
-- action then answers 409 naming the status rather than succeeding again with a new
-- updated_at.
create or replace function private.access_code_before_write()
returns trigger
language plpgsql
set search_path = ''
as $$
declare
  stay record;
begin
  if tg_op = 'INSERT' then
    select r.property_id, r.status,
           (r.check_in + p.check_in_time) at time zone p.timezone as opens,
           (r.check_out + p.check_out_time) at time zone p.timezone as closes
      into stay
    from public.reservations r
    join public.properties p on p.tenant_id = r.tenant_id and p.id = r.property_id
    where r.tenant_id = new.tenant_id and r.id = new.reservation_id;
    if not found then
      raise exception 'reservation % is not a reservation of this tenant', new.reservation_id using errcode = '23503';
    end if;
    if stay.status not in ('pending', 'confirmed', 'checked_in') then
      raise exception 'a % reservation gets no access code', stay.status
        using errcode = 'PT409', constraint = 'access_codes_reservation_must_be_open',
              detail = jsonb_build_object('currentStatus', stay.status)::text;
    end if;
    if new.status <> 'active' then
      raise exception 'an access code starts active' using errcode = '23514';
    end if;
    new.property_id := stay.property_id;
    new.valid_from := coalesce(new.valid_from, stay.opens);
    new.valid_until := coalesce(new.valid_until, stay.closes);
    new.revoked_at := null;
    return new;
  end if;

  if (new.reservation_id, new.property_id, new.code) is distinct from (old.reservation_id, old.property_id, old.code) then
    raise exception 'an access code''s reservation and code cannot change'
      using errcode = 'PT409', constraint = 'access_codes_fields_fixed', hint = 'Revoke it and create another.';
  end if;
  if old.status = 'revoked' then
    raise exception 'a revoked access code cannot change'
      using errcode = 'PT409', constraint = 'access_codes_revoked_final', detail = jsonb_build_object('currentStatus', old.status)::text;
  end if;
  if new.status = 'revoked' and old.status = 'active' then
    new.revoked_at := now();
  end if;
  return new;
end
$$;

create trigger access_code_before_write before insert or update on public.access_codes
  for each row execute function private.access_code_before_write();
create trigger forbid_tenant_change before update of tenant_id, created_at, created_by on public.access_codes
  for each row execute function private.forbid_tenant_change();
create trigger touch_updated_at before update on public.access_codes
  for each row execute function private.touch_updated_at();

-- Runs as owner: a stay that is over or called off must lock its doors whoever ends it.
create or replace function private.revoke_access_codes_when_stay_ends()
returns trigger
language plpgsql security definer
set search_path = ''
as $$
begin
  update public.access_codes c set status = 'revoked'
  where c.tenant_id = new.tenant_id and c.reservation_id = new.id and c.status = 'active';
  return null;
end
$$;

create trigger revoke_access_codes_when_stay_ends after update of status on public.reservations
  for each row when (new.status in ('checked_out', 'cancelled', 'no_show') and old.status is distinct from new.status)
  execute function private.revoke_access_codes_when_stay_ends();

alter table public.access_codes enable row level security;
revoke all on public.access_codes from anon;

create policy "members read access codes" on public.access_codes
  for select to authenticated
  using (tenant_id = (select private.request_tenant_id()) and (select private.request_is_member()));
create policy "members create access codes" on public.access_codes
  for insert to authenticated
  with check (
    tenant_id = (select private.request_tenant_id()) and (select private.request_is_member())
    and created_by is not distinct from (select auth.uid())
  );
create policy "members update access codes" on public.access_codes
  for update to authenticated
  using (tenant_id = (select private.request_tenant_id()) and (select private.request_is_member()))
  with check (tenant_id = (select private.request_tenant_id()) and (select private.request_is_member()));
create policy "managers delete access codes" on public.access_codes
  for delete to authenticated
  using (tenant_id = (select private.request_tenant_id()) and (select private.request_is_manager()));
