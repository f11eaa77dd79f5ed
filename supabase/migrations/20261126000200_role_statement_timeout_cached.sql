-- private.role_statement_timeout runs once per API request and once per tenant of every
-- notification claim. As a SQL function it was planned afresh at each call (its sub-selects
-- keep Postgres from inlining it): about 0.13 ms, most of a short read's own SQL time. As
-- PL/pgSQL its statement is planned once per session and kept: about 0.016 ms. Same
-- result: this database's setting for the role first, then the role's own, else the
-- session's.
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
