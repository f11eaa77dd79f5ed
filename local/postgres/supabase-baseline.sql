-- What a Supabase database already has before any project migration runs, for the
-- local cluster only: hosted projects and `supabase start` ship this themselves.
-- Idempotent: the stack applies it on every start.

do $roles$
begin
  if not exists (select from pg_roles where rolname = 'anon') then
    create role anon nologin noinherit;
  end if;
  if not exists (select from pg_roles where rolname = 'authenticated') then
    create role authenticated nologin noinherit;
  end if;
  if not exists (select from pg_roles where rolname = 'service_role') then
    create role service_role nologin noinherit bypassrls;
  end if;
  if not exists (select from pg_roles where rolname = 'authenticator') then
    create role authenticator login noinherit;
  end if;
  if not exists (select from pg_roles where rolname = 'supabase_auth_admin') then
    create role supabase_auth_admin login noinherit createrole;
  end if;
end
$roles$;

-- Local-only credentials, the same ones `supabase start` uses.
alter role postgres password 'postgres';
alter role authenticator password 'postgres';
alter role supabase_auth_admin password 'postgres';

-- The API gateway logs in as authenticator and switches to the request's role.
grant anon, authenticated, service_role to authenticator;
grant anon, authenticated, service_role to postgres;

-- Supabase keeps extensions out of public.
create schema if not exists extensions;
grant usage on schema extensions to postgres, anon, authenticated, service_role;
create extension if not exists pgcrypto with schema extensions;
create extension if not exists "uuid-ossp" with schema extensions;

alter database postgres set search_path = "$user", public, extensions;
alter role postgres set search_path = "$user", public, extensions;

-- Supabase Auth owns its schema: its own migrations create every table and the
-- request helpers (auth.uid(), auth.jwt(), ...) there when it first starts, before the
-- project's migrations run. Supabase's database image pre-creates a few of those
-- tables; Auth creates them `if not exists`, so starting from the bare schema gives
-- the same result.
create schema if not exists auth authorization supabase_auth_admin;
alter schema auth owner to supabase_auth_admin;
grant usage on schema auth to anon, authenticated, service_role, postgres;
grant create on database postgres to supabase_auth_admin;
alter role supabase_auth_admin set search_path = auth;

-- Objects that migrations create in public are reachable by the API roles,
-- and RLS policies decide which rows they see. Supabase sets these default privileges
-- when it makes the project, before any migration, and migrations may change them
-- (20261124000300_data_api_door.sql takes anon's share back): they are set only on a
-- database no migration has run on yet, so that a restart does not undo a migration.
grant usage on schema public to anon, authenticated, service_role;
do $defaults$
begin
  if exists (select from pg_namespace where nspname = 'supabase_migrations') then
    return;
  end if;
  alter default privileges for role postgres in schema public
    grant all on tables to anon, authenticated, service_role;
  alter default privileges for role postgres in schema public
    grant all on sequences to anon, authenticated, service_role;
  alter default privileges for role postgres in schema public
    grant all on functions to anon, authenticated, service_role;
end
$defaults$;

-- Supabase's per-role statement limits.
alter role anon set statement_timeout = '3s';
alter role authenticated set statement_timeout = '8s';
