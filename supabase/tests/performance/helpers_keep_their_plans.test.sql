-- A SQL function with a SET clause or owner rights is never inlined: Postgres parses
-- and plans its body again in every statement that calls it. The private helpers that
-- policies, the request scope and the notification triggers call are PL/pgSQL, which
-- keeps its plans for the life of the connection.
begin;
\ir ../helpers/setup.psql
select plan(1);

select is(
  array(
    select p.proname::text
    from pg_catalog.pg_proc p
    join pg_catalog.pg_namespace n on n.oid = p.pronamespace
    join pg_catalog.pg_language l on l.oid = p.prolang
    where n.nspname = 'private' and l.lanname = 'sql' and (p.proconfig is not null or p.prosecdef)
    order by 1),
  array['purge_expired_idempotency_keys'],
  'the only private SQL function with a SET clause or owner rights is the nightly purge, which no request reaches');

select * from finish();
rollback;
