-- API keys: what channel managers and payment systems use for /v1/external/*. Owners and
-- admins issue, rename and revoke them; the integration API itself (the requests a key
-- makes, their rate limits and idempotency keys) is external.sql.

-- Keys that channel managers and payment systems use for /v1/external/*. A key acts
-- for one tenant: for the properties api_key_properties lists, or for every property of
-- the tenant, those made later included (all_properties); and only as its scopes allow.
-- Only a SHA-256 of its secret is kept: the secret has 256 random bits, so a fast hash is
-- enough, and the database never sees the secret itself, not even in a failed
-- statement's log line.
create table public.api_keys (
  tenant_id uuid not null default private.request_tenant_id()
    constraint api_keys_tenant_id_fkey references public.tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
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
  -- The key's rate limit on /v1/external/*: `rate_limit` requests per
  -- `rate_limit_window_seconds`, 600 per 60 s unless an operator sets otherwise for the
  -- key (external.sql counts them).
  rate_limit integer not null default 600
    constraint api_keys_rate_limit_check check (rate_limit between 1 and 1000000),
  rate_limit_window_seconds integer not null default 60
    constraint api_keys_rate_limit_window_seconds_check check (rate_limit_window_seconds between 1 and 86400),
  all_properties boolean not null default false,
  -- What the key may do (docs/api.md, the integration API): read its properties'
  -- reservations, write them, record payments on them, read their availability, rates
  -- and restrictions.
  scopes text[] not null default '{reservations:read,payments:write}'
    constraint api_keys_scopes_check
      check (cardinality(scopes) between 1 and 4
             and scopes <@ '{reservations:read,reservations:write,payments:write,ari:read}'::text[]),
  constraint api_keys_pkey primary key (tenant_id, id),
  constraint api_keys_expire_after_creation check (expires_at > created_at)
);
comment on column public.api_keys.rate_limit is
  'Requests the key may make per rate_limit_window_seconds on /v1/external/*; set by an operator.';
comment on column public.api_keys.rate_limit_window_seconds is
  'The length of the key''s rate-limit window in seconds; set by an operator.';

-- A request names its key before any tenant is known, so, like a payment link's
-- token, this index cannot lead with tenant_id.
create unique index api_keys_key_id_key on public.api_keys (key_id);

-- The properties a key acts for, unless it acts for all of its tenant's. Written with the
-- key, in the transaction that creates it, and never after: what a key may reach is what
-- the integration was given. A property deleted takes its rows with it, and a key left
-- with no property goes too, as its idempotency keys do.
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
-- "Which keys act for this property", for the key list's filter and the cascade.
create index api_key_properties_tenant_property_idx on public.api_key_properties (tenant_id, property_id);

-- A key is revoked, never edited: its secret, properties, scopes and expiry are what the
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

create trigger api_key_before_write before insert or update on public.api_keys
  for each row execute function private.api_key_before_write();

-- A key acts for all of its tenant's properties or for those it lists, never both and
-- never for none: checked as the creating transaction commits, once its properties are in.
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

-- A key's properties are written in the transaction that creates it (its created_at is
-- that transaction's start), never added to a key in use.
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

-- A key whose last property was deleted acts for nothing: it goes, as a key of one
-- property went with its property.
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
create trigger forbid_tenant_change before update of tenant_id, created_at, created_by on public.api_keys
  for each row execute function private.forbid_tenant_change();
create trigger touch_updated_at before update of name, revoked_at on public.api_keys
  for each row execute function private.touch_updated_at();

alter table public.api_keys enable row level security;
revoke all on public.api_keys from anon, authenticated;
-- The hash is no use to anyone who reads it, but nobody needs to: it is written, never read back.
grant select (tenant_id, id, all_properties, scopes, name, key_id, last_four, expires_at, revoked_at, last_used_at,
  created_by, created_at, updated_at) on public.api_keys to authenticated;
grant insert (all_properties, scopes, name, key_id, secret_hash, last_four, expires_at) on public.api_keys to authenticated;
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
