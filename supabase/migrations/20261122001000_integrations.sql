-- Integrations: the API keys of /v1/external/*, the role a key's request runs as, and
-- the idempotency keys that make its retries safe.

-- Keys that channel managers and payment systems use for /v1/external/*. A key acts
-- for one property of one tenant. Only a SHA-256 of its secret is kept: the secret
-- has 256 random bits, so a fast hash is enough, and the database never sees the
-- secret itself, not even in a failed statement's log line.
create table public.api_keys (
  tenant_id uuid not null default private.request_tenant_id()
    constraint api_keys_tenant_id_fkey references public.tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  property_id uuid not null,
  name text not null constraint api_keys_name_check check (length(name) between 1 and 100),
  -- The key's public part (live_<key_id>_<secret>): requests are looked up by it.
  key_id text not null constraint api_keys_key_id_check check (key_id ~ '^[a-z2-7]{16}$'),
  secret_hash bytea not null constraint api_keys_secret_hash_check check (length(secret_hash) = 32),
  -- Shown in lists so people can tell their keys apart.
  last_four text not null constraint api_keys_last_four_check check (last_four ~ '^[A-Za-z0-9_-]{4}$'),
  expires_at timestamptz,
  revoked_at timestamptz,
  last_used_at timestamptz,
  created_by uuid default auth.uid() constraint api_keys_created_by_fkey references auth.users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint api_keys_pkey primary key (tenant_id, id),
  constraint api_keys_expire_after_creation check (expires_at > created_at),
  constraint api_keys_tenant_id_property_id_fkey
    foreign key (tenant_id, property_id) references public.properties (tenant_id, id) on delete cascade
);
-- A request names its key before any tenant is known, so, like a payment link's
-- token, this index cannot lead with tenant_id.
create unique index api_keys_key_id_key on public.api_keys (key_id);
create index api_keys_tenant_property_idx on public.api_keys (tenant_id, property_id);

-- A key is revoked, never edited: its secret, property and expiry are what the
-- integration was given. Revoking stamps the time once.
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
  if (new.property_id, new.key_id, new.secret_hash, new.last_four, new.expires_at)
     is distinct from (old.property_id, old.key_id, old.secret_hash, old.last_four, old.expires_at) then
    raise exception 'an API key''s property, secret and expiry cannot change'
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

create trigger api_key_before_write before insert or update on public.api_keys
  for each row execute function private.api_key_before_write();
create trigger forbid_tenant_change before update of tenant_id, created_at, created_by on public.api_keys
  for each row execute function private.forbid_tenant_change();
create trigger touch_updated_at before update of name, revoked_at on public.api_keys
  for each row execute function private.touch_updated_at();

alter table public.api_keys enable row level security;
revoke all on public.api_keys from anon, authenticated;
-- The hash is no use to anyone who reads it, but nobody needs to: it is written, never read back.
grant select (tenant_id, id, property_id, name, key_id, last_four, expires_at, revoked_at, last_used_at,
  created_by, created_at, updated_at) on public.api_keys to authenticated;
grant insert (property_id, name, key_id, secret_hash, last_four, expires_at) on public.api_keys to authenticated;
grant update (name, revoked_at) on public.api_keys to authenticated;

create policy "managers read API keys" on public.api_keys
  for select to authenticated
  using (tenant_id = (select private.request_tenant_id()) and (select private.request_is_manager()));
create policy "managers create API keys" on public.api_keys
  for insert to authenticated
  with check (
    tenant_id = (select private.request_tenant_id()) and (select private.request_is_manager())
    and created_by is not distinct from (select auth.uid())
  );
create policy "managers rename and revoke API keys" on public.api_keys
  for update to authenticated
  using (tenant_id = (select private.request_tenant_id()) and (select private.request_is_manager()))
  with check (tenant_id = (select private.request_tenant_id()) and (select private.request_is_manager()));

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
language plpgsql stable
set search_path = ''
as $$
begin
  return nullif(pg_catalog.current_setting('app.property_id', true), '')::uuid;
end
$$;

create or replace function private.request_api_key_id()
returns uuid
language plpgsql stable
set search_path = ''
as $$
begin
  return nullif(pg_catalog.current_setting('app.api_key_id', true), '')::uuid;
end
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

-- An integration that retries a POST with the same Idempotency-Key gets the first
-- answer again instead of a second write. Keys belong to the API key that sent
-- them and are honoured for 24 hours. Only a completed request leaves its answer
-- here: one that failed rolled back its claim with everything else, so a retry runs again.
create table public.idempotency_keys (
  tenant_id uuid not null default private.request_tenant_id()
    constraint idempotency_keys_tenant_id_fkey references public.tenants (id) on delete cascade,
  api_key_id uuid not null default private.request_api_key_id(),
  key text not null constraint idempotency_keys_key_check check (length(key) between 1 and 255),
  -- SHA-256 of the operation and its parsed input: a different request under a used key is refused.
  request_hash bytea not null constraint idempotency_keys_request_hash_check check (length(request_hash) = 32),
  response_status integer constraint idempotency_keys_response_status_check check (response_status between 200 and 299),
  response_headers jsonb not null default '{}',
  response_body text,
  created_at timestamptz not null default now(),
  constraint idempotency_keys_pkey primary key (tenant_id, api_key_id, key),
  constraint idempotency_keys_tenant_id_api_key_id_fkey
    foreign key (tenant_id, api_key_id) references public.api_keys (tenant_id, id) on delete cascade
);
create index idempotency_keys_tenant_created_idx on public.idempotency_keys (tenant_id, created_at);

alter table public.idempotency_keys enable row level security;
revoke all on public.idempotency_keys from anon, authenticated;
grant select, insert, update on public.idempotency_keys to api_integration;

create policy "integrations use their own key's idempotency keys" on public.idempotency_keys
  for all to api_integration
  using (tenant_id = (select private.request_tenant_id()) and api_key_id = (select private.request_api_key_id()))
  with check (tenant_id = (select private.request_tenant_id()) and api_key_id = (select private.request_api_key_id()));

-- Expired keys are only ignored by the API; this clears them out, every hour on
-- the schedule in the schedules migration.
create or replace function private.purge_expired_idempotency_keys()
returns integer
language sql security definer
set search_path = ''
as $$
  with purged as (
    delete from public.idempotency_keys where created_at < now() - interval '24 hours' returning 1
  )
  select count(*)::integer from purged
$$;
revoke all on function private.purge_expired_idempotency_keys() from public;
