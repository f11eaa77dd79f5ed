-- API keys, the key check, and what a request as api_integration may see and write.
begin;
\ir ../helpers/setup.psql
select plan(37);

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

-- Acts as the API does for a request carrying a key: the key checked in FROM, then
-- the settings and the role from its row.
create function tests.act_as_key(key_id text, secret text) returns text
language plpgsql set search_path = ''
as $$
declare
  state text;
begin
  perform set_config('role', 'postgres', true);
  perform set_config('request.jwt.claims', '', true);
  select k.state,
         set_config('app.tenant_id', coalesce(k.tenant_id::text, ''), true),
         set_config('app.property_id', coalesce(k.property_id::text, ''), true),
         set_config('app.api_key_id', coalesce(k.api_key_id::text, ''), true)
    into state
    from private.authenticate_api_key(key_id, sha256(convert_to(secret, 'UTF8'))) k;
  perform set_config('role', 'api_integration', true);
  return state;
end
$$;

select ok((select relrowsecurity from pg_class where oid = 'public.api_keys'::regclass), 'api_keys: row-level security is enabled');
select ok((select relrowsecurity from pg_class where oid = 'public.idempotency_keys'::regclass),
  'idempotency_keys: row-level security is enabled');

-- Managers issue keys.
select tests.act_as('Alpha_admin', tests.fx('tenants'));
select lives_ok(format($$insert into public.api_keys (property_id, name, key_id, secret_hash, last_four)
  values (%L, 'Channel manager', 'aaaaaaaaaaaaaaaa', sha256('secret-of-a'::bytea), 'of-a')$$, tests.fx('properties')),
  'an admin issues a key for a property');
select results_eq($$select created_by, revoked_at, last_used_at from public.api_keys where key_id = 'aaaaaaaaaaaaaaaa'$$,
  format('values (%L::uuid, null::timestamptz, null::timestamptz)', tests.fx('admin')), 'the key names its creator and starts unused');
select throws_ok($$select secret_hash from public.api_keys$$, '42501', null, 'nobody reads a secret''s hash back through the API role');
select throws_ok(format($$insert into public.api_keys (property_id, name, key_id, secret_hash, last_four, revoked_at)
  values (%L, 'x', 'bbbbbbbbbbbbbbbb', sha256('b'::bytea), 'xxxx', now())$$, tests.fx('properties')), '42501', null,
  'a key cannot be created revoked');
select throws_ok(format($$insert into public.api_keys (property_id, name, key_id, secret_hash, last_four)
  values (%L, 'x', 'cccccccccccccccc', sha256('c'::bytea), 'xxxx')$$, :'fx_beta'::jsonb ->> 'properties'), '23503', null,
  'a key cannot name another tenant''s property');
select throws_ok(format($$insert into public.api_keys (property_id, name, key_id, secret_hash, last_four)
  values (%L, 'x', 'NOT-A-KEY-ID', sha256('c'::bytea), 'xxxx')$$, tests.fx('properties')), '23514', null,
  'a key id is 16 base32 characters');
select throws_ok(format($$update public.api_keys set property_id = %L where key_id = 'aaaaaaaaaaaaaaaa'$$, :'other_property'),
  '42501', null, 'a key''s property cannot be changed by a manager');

-- Staff and other tenants see nothing of them.
select tests.act_as('Alpha_staff', tests.fx('tenants'));
select is((select count(*) from public.api_keys), 0::bigint, 'staff see no keys');
select throws_ok(format($$insert into public.api_keys (property_id, name, key_id, secret_hash, last_four)
  values (%L, 'x', 'dddddddddddddddd', sha256('d'::bytea), 'xxxx')$$, tests.fx('properties')), '42501', null,
  'staff cannot issue keys');
select tests.act_as('Beta_owner', tests.fx('tenants'));
select is((select count(*) from public.api_keys), 0::bigint, 'another tenant''s owner naming Alpha sees no keys');
select throws_ok($$select private.authenticate_api_key('aaaaaaaaaaaaaaaa', sha256('secret-of-a'::bytea))$$, '42501', null,
  'a signed-in user cannot call the key check');

-- The key check.
select tests.act_as_operator();
select results_eq($$select state, tenant_id, property_id from private.authenticate_api_key('aaaaaaaaaaaaaaaa', sha256('secret-of-a'::bytea))$$,
  format('values (%L, %L::uuid, %L::uuid)', 'active', tests.fx('tenants'), tests.fx('properties')),
  'the right secret gives the key''s tenant and property');
select ok((select last_used_at = now() from public.api_keys where key_id = 'aaaaaaaaaaaaaaaa'), 'and stamps its last use');
select is_empty($$select * from private.authenticate_api_key('aaaaaaaaaaaaaaaa', sha256('secret-of-b'::bytea))$$,
  'a wrong secret gives nothing');
select is_empty($$select * from private.authenticate_api_key('zzzzzzzzzzzzzzzz', sha256('secret-of-a'::bytea))$$,
  'an unknown key id gives nothing');
select is_empty($$select * from private.authenticate_api_key('aaaaaaaaaaaaaaaa', '\x00'::bytea)$$,
  'a hash of the wrong length gives nothing');
insert into public.api_keys (tenant_id, property_id, name, key_id, secret_hash, last_four, created_at, expires_at)
  values (tests.fx('tenants'), tests.fx('properties'), 'Old', 'eeeeeeeeeeeeeeee', sha256('secret-of-e'::bytea), 'of-e',
          now() - interval '2 days', now() - interval '1 day');
select results_eq($$select state, tenant_id from private.authenticate_api_key('eeeeeeeeeeeeeeee', sha256('secret-of-e'::bytea))$$,
  $$values ('expired', null::uuid)$$, 'an expired key says so and gives no tenant');
select throws_ok($$update public.api_keys set expires_at = null where key_id = 'eeeeeeeeeeeeeeee'$$, 'PT409', null,
  'not even an operator extends a key');

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
select throws_ok(format('update public.reservations set notes = ''x'' where id = %L', tests.fx('reservations')), '42501', null,
  'it cannot change a reservation');
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
insert into public.api_keys (tenant_id, property_id, name, key_id, secret_hash, last_four)
  values (tests.fx('tenants'), tests.fx('properties'), 'Second', 'ffffffffffffffff', sha256('secret-of-f'::bytea), 'of-f');
select is(tests.act_as_key('ffffffffffffffff', 'secret-of-f'), 'active', 'a second key of the tenant works alongside');
select is((select count(*) from public.idempotency_keys), 0::bigint, 'idempotency keys belong to the API key that sent them');

select * from finish();
rollback;
