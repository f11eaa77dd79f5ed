-- A SQL function with a SET clause or owner rights is never inlined: Postgres parses
-- and plans its body again in every statement that calls it. The private helpers that
-- policies, the request scope and the notification triggers call are PL/pgSQL, which
-- keeps its plans for the life of the connection.
begin;
\ir ../helpers/setup.psql
select plan(2);

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

-- The notifications worker's take of events, and load and settlement of a claim, which run
-- their statements once per tenant of a batch, keep one plan per connection that reaches
-- each row by its key, whatever the statistics said when it was made
-- (20261201000200_claim_functions_keep_their_plans.sql); a `create or replace` without
-- these settings would drop them.
select is(
  array(
    select p.proname::text || ': ' || array_to_string(array(select c from unnest(p.proconfig) c where c not like 'search_path=%' order by c), ', ')
    from pg_catalog.pg_proc p
    join pg_catalog.pg_namespace n on n.oid = p.pronamespace
    where n.nspname = 'private' and p.proname in ('load_notification_claim', 'settle_notification_claim', 'take_notification_events')
    order by 1),
  array['load_notification_claim: enable_seqscan=off, plan_cache_mode=force_generic_plan',
        'settle_notification_claim: enable_seqscan=off, plan_cache_mode=force_generic_plan',
        'take_notification_events: enable_seqscan=off, plan_cache_mode=force_generic_plan'],
  'the worker''s take of events and its load and settlement of a claim plan once per connection, by index');

select * from finish();
rollback;
