-- API keys act for one property, several, or all of a tenant's, and carry scopes. A
-- key's property moves to api_key_properties; every key keeps its property and what it
-- could do (reservations:read, payments:write). The request's settings app.property_id
-- become app.property_ids, app.all_properties and app.api_scopes, and the integration
-- policies read them.

-- The properties, before any trigger that allows them only with a new key.
create table public.api_key_properties (
  tenant_id uuid not null default private.request_tenant_id(),
  api_key_id uuid not null,
  property_id uuid not null,
  created_at timestamptz not null default now(),
  constraint api_key_properties_pkey primary key (tenant_id, api_key_id, property_id),
  constraint api_key_properties_tenant_id_api_key_id_fkey
    foreign key (tenant_id, api_key_id) references public.api_keys (tenant_id, id) on delete cascade,
  constraint api_key_properties_tenant_id_property_id_fkey
    foreign key (tenant_id, property_id) references public.properties (tenant_id, id) on delete cascade
);
create index api_key_properties_tenant_property_idx on public.api_key_properties (tenant_id, property_id);

insert into public.api_key_properties (tenant_id, api_key_id, property_id, created_at)
select k.tenant_id, k.id, k.property_id, k.created_at from public.api_keys k;

alter table public.api_keys
  add column all_properties boolean not null default false,
  add column scopes text[] not null default '{reservations:read,payments:write}'
    constraint api_keys_scopes_check
      check (cardinality(scopes) between 1 and 4
             and scopes <@ '{reservations:read,reservations:write,payments:write,ari:read}'::text[]);

-- The policies that read the one property go before the setting's helper.
drop policy "integrations read their property's reservations" on public.reservations;
drop policy "integrations read their property's reservation tallies" on public.reservation_status_tallies;
drop policy "integrations read their property's payments" on public.payments;
drop policy "integrations record payments on their property's reservations" on public.payments;
drop function private.request_property_id();

alter table public.api_keys drop constraint api_keys_tenant_id_property_id_fkey;
drop index public.api_keys_tenant_property_idx;
alter table public.api_keys drop column property_id;

grant select (all_properties, scopes) on public.api_keys to authenticated;
grant insert (all_properties, scopes) on public.api_keys to authenticated;

create or replace function private.api_key_before_write()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  if tg_op = 'INSERT' then
    new.revoked_at := null;
    new.last_used_at := null;
    return new;
  end if;
  if (new.all_properties, new.scopes, new.key_id, new.secret_hash, new.last_four, new.expires_at)
     is distinct from (old.all_properties, old.scopes, old.key_id, old.secret_hash, old.last_four, old.expires_at) then
    raise exception 'an API key''s properties, scopes, secret and expiry cannot change'
      using errcode = 'PT409', constraint = 'api_keys_fields_fixed', hint = 'Revoke it and create another.';
  end if;
  if old.revoked_at is not null and new.revoked_at is distinct from old.revoked_at then
    raise exception 'a revoked API key stays revoked'
      using errcode = 'PT409', constraint = 'api_keys_revoked_final', detail = jsonb_build_object('currentStatus', 'revoked')::text;
  end if;
  if old.revoked_at is null and new.revoked_at is not null then
    new.revoked_at := now();
  end if;
  return new;
end
$$;

create or replace function private.api_key_has_properties()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  key public.api_keys;
  listed boolean;
begin
  select * into key from public.api_keys k where k.tenant_id = new.tenant_id and k.id = new.id;
  if not found then
    return null;
  end if;
  listed := exists (select from public.api_key_properties p where p.tenant_id = key.tenant_id and p.api_key_id = key.id);
  if key.all_properties = listed then
    raise exception '%', case when listed then 'an API key for all properties lists none'
                              else 'an API key acts for all properties or for some' end
      using errcode = 'PT422', constraint = 'api_keys_properties_required',
            hint = 'Give propertyIds, or allProperties: true, not both.';
  end if;
  return null;
end
$$;
revoke all on function private.api_key_has_properties() from public;

create constraint trigger api_key_has_properties after insert on public.api_keys
  deferrable initially deferred
  for each row execute function private.api_key_has_properties();

create or replace function private.api_key_property_before_insert()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  if not exists (select from public.api_keys k
                 where k.tenant_id = new.tenant_id and k.id = new.api_key_id and k.created_at = now()) then
    raise exception 'an API key''s properties cannot change'
      using errcode = 'PT409', constraint = 'api_keys_fields_fixed', hint = 'Revoke it and create another.';
  end if;
  return new;
end
$$;
revoke all on function private.api_key_property_before_insert() from public;

create trigger api_key_property_before_insert before insert on public.api_key_properties
  for each row execute function private.api_key_property_before_insert();

create or replace function private.api_key_property_after_delete()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  delete from public.api_keys k
  where k.tenant_id = old.tenant_id and k.id = old.api_key_id and not k.all_properties
    and not exists (select from public.api_key_properties p where p.tenant_id = old.tenant_id and p.api_key_id = old.api_key_id);
  return null;
end
$$;
revoke all on function private.api_key_property_after_delete() from public;

create trigger api_key_property_after_delete after delete on public.api_key_properties
  for each row execute function private.api_key_property_after_delete();

alter table public.api_key_properties enable row level security;
revoke all on public.api_key_properties from anon, authenticated;
grant select on public.api_key_properties to authenticated;
grant insert (api_key_id, property_id) on public.api_key_properties to authenticated;

create policy "managers read API keys' properties" on public.api_key_properties
  for select to authenticated
  using (tenant_id = (select private.request_tenant_id()) and (select private.request_is_manager()));
create policy "managers give new API keys their properties" on public.api_key_properties
  for insert to authenticated
  with check (tenant_id = (select private.request_tenant_id()) and (select private.request_is_manager()));

-- The request's context.
create or replace function private.request_property_ids()
returns uuid[]
language plpgsql stable
set search_path = ''
as $$
begin
  return nullif(pg_catalog.current_setting('app.property_ids', true), '')::uuid[];
end
$$;

create or replace function private.request_all_properties()
returns boolean
language plpgsql stable
set search_path = ''
as $$
begin
  return coalesce(nullif(pg_catalog.current_setting('app.all_properties', true), '')::boolean, false);
end
$$;

create or replace function private.request_has_scope(wanted text[])
returns boolean
language plpgsql stable
set search_path = ''
as $$
begin
  return coalesce(nullif(pg_catalog.current_setting('app.api_scopes', true), '')::text[] && wanted, false);
end
$$;

revoke all on function private.request_property_ids(), private.request_all_properties(), private.request_has_scope(text[])
  from public;
grant execute on function private.request_property_ids(), private.request_all_properties(),
  private.request_has_scope(text[]) to api_integration;

-- A key that acts on reservations in any way sees its properties' reservations: reading
-- them, writing them, or recording payments on them. Which routes a scope opens is the
-- API's to say (src/external); what the key can reach at all is said here.
create policy "integrations read their properties' reservations" on public.reservations
  for select to api_integration
  using (
    tenant_id = (select private.request_tenant_id())
    and (select private.request_has_scope('{reservations:read,reservations:write,payments:write}'))
    and ((select private.request_all_properties()) or property_id = any ((select private.request_property_ids())::uuid[]))
  );

-- An integration reads its properties' reservation tallies (reservations.sql), as it
-- reads their reservations.
create policy "integrations read their properties' reservation tallies" on public.reservation_status_tallies
  for select to api_integration
  using (
    tenant_id = (select private.request_tenant_id())
    and (select private.request_has_scope('{reservations:read,reservations:write,payments:write}'))
    and ((select private.request_all_properties()) or property_id = any ((select private.request_property_ids())::uuid[]))
  );

-- Payments on the reservations the key sees (the reservations' own policy above).
create policy "integrations read their properties' payments" on public.payments
  for select to api_integration
  using (
    tenant_id = (select private.request_tenant_id())
    and exists (select 1 from public.reservations r where r.tenant_id = payments.tenant_id and r.id = payments.reservation_id)
  );
create policy "integrations record payments on their properties' reservations" on public.payments
  for insert to api_integration
  with check (
    tenant_id = (select private.request_tenant_id())
    and (select private.request_has_scope('{payments:write}'))
    and source = 'external' and payment_link_id is null and created_by is null
    and exists (select 1 from public.reservations r where r.tenant_id = payments.tenant_id and r.id = payments.reservation_id)
  );

-- The key check answers the key's properties and scopes.
drop function private.authenticate_api_key(text, bytea);
create or replace function private.authenticate_api_key(key_id text, secret_hash bytea)
returns table (state text, tenant_id uuid, property_ids uuid[], all_properties boolean, scopes text[], api_key_id uuid)
language plpgsql security definer
set search_path = ''
as $$
declare
  key public.api_keys := private.api_key_matching(authenticate_api_key.key_id, authenticate_api_key.secret_hash);
begin
  if key.id is null then
    return;
  end if;
  if key.revoked_at is not null then
    return query select 'revoked'::text, null::uuid, null::uuid[], null::boolean, null::text[], null::uuid;
    return;
  end if;
  if key.expires_at is not null and key.expires_at <= now() then
    return query select 'expired'::text, null::uuid, null::uuid[], null::boolean, null::text[], null::uuid;
    return;
  end if;
  perform from public.api_keys k
  where k.tenant_id = key.tenant_id and k.id = key.id
    and (k.last_used_at is null or k.last_used_at < now() - interval '1 minute')
  for update skip locked;
  if found then
    update public.api_keys k set last_used_at = now() where k.tenant_id = key.tenant_id and k.id = key.id;
  end if;
  return query
    select 'active'::text, key.tenant_id,
           case when key.all_properties then null
                else array(select p.property_id from public.api_key_properties p
                           where p.tenant_id = key.tenant_id and p.api_key_id = key.id order by p.property_id) end,
           key.all_properties, key.scopes, key.id;
end
$$;
revoke all on function private.authenticate_api_key(text, bytea) from public;
