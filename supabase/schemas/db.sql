-- The database connection's share of the schema: how long one statement of a request
-- may run, per role (src/db).

-- Each role's statement timeout, as Supabase sets it for the Data API's roles
-- (authenticated 8s, anon 3s on every project). The functions sign in as one login role
-- and switch with set_config('role', ...), and a role's own settings apply only at login,
-- so each request's context applies its role's statement_timeout itself
-- (private.role_statement_timeout), as PostgREST does for the roles it switches to. A
-- statement cut by it fails with 57014, which the API answers with a 503. An operator
-- changes a limit with `alter role <role> set statement_timeout = '...'`; the next
-- request follows it.
--
-- The role's statement_timeout: this database's setting for the role first, then the
-- role's own, else the session's. It runs once per API request and once per tenant of
-- every notification claim, so it is PL/pgSQL, whose statement is planned once per
-- session and kept; as a SQL function its sub-selects keep Postgres from inlining it, and
-- it was planned afresh at every call.
create or replace function private.role_statement_timeout(role_name text)
returns text
language plpgsql stable
set search_path = ''
as $$
begin
  return coalesce(
    (select split_part(setting, '=', 2)
     from pg_catalog.pg_db_role_setting s
     cross join lateral unnest(s.setconfig) as setting
     where s.setrole = (select oid from pg_catalog.pg_roles where rolname = role_name)
       and s.setdatabase in (0, (select oid from pg_catalog.pg_database where datname = pg_catalog.current_database()))
       and setting like 'statement_timeout=%'
     order by s.setdatabase desc
     limit 1),
    pg_catalog.current_setting('statement_timeout'));
end
$$;
revoke all on function private.role_statement_timeout(text) from public;
grant execute on function private.role_statement_timeout(text)
  to authenticated, api_integration, background_worker, provider_webhook;

-- ---------------------------------------------------------------- not in a schema diff
-- A schema diff writes none of what follows: role settings are the cluster's. A migration
-- that changes them says so by hand (docs/architecture.md, Migrations).

alter role authenticated set statement_timeout = '8s';
alter role api_integration set statement_timeout = '8s';
-- The worker's statements are few and batched per claim; a claim of a thousand jobs
-- takes longer than one API request.
alter role background_worker set statement_timeout = '30s';
-- The providers' delivery reports are requests like any other.
alter role provider_webhook set statement_timeout = '8s';
