-- What every domain below builds on: the extensions, the private schema and its
-- helpers, and the request's context. Supabase's own roles (anon, authenticated,
-- service_role) and Auth's schema exist before any migration runs.

-- The notification pipeline's queue. Hosted Supabase ships pgmq; the local stack
-- installs pgmq's own release files from the pgmq crate (local/pgmq-crate).
create extension if not exists pgmq;

-- Exclusion constraints that mix equality on ids with range overlap (a unit's
-- stays, a door's active codes) need btree operator classes under GiST.
create extension if not exists btree_gist with schema extensions;

-- Helpers the API calls inside a request's transaction, and the ones the policies
-- and triggers call. Those that read Supabase Auth's tables, which the request's
-- role may not, run as their owner with an empty search_path.
create schema if not exists private;
revoke all on schema private from public;
grant usage on schema private to authenticated, service_role;

-- The private helpers are PL/pgSQL even where one SQL expression would do. A SQL
-- function with a SET clause (or security definer) is never inlined, and Postgres
-- parses and plans its body again in every statement that calls it: the request
-- scope's role check, every policy's tenant check and the notification trigger would
-- each pay that on every request (perf on a backend running check-ins put half its
-- samples under fmgr_security_definer and a third under fmgr_sql). PL/pgSQL keeps
-- its plans for the life of the connection.

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
grant execute on function private.request_tenant_id() to authenticated, service_role;

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
