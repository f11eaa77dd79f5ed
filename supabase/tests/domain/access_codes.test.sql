-- Door codes: their default validity, uniqueness on a door, and revocation.
begin;
\ir ../helpers/setup.psql
select plan(11);

select tests.use_fixture(tests.make_tenant('Alpha')) as fx \gset

select tests.act_as('Alpha_staff', tests.fx('tenants'));

-- The fixture's stay is 2030-06-01 to 06-04 at a Lisbon property (UTC+1 in June).
select results_eq(format('select code ~ ''^[0-9]{6}$'', valid_from, valid_until, property_id from public.access_codes where id = %L',
  tests.fx('access_codes')),
  format($$values (true, timestamptz '2030-06-01 14:00Z', timestamptz '2030-06-04 10:00Z', %L::uuid)$$, tests.fx('properties')),
  'a code defaults to six digits, valid from check-in time on arrival to check-out time on departure, local time');

select code as taken_code from public.access_codes where id = tests.fx('access_codes') \gset
insert into public.reservations (property_id, unit_id, guest_id, check_in, check_out)
  values (tests.fx('properties'), tests.fx('unit2'), tests.fx('guests'), '2030-06-03', '2030-06-05') returning id as other_stay \gset
select throws_ok(format('insert into public.access_codes (reservation_id, code) values (%L, %L)', :'other_stay', :'taken_code'),
  '23P01', null, 'one code cannot open two overlapping stays at a property');
select lives_ok(format('insert into public.access_codes (reservation_id, code, valid_from) values (%L, %L, ''2030-06-04 10:00Z'')',
  :'other_stay', :'taken_code'), 'the same code is fine once the other stay''s window has closed');
select throws_ok(format('insert into public.access_codes (reservation_id, valid_from, valid_until) values (%L, ''2030-06-05'', ''2030-06-04'')',
  :'other_stay'), '23514', null, 'a code must close after it opens');

select throws_ok(format('update public.access_codes set code = ''123456'' where id = %L', tests.fx('access_codes')), 'PT409', null,
  'a code''s digits cannot change');
update public.access_codes set status = 'revoked' where id = tests.fx('access_codes');
select isnt((select revoked_at from public.access_codes where id = tests.fx('access_codes')), null, 'revoking stamps revoked_at');
select throws_ok(format('update public.access_codes set status = ''active'' where id = %L', tests.fx('access_codes')), 'PT409',
  'a revoked access code cannot change', 'a revoked code stays revoked');
select throws_ok(format('update public.access_codes set status = ''revoked'' where id = %L', tests.fx('access_codes')), 'PT409',
  'a revoked access code cannot change', 'revoking a revoked code again is refused');

-- The stay ending locks the door.
update public.reservations set status = 'cancelled' where id = :'other_stay';
select is((select array_agg(distinct status) from public.access_codes where reservation_id = :'other_stay'), array['revoked'],
  'cancelling a reservation revokes its codes');
select throws_ok(format('insert into public.access_codes (reservation_id) values (%L)', :'other_stay'), 'PT409',
  'a cancelled reservation gets no access code', 'a cancelled reservation gets no new code');
select throws_ok(format('insert into public.access_codes (reservation_id) values (%L)', gen_random_uuid()), '23503', null,
  'a code needs a reservation of the tenant');

select * from finish();
rollback;
