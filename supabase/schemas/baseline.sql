-- What every capability after this file builds on: the extensions, the project's roles,
-- the private schema and its helpers, the request's context and the session checks, and
-- what the Data API may reach by default. Supabase's own roles (anon, authenticated,
-- service_role) and Auth's schema exist before this file runs.

-- The notification pipeline's queues. Hosted Supabase ships pgmq; the local stack
-- installs pgmq's own release files from the pgmq crate (local/pgmq-crate).
create extension if not exists pgmq;

-- Exclusion constraints that mix equality on ids with range overlap (a unit's
-- stays, a door's active codes) need btree operator classes under GiST.
create extension if not exists btree_gist with schema extensions;

-- The guest search: a substring anywhere in a name or address, through a trigram GIN
-- index (guests.sql), which holds the tenant's uuid beside the trigrams (btree_gin).
create extension if not exists pg_trgm with schema extensions;
create extension if not exists btree_gin with schema extensions;

-- ---------------------------------------------------------------- not in a schema diff
-- A schema diff writes none of what follows: the roles are the cluster's, not the
-- database's. A migration that changes them says so by hand (docs/architecture.md,
-- Migrations).

-- Background jobs (the notifications and webhooks workers) switch to this role and set
-- app.tenant_id from the job, so they read one tenant's rows and no other's.
do $$
begin
  if not exists (select from pg_roles where rolname = 'background_worker') then
    create role background_worker nologin noinherit;
  end if;
end
$$;
grant background_worker to postgres;

-- A request under /v1/external/* runs as api_integration, in the tenant and the
-- property of the key it carries: it sees that property's reservations and their
-- payments, records payments on them, and nothing else (external.sql).
do $$
begin
  if not exists (select from pg_roles where rolname = 'api_integration') then
    create role api_integration nologin noinherit;
  end if;
end
$$;
grant api_integration to postgres;

-- The api function's webhooks for the providers' delivery reports run as this role: no
-- session, no tenant, authenticated by the provider's signature alone. It holds no
-- privilege on any table; all it may do is call private.record_delivery_events, which
-- finds the notification a report names and records the report in that notification's
-- tenant (delivery-reports.sql).
do $$
begin
  if not exists (select from pg_roles where rolname = 'provider_webhook') then
    create role provider_webhook nologin noinherit;
  end if;
end
$$;
grant provider_webhook to postgres;

-- ---------------------------------------------------------------- the private schema

-- Helpers the API calls inside a request's transaction, and the ones the policies
-- and triggers call. Those that read Supabase Auth's tables, which the request's
-- role may not, run as their owner with an empty search_path.
create schema if not exists private;
revoke all on schema private from public;
grant usage on schema private to authenticated, service_role, background_worker, api_integration, provider_webhook;
grant usage on schema extensions to background_worker;

-- ---------------------------------------------------------------- the Data API's door

-- What a client may do in this database without the api function, through Supabase's Data
-- API (PostgREST), which serves the schemas in supabase/config.toml's [api] schemas to
-- anyone holding the anon key or a user's access token. The project keeps the Data API off
-- (config.toml's [api] enabled = false; on a hosted project: Project Settings, Data API,
-- Enable Data API off), and the database stays safe for the day an operator turns it back
-- on. docs/security.md has the whole decision; supabase/tests/security/data_api.test.sql
-- plays PostgREST against every table, view and function it would serve.
--
-- Supabase's default privileges grant every new table, sequence and function in public to
-- anon, authenticated and service_role (local/postgres/supabase-baseline.sql reproduces
-- them). anon gets nothing new in public by default, and every table still revokes anon's
-- share itself. A function still gets EXECUTE for PUBLIC, Postgres's own default, which no
-- per-schema default can take back: a new function in public revokes it itself (`revoke
-- all on function ... from public, anon`), and supabase/tests/security/data_api.test.sql
-- fails for any that anon may execute.
alter default privileges for role postgres in schema public revoke all on tables from anon;
alter default privileges for role postgres in schema public revoke all on sequences from anon;
alter default privileges for role postgres in schema public revoke all on functions from anon;

-- TRUNCATE empties a table whatever its policies say (row-level security does not apply to
-- it), so authenticated's share of those defaults could wipe every tenant's rows at once.
-- REFERENCES and TRIGGER give it nothing it uses. The api function's roles keep exactly
-- select, insert, update and delete, each under the tables' policies.
alter default privileges for role postgres in schema public
  revoke truncate, references, trigger on tables from authenticated;

-- ---------------------------------------------------------------- helpers

-- The private helpers are PL/pgSQL even where one SQL expression would do. A SQL
-- function with a SET clause (or security definer) is never inlined, and Postgres
-- parses and plans its body again in every statement that calls it: the request
-- scope's role check, every policy's tenant check and the notification trigger would
-- each pay that on every request. PL/pgSQL keeps its plans for the life of the
-- connection (supabase/tests/performance/helpers_keep_their_plans.test.sql).

-- A signed-out or expired session no longer exists in auth.sessions, so its still
-- unexpired access token is refused at once.
create or replace function private.session_is_active(session_id uuid, user_id uuid)
returns boolean
language plpgsql stable security definer set search_path = ''
as $$
begin
  return exists (
    select 1
    from auth.sessions s
    where s.id = session_is_active.session_id
      and s.user_id = session_is_active.user_id
      and (s.not_after is null or s.not_after > now())
  );
end
$$;

create or replace function private.current_user_profile()
returns table (id uuid, email text, full_name text, created_at timestamptz)
language plpgsql stable security definer set search_path = ''
as $$
begin
  return query
    select u.id, u.email::text, u.raw_user_meta_data ->> 'full_name', u.created_at
    from auth.users u
    where u.id = auth.uid();
end
$$;

revoke all on function private.session_is_active(uuid, uuid) from public;
revoke all on function private.current_user_profile() from public;
grant execute on function private.session_is_active(uuid, uuid) to authenticated, service_role;
grant execute on function private.current_user_profile() to authenticated, service_role;

-- The request's tenant travels in a transaction-local setting that the API sets
-- from the x-tenant-id header (set_config('app.tenant_id', ..., true)) and a
-- background job sets from its message. Every tenant table defaults to it and
-- its policies compare against it.
create or replace function private.request_tenant_id()
returns uuid
language plpgsql stable
set search_path = ''
as $$
begin
  return nullif(pg_catalog.current_setting('app.tenant_id', true), '')::uuid;
end
$$;

revoke all on function private.request_tenant_id() from public;
grant execute on function private.request_tenant_id() to authenticated, service_role, background_worker, api_integration;

create or replace function private.touch_updated_at()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  new.updated_at := now();
  return new;
end
$$;

-- Every tenant table's origin trigger (forbid_tenant_change; forbid_origin_change on
-- tenants and tenant_memberships). RLS would reject moving a row to another tenant
-- for a member, but the owner roles that operators use in the dashboard bypass RLS;
-- a row must never change tenant under anyone. When and by whom a row was created
-- are evidence too: an update may not rewrite them, through the API, PostgREST or
-- the dashboard alike. The one exception is the foreign key itself clearing
-- created_by when that user is deleted. The triggers fire only on updates that name
-- these columns (`before update of tenant_id, created_at, created_by`): an update
-- that does not name a column cannot change it, and the foreign key clearing
-- created_by names it too.
create or replace function private.forbid_tenant_change()
returns trigger
language plpgsql
set search_path = ''
as $$
declare
  before jsonb := to_jsonb(old);
  after jsonb := to_jsonb(new);
begin
  -- Read through jsonb so that the tenants and memberships tables, whose keys are
  -- not (tenant_id, id), can use the same trigger for their origin.
  if after -> 'tenant_id' is distinct from before -> 'tenant_id' then
    raise exception 'tenant_id cannot change'
      using errcode = '42501', detail = format('%s %s belongs to tenant %s', tg_table_name, before ->> 'id', before ->> 'tenant_id');
  end if;
  if after -> 'created_at' is distinct from before -> 'created_at' then
    raise exception '%.created_at cannot change', tg_table_name using errcode = '42501';
  end if;
  if after -> 'created_by' is distinct from before -> 'created_by'
     and not (pg_trigger_depth() > 1 and after -> 'created_by' = 'null'::jsonb) then
    raise exception '%.created_by cannot change', tg_table_name using errcode = '42501';
  end if;
  return new;
end
$$;

-- Checks on codes from outside standards, used by the domain tables' constraints.

-- IANA names only ("Europe/Lisbon", "UTC"), and only ones this server can convert.
create or replace function private.is_iana_timezone(name text)
returns boolean
language plpgsql immutable
set search_path = ''
as $$
begin
  if name !~ '^[A-Za-z][A-Za-z_]*(/[A-Za-z0-9_+-]+){0,2}$' then
    return false;
  end if;
  perform now() at time zone name;
  return true;
exception when invalid_parameter_value then
  return false;
end
$$;

-- Active ISO 4217 codes. Amounts are integer minor units of these.
create or replace function private.is_iso_currency(code text)
returns boolean
language plpgsql immutable
set search_path = ''
as $$
begin
  return code = any ('{AED,AFN,ALL,AMD,ANG,AOA,ARS,AUD,AWG,AZN,BAM,BBD,BDT,BGN,BHD,BIF,BMD,BND,BOB,BRL,
    BSD,BTN,BWP,BYN,BZD,CAD,CDF,CHF,CLP,CNY,COP,CRC,CUP,CVE,CZK,DJF,DKK,DOP,DZD,EGP,ERN,ETB,EUR,FJD,FKP,
    GBP,GEL,GHS,GIP,GMD,GNF,GTQ,GYD,HKD,HNL,HTG,HUF,IDR,ILS,INR,IQD,IRR,ISK,JMD,JOD,JPY,KES,KGS,KHR,KMF,
    KPW,KRW,KWD,KYD,KZT,LAK,LBP,LKR,LRD,LSL,LYD,MAD,MDL,MGA,MKD,MMK,MNT,MOP,MRU,MUR,MVR,MWK,MXN,MYR,MZN,
    NAD,NGN,NIO,NOK,NPR,NZD,OMR,PAB,PEN,PGK,PHP,PKR,PLN,PYG,QAR,RON,RSD,RUB,RWF,SAR,SBD,SCR,SDG,SEK,SGD,
    SHP,SLE,SOS,SRD,SSP,STN,SVC,SYP,SZL,THB,TJS,TMT,TND,TOP,TRY,TTD,TWD,TZS,UAH,UGX,USD,UYU,UZS,VES,VND,
    VUV,WST,XAF,XCD,XCG,XOF,XPF,YER,ZAR,ZMW,ZWG}'::text[]);
end
$$;

-- Short codes people read out over the phone: no 0/O or 1/I/L to confuse.
create or replace function private.random_code(length integer)
returns text
language plpgsql
set search_path = ''
as $$
begin
  return (
    select string_agg(substr('23456789ABCDEFGHJKMNPQRSTUVWXYZ', 1 + floor(random() * 31)::int, 1), '')
    from generate_series(1, length)
  );
end
$$;

grant execute on function private.is_iana_timezone(text), private.is_iso_currency(text),
  private.random_code(integer) to authenticated, service_role;

-- A signed-out session's access token stays valid until it expires (up to an hour). The api
-- function refuses it at once (private.session_is_active in the request's context
-- statement), but the Data API checks only the token's signature and expiry. The policies
-- of every table need the request's tenant, which only the api function sets, so the Data
-- API reads and writes nothing through them; the two functions that act without a tenant
-- (public.create_tenant, public.list_my_tenants) check the session themselves.
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
