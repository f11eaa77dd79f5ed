-- How long one statement of a request may run, per role, as Supabase sets it for the
-- Data API's roles (authenticated 8s, anon 3s on every project). The functions sign in
-- as one login role and switch with set_config('role', ...), and a role's own settings
-- apply only at login, so each request's context applies its role's statement_timeout
-- itself (private.role_statement_timeout), as PostgREST does for the roles it switches
-- to. A statement cut by it fails with 57014, which the API answers with a 503.
-- An operator changes a limit with `alter role <role> set statement_timeout = '...'`;
-- the next request follows it.
alter role authenticated set statement_timeout = '8s';
alter role api_integration set statement_timeout = '8s';
-- The worker's statements are few and batched per claim; a claim of a thousand jobs
-- takes longer than one API request.
alter role background_worker set statement_timeout = '30s';

-- The role's statement_timeout (this database's setting first, then the role's own),
-- or the session's when the role sets none. Every request calls it, so it stays a plain
-- SQL function that Postgres inlines: no SET clause, every name schema-qualified, and
-- the caller's rights (pg_db_role_setting is readable by every role).
create or replace function private.role_statement_timeout(role_name text)
returns text
language sql stable
as $$
  select coalesce(
    (select split_part(setting, '=', 2)
     from pg_catalog.pg_db_role_setting s
     cross join lateral unnest(s.setconfig) as setting
     where s.setrole = (select oid from pg_catalog.pg_roles where rolname = role_name)
       and s.setdatabase in (0, (select oid from pg_catalog.pg_database where datname = pg_catalog.current_database()))
       and setting like 'statement_timeout=%'
     order by s.setdatabase desc
     limit 1),
    pg_catalog.current_setting('statement_timeout'));
$$;
revoke all on function private.role_statement_timeout(text) from public;
grant execute on function private.role_statement_timeout(text) to authenticated, api_integration, background_worker;
