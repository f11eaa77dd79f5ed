-- A request under /v1/external/* runs as api_integration, in the tenant and the
-- property of the key it carries: it sees that property's reservations and their
-- payments, records payments on them, and nothing else.
do $$
begin
  if not exists (select from pg_roles where rolname = 'api_integration') then
    create role api_integration nologin noinherit;
  end if;
end
$$;
grant api_integration to postgres;

create or replace function private.request_property_id()
returns uuid
language sql stable
set search_path = ''
as $$
  select nullif(current_setting('app.property_id', true), '')::uuid
$$;

create or replace function private.request_api_key_id()
returns uuid
language sql stable
set search_path = ''
as $$
  select nullif(current_setting('app.api_key_id', true), '')::uuid
$$;

-- The key's outcome, for the request's answer: 'active' keys give their tenant and
-- property, a revoked or expired one only says so, and an unknown key id or a wrong
-- secret returns no row. The hashes are compared over all their bytes whatever
-- differs, so timing says nothing about how close a guess was. Last use is stamped
-- at most once a minute, and never by waiting for another request's lock.
create or replace function private.authenticate_api_key(key_id text, secret_hash bytea)
returns table (state text, tenant_id uuid, property_id uuid, api_key_id uuid)
language plpgsql security definer
set search_path = ''
as $$
declare
  key public.api_keys;
  difference integer := 0;
begin
  select * into key from public.api_keys k where k.key_id = authenticate_api_key.key_id;
  if not found or length(authenticate_api_key.secret_hash) <> 32 then
    return;
  end if;
  for i in 0..31 loop
    difference := difference | (get_byte(key.secret_hash, i) # get_byte(authenticate_api_key.secret_hash, i));
  end loop;
  if difference <> 0 then
    return;
  end if;
  if key.revoked_at is not null then
    return query select 'revoked'::text, null::uuid, null::uuid, null::uuid;
    return;
  end if;
  if key.expires_at is not null and key.expires_at <= now() then
    return query select 'expired'::text, null::uuid, null::uuid, null::uuid;
    return;
  end if;
  perform from public.api_keys k
  where k.tenant_id = key.tenant_id and k.id = key.id
    and (k.last_used_at is null or k.last_used_at < now() - interval '1 minute')
  for update skip locked;
  if found then
    update public.api_keys k set last_used_at = now() where k.tenant_id = key.tenant_id and k.id = key.id;
  end if;
  return query select 'active'::text, key.tenant_id, key.property_id, key.id;
end
$$;

revoke all on function private.request_property_id(), private.request_api_key_id(),
  private.authenticate_api_key(text, bytea) from public;
grant usage on schema private to api_integration;
grant execute on function private.request_tenant_id(), private.request_property_id(), private.request_api_key_id()
  to api_integration;

grant select on public.reservations to api_integration;
grant select, insert on public.payments to api_integration;

create policy "integrations read their property's reservations" on public.reservations
  for select to api_integration
  using (tenant_id = (select private.request_tenant_id()) and property_id = (select private.request_property_id()));

create policy "integrations read their property's payments" on public.payments
  for select to api_integration
  using (
    tenant_id = (select private.request_tenant_id())
    and exists (
      select 1 from public.reservations r
      where r.tenant_id = payments.tenant_id and r.id = payments.reservation_id
        and r.property_id = (select private.request_property_id())
    )
  );
create policy "integrations record payments on their property's reservations" on public.payments
  for insert to api_integration
  with check (
    tenant_id = (select private.request_tenant_id())
    and source = 'external' and payment_link_id is null and created_by is null
    and exists (
      select 1 from public.reservations r
      where r.tenant_id = payments.tenant_id and r.id = payments.reservation_id
        and r.property_id = (select private.request_property_id())
    )
  );
