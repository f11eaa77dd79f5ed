-- API keys: what channel managers and payment systems use for /v1/external/*. Owners and
-- admins issue, rename and revoke them; the integration API itself (the requests a key
-- makes, their rate limits and idempotency keys) is external.sql.

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
  -- The key's rate limit on /v1/external/*: `rate_limit` requests per
  -- `rate_limit_window_seconds`, 600 per 60 s unless an operator sets otherwise for the
  -- key (external.sql counts them).
  rate_limit integer not null default 600
    constraint api_keys_rate_limit_check check (rate_limit between 1 and 1000000),
  rate_limit_window_seconds integer not null default 60
    constraint api_keys_rate_limit_window_seconds_check check (rate_limit_window_seconds between 1 and 86400),
  constraint api_keys_pkey primary key (tenant_id, id),
  constraint api_keys_expire_after_creation check (expires_at > created_at),
  constraint api_keys_tenant_id_property_id_fkey
    foreign key (tenant_id, property_id) references public.properties (tenant_id, id) on delete cascade
);
comment on column public.api_keys.rate_limit is
  'Requests the key may make per rate_limit_window_seconds on /v1/external/*; set by an operator.';
comment on column public.api_keys.rate_limit_window_seconds is
  'The length of the key''s rate-limit window in seconds; set by an operator.';

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
