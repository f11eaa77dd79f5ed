-- What a client may do in this database without the api function, through Supabase's Data
-- API (PostgREST), which serves the schemas in supabase/config.toml's [api] schemas to
-- anyone holding the anon key or a user's access token. The project keeps the Data API off
-- (config.toml's [api] enabled = false; on a hosted project: Project Settings, Data API,
-- Enable Data API off), and this migration makes the database safe for the day an operator
-- turns it back on. docs/security.md has the whole decision;
-- supabase/tests/security/data_api.test.sql plays PostgREST against every table, view and
-- function it would serve.

-- Supabase's default privileges grant every new table, sequence and function in public to
-- anon, authenticated and service_role (local/postgres/supabase-baseline.sql reproduces
-- them). Every migration so far revoked anon's share table by table; a table that forgot
-- would be open to the anon key's bearer. anon now gets nothing new in public by default.
-- A function still gets EXECUTE for PUBLIC, Postgres's own default, which no per-schema
-- default can take back: a new function in public revokes it itself (`revoke all on
-- function ... from public, anon`), as every one so far does, and
-- supabase/tests/security/data_api.test.sql fails for any that anon may execute.
alter default privileges for role postgres in schema public revoke all on tables from anon;
alter default privileges for role postgres in schema public revoke all on sequences from anon;
alter default privileges for role postgres in schema public revoke all on functions from anon;

-- TRUNCATE empties a table whatever its policies say (row-level security does not apply to
-- it), so authenticated's share of those defaults could wipe every tenant's rows at once.
-- REFERENCES and TRIGGER give it nothing it uses. The api function's roles keep exactly
-- select, insert, update and delete, each under the tables' policies.
revoke truncate, references, trigger on all tables in schema public from anon, authenticated;
alter default privileges for role postgres in schema public
  revoke truncate, references, trigger on tables from authenticated;

-- A signed-out session's access token stays valid until it expires (up to an hour). The api
-- function refuses it at once (private.session_is_active in the request's context
-- statement), but the Data API checks only the token's signature and expiry. The policies
-- of every table need the request's tenant, which only the api function sets, so the Data
-- API reads and writes nothing through them; the two functions that act without a tenant
-- check the session themselves.
create or replace function private.request_session_is_active()
returns boolean
language plpgsql stable
set search_path = ''
as $$
declare
  claims jsonb := auth.jwt();
begin
  -- Auth's access tokens always name their session; a token without one has none to be active.
  if claims ->> 'session_id' is null or claims ->> 'sub' is null then
    return false;
  end if;
  return private.session_is_active((claims ->> 'session_id')::uuid, (claims ->> 'sub')::uuid);
end
$$;

revoke all on function private.request_session_is_active() from public;
grant execute on function private.request_session_is_active() to authenticated, service_role;

-- Creates a tenant and makes the caller its owner, in one statement; only for a signed-in
-- user whose session is still active.
create or replace function public.create_tenant(name text)
returns public.tenants
language plpgsql security definer
set search_path = ''
as $$
declare
  caller uuid := auth.uid();
  tenant public.tenants;
begin
  if caller is null then
    raise exception 'sign in to create a tenant' using errcode = '42501';
  end if;
  if not private.request_session_is_active() then
    raise exception 'the session has ended; sign in again' using errcode = '42501';
  end if;
  insert into public.tenants (name, created_by)
  values (create_tenant.name, caller)
  returning * into tenant;
  insert into public.tenant_memberships (tenant_id, user_id, role, created_by)
  values (tenant.id, caller, 'owner', caller);
  return tenant;
end
$$;

-- The tenant picker: a signed-in user's tenants, needed before any tenant is in context;
-- nothing once the session has ended.
create or replace function public.list_my_tenants()
returns table (tenant_id uuid, name text, role public.tenant_role)
language sql stable security definer
set search_path = ''
as $$
  select t.id, t.name, m.role
  from public.tenant_memberships m
  join public.tenants t on t.id = m.tenant_id
  where m.user_id = auth.uid()
    and private.request_session_is_active()
  order by t.name
$$;
