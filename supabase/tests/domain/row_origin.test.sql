-- A row's origin (created_at, created_by) and a guest's consent stamp cannot be
-- rewritten, by members or by operators; deleting the creator still clears created_by.
begin;
\ir ../helpers/setup.psql
select plan(11);

select tests.use_fixture(tests.make_tenant('Alpha')) as fx \gset

select tests.act_as('Alpha_admin', tests.fx('tenants'));
select throws_ok(format('update public.properties set created_at = ''2000-01-01'' where id = %L', tests.fx('properties')),
  '42501', 'properties.created_at cannot change', 'a member cannot backdate a row');
select throws_ok(format('update public.reservations set created_by = %L where id = %L', tests.fx('owner'), tests.fx('reservations')),
  '42501', 'reservations.created_by cannot change', 'a member cannot say someone else created a row');
select lives_ok(format('update public.reservations set notes = ''Late arrival'', created_at = created_at where id = %L',
  tests.fx('reservations')), 'writing the origin back unchanged is no change');

select tests.act_as('Alpha_owner', tests.fx('tenants'));
select throws_ok(format('update public.tenants set created_by = %L where id = %L', tests.fx('admin'), tests.fx('tenants')),
  '42501', 'tenants.created_by cannot change', 'the tenant''s creator cannot be rewritten');

select tests.act_as('Alpha_staff', tests.fx('tenants'));
select throws_ok(format('update public.guests set marketing_consent_at = now() - interval ''1 year'' where id = %L', tests.fx('guests')),
  '42501', 'marketing_consent_at is stamped when consent is given and cannot be set', 'consent cannot be backdated');
update public.guests set marketing_consent = true where id = tests.fx('guests');
select is((select marketing_consent_at from public.guests where id = tests.fx('guests')), now(), 'giving consent stamps it');
-- now() is fixed for the transaction, so only a stamp from before it shows that an
-- update left the stamp alone rather than stamping it again.
select tests.act_as_operator();
set local session_replication_role = replica;
update public.guests set marketing_consent_at = '2020-01-01 00:00:00+00' where id = tests.fx('guests');
set local session_replication_role = origin;
select tests.act_as('Alpha_staff', tests.fx('tenants'));
update public.guests set notes = 'Prefers a quiet room' where id = tests.fx('guests');
select is((select marketing_consent_at from public.guests where id = tests.fx('guests')), '2020-01-01 00:00:00+00'::timestamptz,
  'other changes keep the stamp');
update public.guests set marketing_consent = false where id = tests.fx('guests');
select is((select marketing_consent_at from public.guests where id = tests.fx('guests')), null, 'withdrawing consent clears it');

select tests.act_as_operator();
select throws_ok(format('update public.tasks set created_at = ''2000-01-01'' where id = %L', tests.fx('tasks')),
  '42501', 'tasks.created_at cannot change', 'operators cannot backdate a row either');

-- The staff member creates a guest, then their account is deleted.
select tests.act_as('Alpha_staff', tests.fx('tenants'));
insert into public.guests (first_name, last_name) values ('Eve', 'Created') returning id as eve \gset
select tests.act_as_operator();
select lives_ok(format('delete from auth.users where id = %L', tests.fx('staff')), 'a user who created rows can be deleted');
select is((select created_by from public.guests where id = :'eve'), null, 'and their rows forget who created them');

select * from finish();
rollback;
