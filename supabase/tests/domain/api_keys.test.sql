-- API keys, the key check, and what a request as api_integration may see and write.
begin;
\ir ../helpers/setup.psql
select plan(48);

-- pgTAP lives in extensions, which the role itself never needs; rolled back with the test.
grant usage on schema extensions to api_integration;

select tests.use_fixture(tests.make_tenant('Alpha')) as fx \gset
select tests.make_tenant('Beta') as fx_beta \gset

-- A second property of Alpha with its own stay, which a key of the first must not reach.
insert into public.properties (tenant_id, name, timezone, currency)
  values (tests.fx('tenants'), 'Alpha Hillside', 'Europe/Lisbon', 'EUR') returning id as other_property \gset
insert into public.reservations (tenant_id, property_id, guest_id, check_in, check_out, total_amount, status)
  values (tests.fx('tenants'), :'other_property', tests.fx('guests'), date '2030-07-01', date '2030-07-03', 20000, 'confirmed')
  returning id as other_reservation \gset

select ok((select relrowsecurity from pg_class where oid = 'public.api_keys'::regclass), 'api_keys: row-level security is enabled');
select ok((select relrowsecurity from pg_class where oid = 'public.idempotency_keys'::regclass),
  'idempotency_keys: row-level security is enabled');

-- Managers issue keys.
select tests.act_as('Alpha_admin', tests.fx('tenants'));
select lives_ok(format($$select tests.issue_key('aaaaaaaaaaaaaaaa', 'secret-of-a', array[%L]::uuid[])$$, tests.fx('properties')),
  'an admin issues a key for a property');
select results_eq($$select created_by, revoked_at, last_used_at, scopes from public.api_keys where key_id = 'aaaaaaaaaaaaaaaa'$$,
  format('values (%L::uuid, null::timestamptz, null::timestamptz, %L::text[])', tests.fx('admin'), '{reservations:read,payments:write}'),
  'the key names its creator, starts unused, and may do what keys always could');
select throws_ok($$select secret_hash from public.api_keys$$, '42501', null, 'nobody reads a secret''s hash back through the API role');
select throws_ok($$insert into public.api_keys (name, key_id, secret_hash, last_four, all_properties, revoked_at)
  values ('x', 'bbbbbbbbbbbbbbbb', sha256('b'::bytea), 'xxxx', true, now())$$, '42501', null,
  'a key cannot be created revoked');
select throws_ok(format($$select tests.issue_key('cccccccccccccccc', 'c', array[%L]::uuid[])$$, :'fx_beta'::jsonb ->> 'properties'),
  '23503', null, 'a key cannot name another tenant''s property');
select throws_ok($$select tests.issue_key('NOT-A-KEY-ID', 'c', '{}', all_properties => true)$$, '23514', null,
  'a key id is 16 base32 characters');
select throws_ok($$select tests.issue_key('cccccccccccccccc', 'c', '{}', '{reservations:delete}', true)$$, '23514', null,
  'a scope is one of the four');
select throws_ok($$select tests.issue_key('cccccccccccccccc', 'c', '{}', '{}', true)$$, '23514', null,
  'a key may do something');
select throws_ok($$update public.api_keys set scopes = '{reservations:read,reservations:write}' where key_id = 'aaaaaaaaaaaaaaaa'$$,
  '42501', null, 'a key''s scopes cannot be changed by a manager');
select throws_ok(format($$update public.api_key_properties set property_id = %L$$, :'other_property'),
  '42501', null, 'nor its properties');

-- A key acts for all properties or for some, checked as its transaction commits.
savepoint before_check;
select tests.issue_key('cccccccccccccccc', 'c', '{}');
select throws_ok('set constraints api_key_has_properties immediate', 'PT422', 'an API key acts for all properties or for some',
  'a key of no property is refused');
rollback to savepoint before_check;
select tests.issue_key('cccccccccccccccc', 'c', array[tests.fx('properties')]::uuid[], all_properties => true);
select throws_ok('set constraints api_key_has_properties immediate', 'PT422', 'an API key for all properties lists none',
  'so is a key of all properties that lists some');
rollback to savepoint before_check;

-- Staff and other tenants see nothing of them.
select tests.act_as('Alpha_staff', tests.fx('tenants'));
select is((select count(*) from public.api_keys), 0::bigint, 'staff see no keys');
select throws_ok(format($$select tests.issue_key('dddddddddddddddd', 'd', array[%L]::uuid[])$$, tests.fx('properties')), '42501', null,
  'staff cannot issue keys');
select tests.act_as('Beta_owner', tests.fx('tenants'));
select is((select count(*) from public.api_keys), 0::bigint, 'another tenant''s owner naming Alpha sees no keys');
select throws_ok($$select private.authenticate_api_key('aaaaaaaaaaaaaaaa', sha256('secret-of-a'::bytea))$$, '42501', null,
  'a signed-in user cannot call the key check');

-- The key check.
select tests.act_as_operator();
select results_eq($$select state, tenant_id, property_ids, all_properties, scopes
                    from private.authenticate_api_key('aaaaaaaaaaaaaaaa', sha256('secret-of-a'::bytea))$$,
  format('values (%L, %L::uuid, array[%L]::uuid[], false, %L::text[])', 'active', tests.fx('tenants'), tests.fx('properties'),
         '{reservations:read,payments:write}'),
  'the right secret gives the key''s tenant, properties and scopes');
select ok((select last_used_at = now() from public.api_keys where key_id = 'aaaaaaaaaaaaaaaa'), 'and stamps its last use');
select is_empty($$select * from private.authenticate_api_key('aaaaaaaaaaaaaaaa', sha256('secret-of-b'::bytea))$$,
  'a wrong secret gives nothing');
select is_empty($$select * from private.authenticate_api_key('zzzzzzzzzzzzzzzz', sha256('secret-of-a'::bytea))$$,
  'an unknown key id gives nothing');
select is_empty($$select * from private.authenticate_api_key('aaaaaaaaaaaaaaaa', '\x00'::bytea)$$,
  'a hash of the wrong length gives nothing');
insert into public.api_keys (tenant_id, all_properties, name, key_id, secret_hash, last_four, created_at, expires_at)
  values (tests.fx('tenants'), true, 'Old', 'eeeeeeeeeeeeeeee', sha256('secret-of-e'::bytea), 'of-e',
          now() - interval '2 days', now() - interval '1 day');
select results_eq($$select state, tenant_id from private.authenticate_api_key('eeeeeeeeeeeeeeee', sha256('secret-of-e'::bytea))$$,
  $$values ('expired', null::uuid)$$, 'an expired key says so and gives no tenant');
select throws_ok($$update public.api_keys set expires_at = null where key_id = 'eeeeeeeeeeeeeeee'$$, 'PT409', null,
  'not even an operator extends a key');
select throws_ok(format($$insert into public.api_key_properties (tenant_id, api_key_id, property_id)
  select tenant_id, id, %L from public.api_keys where key_id = 'eeeeeeeeeeeeeeee'$$, tests.fx('properties')), 'PT409',
  'an API key''s properties cannot change', 'nor gives a key in use another property');

-- As an integration with the key of Alpha's first property.
select is(tests.act_as_key('aaaaaaaaaaaaaaaa', 'secret-of-a'), 'active', 'the request takes the key''s context');
select results_eq($$select id from public.reservations$$, format('values (%L::uuid)', tests.fx('reservations')),
  'an integration sees its property''s reservations and no other');
select is_empty(format('select 1 from public.reservations where id = %L', :'other_reservation'),
  'not another property''s of the same tenant');
select is((select count(*) from public.payments), 1::bigint, 'it sees its property''s payments');
select lives_ok(format($$insert into public.payments (reservation_id, amount, currency, source, external_reference)
  values (%L, 7000, 'EUR', 'external', 'psp-1')$$, tests.fx('reservations')), 'it records an external payment');
select is((select amount_paid from public.reservations where id = tests.fx('reservations')), 12000::bigint,
  'and the reservation''s amount_paid follows');
select throws_ok(format($$insert into public.payments (reservation_id, amount, currency, source, external_reference)
  values (%L, 7000, 'EUR', 'external', 'psp-2')$$, :'other_reservation'), '42501', null,
  'it cannot pay another property''s reservation');
select throws_ok(format($$insert into public.payments (tenant_id, reservation_id, amount, currency, source, external_reference)
  values (%L, %L, 7000, 'EUR', 'external', 'psp-3')$$, :'fx_beta'::jsonb ->> 'tenants', :'fx_beta'::jsonb ->> 'reservations'),
  '42501', null, 'or another tenant''s');
select throws_ok(format($$insert into public.payments (reservation_id, amount, currency) values (%L, 7000, 'EUR')$$,
  tests.fx('reservations')), '42501', null, 'its payments are external ones');
select is(tests.rows_changed(format('update public.reservations set notes = ''x'' where id = %L', tests.fx('reservations'))),
  0::bigint, 'without reservations:write it changes no reservation');
select throws_ok('select count(*) from public.guests', '42501', null, 'it reads no guests');
select lives_ok($$insert into public.idempotency_keys (key, request_hash) values ('retry-1', sha256('r'::bytea))$$,
  'it keeps an idempotency key, under its own key');

-- Revoked: refused from the next request on.
select tests.act_as('Alpha_owner', tests.fx('tenants'));
update public.api_keys set revoked_at = '2000-01-01' where key_id = 'aaaaaaaaaaaaaaaa';
select ok((select revoked_at = now() from public.api_keys where key_id = 'aaaaaaaaaaaaaaaa'), 'revoking stamps the time itself');
select throws_ok($$update public.api_keys set revoked_at = null where key_id = 'aaaaaaaaaaaaaaaa'$$, 'PT409', null,
  'a revoked key stays revoked');
select tests.act_as_operator();
select results_eq($$select state from private.authenticate_api_key('aaaaaaaaaaaaaaaa', sha256('secret-of-a'::bytea))$$,
  $$values ('revoked')$$, 'a revoked key says so');

-- Another key of the same tenant sees none of the first key's idempotency keys.
select set_config('app.tenant_id', tests.fx('tenants')::text, true) is not null as operator_in_alpha \gset
select tests.issue_key('ffffffffffffffff', 'secret-of-f', array[tests.fx('properties')]::uuid[]);
select is(tests.act_as_key('ffffffffffffffff', 'secret-of-f'), 'active', 'a second key of the tenant works alongside');
select is((select count(*) from public.idempotency_keys), 0::bigint, 'idempotency keys belong to the API key that sent them');

-- A key of two properties sees both; a key of all sees every property, a third one made after it too.
select tests.act_as_operator();
select set_config('app.tenant_id', tests.fx('tenants')::text, true) is not null as operator_in_alpha \gset
select tests.issue_key('gggggggggggggggg', 'secret-of-g', array[tests.fx('properties'), :'other_property']::uuid[]);
select tests.issue_key('hhhhhhhhhhhhhhhh', 'secret-of-h', '{}', all_properties => true);
select tests.issue_key('iiiiiiiiiiiiiiii', 'secret-of-i', '{}', '{ari:read}', true);
select tests.issue_key('jjjjjjjjjjjjjjjj', 'secret-of-j', array[tests.fx('properties')]::uuid[], '{reservations:read}');
insert into public.properties (tenant_id, name, timezone, currency)
  values (tests.fx('tenants'), 'Alpha Annex', 'Europe/Lisbon', 'EUR') returning id as annex \gset
insert into public.reservations (tenant_id, property_id, guest_id, check_in, check_out, total_amount, status)
  values (tests.fx('tenants'), :'annex', tests.fx('guests'), date '2030-08-01', date '2030-08-03', 20000, 'confirmed');
select tests.act_as_key('gggggggggggggggg', 'secret-of-g');
select is((select count(distinct property_id) from public.reservations), 2::bigint, 'a key of two properties sees both');
select tests.act_as_key('hhhhhhhhhhhhhhhh', 'secret-of-h');
select is((select count(distinct property_id) from public.reservations), 3::bigint,
  'a key of all properties sees each, one made after it too');

-- Scopes: a key that acts on no reservation sees none, and only payments:write records a payment.
select tests.act_as_key('iiiiiiiiiiiiiiii', 'secret-of-i');
select is((select count(*) from public.reservations), 0::bigint, 'a key of ari:read alone sees no reservation');
select tests.act_as_key('jjjjjjjjjjjjjjjj', 'secret-of-j');
select throws_ok(format($$insert into public.payments (reservation_id, amount, currency, source, external_reference)
  values (%L, 7000, 'EUR', 'external', 'psp-9')$$, tests.fx('reservations')), '42501', null,
  'a key of reservations:read alone records no payment');

-- A property deleted takes its keys' rows; a key left with none goes, one with another stays.
select tests.act_as_operator();
select set_config('app.tenant_id', tests.fx('tenants')::text, true) is not null as operator_in_alpha \gset
insert into public.properties (tenant_id, name, timezone, currency)
  values (tests.fx('tenants'), 'Alpha Pavilion', 'Europe/Lisbon', 'EUR') returning id as pavilion \gset
select tests.issue_key('kkkkkkkkkkkkkkkk', 'k', array[:'pavilion']::uuid[]);
select tests.issue_key('llllllllllllllll', 'l', array[:'pavilion', :'other_property']::uuid[]);
delete from public.properties where id = :'pavilion';
select results_eq($$select key_id, array(select p.property_id from public.api_key_properties p where p.api_key_id = k.id)
                    from public.api_keys k where key_id in ('kkkkkkkkkkkkkkkk', 'llllllllllllllll')$$,
  format('values (%L, array[%L]::uuid[])', 'llllllllllllllll', :'other_property'),
  'a property deleted takes the key it alone had, and leaves a key its other property');

select * from finish();
rollback;
