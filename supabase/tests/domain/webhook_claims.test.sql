-- A webhook claim in the database: one call loads every tenant's deliveries, each read
-- under RLS in its own tenant, with the lease on each it may post (pending, and no other
-- attempt holding it); a second load while the lease holds takes none; the settlement
-- records the attempt and gives the lease back, finding each row by its key; the caller's
-- role is back after both. (20261202000200_one_webhook_attempt_at_a_time.sql,
-- 20261202000300_webhook_claims_across_tenants.sql)
begin;
\ir ../helpers/setup.psql
select plan(11);

select tests.use_fixture(tests.make_tenant('Alpha')) as fx \gset
select tests.make_tenant('Beta') as beta \gset
select tests.fx('tenants') as alpha_tenant, (:'beta'::jsonb ->> 'tenants')::uuid as beta_tenant \gset

insert into public.webhook_subscriptions (tenant_id, url) values (:'alpha_tenant', 'https://hooks.example.com/a') returning id as alpha_hooks \gset
insert into public.webhook_subscriptions (tenant_id, url) values (:'beta_tenant', 'https://hooks.example.com/b') returning id as beta_hooks \gset
select private.emit_webhook_event(:'alpha_tenant', 'reservation.checked_in', array[]::uuid[], null, '{"n": 1}') as alpha_event \gset
select private.emit_webhook_event(:'beta_tenant', 'reservation.checked_in', array[]::uuid[], null, '{"n": 2}') as beta_event \gset
select id as alpha_delivery from public.webhook_deliveries where event_id = :'alpha_event' \gset
select id as beta_delivery from public.webhook_deliveries where event_id = :'beta_event' \gset

create function tests.load(tenants uuid[], deliveries uuid[])
returns table (tenant_id uuid, id uuid, attempt_fresh boolean, url text)
language sql as $$
  select l.tenant_id, l.id, l.attempt_fresh, l.url from private.load_webhook_claims(tenants, deliveries, 30) l order by l.url
$$;

-- ---------------------------------------------------------------- the load

select results_eq(
  format('select * from tests.load(array[%L, %L]::uuid[], array[%L, %L]::uuid[])', :'alpha_tenant', :'beta_tenant', :'alpha_delivery', :'beta_delivery'),
  format($$ values (%L::uuid, %L::uuid, true, 'https://hooks.example.com/a'), (%L::uuid, %L::uuid, true, 'https://hooks.example.com/b') $$,
    :'alpha_tenant', :'alpha_delivery', :'beta_tenant', :'beta_delivery'),
  'one call loads both tenants'' deliveries with their subscriptions, and leases each');
select is(current_user::text, 'postgres', 'the caller''s role is back when it returns');
select results_eq(
  format('select attempt_fresh from tests.load(array[%L]::uuid[], array[%L]::uuid[])', :'alpha_tenant', :'alpha_delivery'),
  $$ values (false) $$, 'a second load while the lease holds takes none');
select is_empty(
  format('select * from tests.load(array[%L]::uuid[], array[%L]::uuid[])', :'alpha_tenant', :'beta_delivery'),
  'another tenant''s delivery named under this tenant is not read');
select throws_ok(
  format('select * from private.load_webhook_claims(array[%L]::uuid[], array[%L, %L]::uuid[], 30)', :'alpha_tenant', :'alpha_delivery', :'beta_delivery'),
  '22023', null, 'each delivery comes with its tenant');
update public.webhook_deliveries set attempt_started_at = now() - interval '31 seconds' where id = :'alpha_delivery';
select results_eq(
  format('select attempt_fresh from tests.load(array[%L]::uuid[], array[%L]::uuid[])', :'alpha_tenant', :'alpha_delivery'),
  $$ values (true) $$, 'a lease older than its length is taken again: that attempt can no longer be under way');

-- ---------------------------------------------------------------- the settlement

select attempt_started_at as alpha_lease from public.webhook_deliveries where id = :'alpha_delivery' \gset
select attempt_started_at as beta_lease from public.webhook_deliveries where id = :'beta_delivery' \gset
select lives_ok(format($$ select private.settle_webhook_claim(%L::jsonb) $$, jsonb_build_object(
  'finished', '[]'::jsonb, 'postponed', '[]'::jsonb,
  'tenants', jsonb_build_array(
    jsonb_build_object('tenantId', :'alpha_tenant',
      'attempts', jsonb_build_array(jsonb_build_object('deliveryId', :'alpha_delivery', 'attempt', 1, 'startedAt', now(),
        'durationMs', 12, 'statusCode', 204, 'outcome', 'succeeded', 'error', null, 'responseSnippet', '', 'nextAttemptAt', null)),
      'deliveries', jsonb_build_array(jsonb_build_object('id', :'alpha_delivery', 'status', 'succeeded', 'attempts', 1,
        'nextAttemptAt', null, 'lastAttemptAt', now(), 'lastStatusCode', 204)),
      'subscriptions', jsonb_build_array(jsonb_build_object('id', :'alpha_hooks', 'healthy', true)),
      'released', jsonb_build_array(jsonb_build_object('id', :'alpha_delivery', 'startedAt', :'alpha_lease'))),
    -- Beta's lease named under Alpha: not Alpha's to give back.
    jsonb_build_object('tenantId', :'alpha_tenant',
      'released', jsonb_build_array(jsonb_build_object('id', :'beta_delivery', 'startedAt', :'beta_lease')))))),
  'a claim is recorded in one call');
select is(current_user::text, 'postgres', 'the caller''s role is back after the settlement');
select results_eq(format($$ select status, attempt_started_at is null from public.webhook_deliveries where id = %L $$, :'alpha_delivery'),
  $$ values ('succeeded', true) $$, 'the delivery succeeded and its lease is given back');
select results_eq(format($$ select count(*)::int from public.webhook_attempts where delivery_id = %L $$, :'alpha_delivery'),
  $$ values (1) $$, 'with its attempt recorded');
select results_eq(format($$ select attempt_started_at is not null from public.webhook_deliveries where id = %L $$, :'beta_delivery'),
  $$ values (true) $$, 'another tenant''s lease is left alone');

select * from finish();
rollback;
