-- The reservation status tallies, which the reservation list's exact total sums in place
-- of counting: they follow every way a reservation arrives, moves and leaves, folding
-- changes no sum, and they are read under the reservations' own policies.
begin;
\ir ../helpers/setup.psql
select plan(24);

select tests.use_fixture(tests.make_tenant('Alpha')) as fx \gset
select tests.make_tenant('Beta') ->> 'tenants' as beta \gset

-- Keys (property, status) where a tenant's tallies differ from its reservations, counted
-- as the operator sees them.
create function tests.tally_mismatches(tenant uuid) returns bigint
language sql as $$
  with counted as (
    select property_id, status, count(*)::integer as n from public.reservations where tenant_id = tenant group by 1, 2
  ), tallied as (
    select property_id, status, sum(reservations)::integer as n from public.reservation_status_tallies
    where tenant_id = tenant group by 1, 2 having sum(reservations) <> 0
  )
  select count(*) from ((table counted except table tallied) union all (table tallied except table counted)) as differing
$$;
create function tests.tally_rows(tenant uuid) returns bigint
language sql as $$ select count(*) from public.reservation_status_tallies where tenant_id = tenant $$;

select is(tests.tally_mismatches(tests.fx('tenants')), 0::bigint, 'a new tenant''s confirmed stay is tallied');

-- Arrivals and steps through the lifecycle, as the staff make them.
select tests.act_as('Alpha_staff', tests.fx('tenants'));
insert into public.reservations (property_id, unit_id, guest_id, check_in, check_out, status)
select tests.fx('properties'), tests.fx('unit2'), tests.fx('guests'), date '2031-01-01' + 3 * n, date '2031-01-01' + 3 * n + 2,
       case when n % 2 = 0 then 'pending' else 'confirmed' end
from generate_series(1, 8) n;
update public.reservations set status = 'confirmed' where status = 'pending' and check_in = date '2031-01-07';
update public.reservations set status = 'checked_in' where status = 'confirmed' and check_in in (date '2031-01-04', date '2031-01-10');
update public.reservations set status = 'checked_out' where check_in = date '2031-01-04';
update public.reservations set status = 'cancelled' where status = 'pending' and check_in = date '2031-01-13';
update public.reservations set status = 'no_show' where status = 'confirmed' and check_in = date '2031-01-16';
select tests.act_as_operator();
select is(tests.tally_mismatches(tests.fx('tenants')), 0::bigint, 'arrivals and every step of the lifecycle are tallied');
select is((select sum(reservations)::integer from public.reservation_status_tallies where tenant_id = tests.fx('tenants')), 9,
  'the tenant''s tallies sum to its nine reservations');

select tests.tally_rows(tests.fx('tenants')) as rows_before_notes \gset
select tests.act_as('Alpha_staff', tests.fx('tenants'));
update public.reservations set notes = 'late arrival' where check_in >= date '2031-01-01';
select tests.act_as_operator();
select is(tests.tally_rows(tests.fx('tenants')), :'rows_before_notes'::bigint,
  'an update that changes neither status nor property writes no tally');

-- A second property, and a stay moved to it.
insert into public.properties (tenant_id, name, timezone, currency)
values (tests.fx('tenants'), 'Alpha Hillside', 'Europe/Lisbon', 'EUR') returning id as hillside \gset
select tests.act_as('Alpha_staff', tests.fx('tenants'));
update public.reservations set property_id = :'hillside', unit_id = null, room_type_id = null where check_in = date '2031-01-07';
insert into public.reservations (property_id, guest_id, check_in, check_out)
values (:'hillside', tests.fx('guests'), date '2031-03-01', date '2031-03-03');
select tests.act_as_operator();
select is(tests.tally_mismatches(tests.fx('tenants')), 0::bigint, 'a stay moved to another property is tallied in its new one');
select is((select sum(reservations)::integer from public.reservation_status_tallies where property_id = :'hillside'), 2,
  'the second property''s tallies sum to its two stays');

-- Removal, by a manager.
select tests.act_as('Alpha_owner', tests.fx('tenants'));
select is(tests.rows_changed('delete from public.reservations where check_in = date ''2031-03-01'''), 1::bigint,
  'the owner deletes a stay');
select tests.act_as_operator();
select is(tests.tally_mismatches(tests.fx('tenants')), 0::bigint, 'a deleted stay leaves the tallies');

-- The dashboard operator's writes, set-based, are tallied alike.
update public.reservations set status = 'cancelled' where tenant_id = tests.fx('tenants') and status = 'pending';
delete from public.reservations where tenant_id = tests.fx('tenants') and status = 'cancelled'
  and id not in (select reservation_id from public.payments);
select is(tests.tally_mismatches(tests.fx('tenants')), 0::bigint, 'an operator''s updates and deletes of many rows are tallied');
select is(tests.tally_mismatches(:'beta'), 0::bigint, 'another tenant''s tallies are its own');

-- Read under the reservations' policies, written by the trigger alone.
select tests.act_as('Alpha_staff', tests.fx('tenants'));
select is((select count(*) from public.reservation_status_tallies where tenant_id <> tests.fx('tenants')), 0::bigint,
  'a member reads no other tenant''s tallies');
select is((select sum(reservations)::bigint from public.reservation_status_tallies),
  (select count(*) from public.reservations), 'a member''s tallies sum to the reservations it reads');
select is(tests.error_of(format(
  'insert into public.reservation_status_tallies (tenant_id, property_id, status, reservations) values (%L, %L, ''confirmed'', 1000)',
  tests.fx('tenants'), tests.fx('properties'))), '42501', 'a member cannot write a tally');
select is(tests.error_of('update public.reservation_status_tallies set reservations = reservations + 1'), '42501',
  'nor change one');
select is(tests.error_of('delete from public.reservation_status_tallies'), '42501', 'nor delete one');
select tests.act_as('Alpha_staff', :'beta');
select is((select count(*) from public.reservation_status_tallies), 0::bigint,
  'a user reads nothing of a tenant it is not a member of');

-- Folding: each key's rows become one, and no sum changes.
select tests.act_as_operator();
select cmp_ok(private.fold_reservation_status_tallies(), '>', 0, 'the fold removes rows');
select is((select count(*) from (select from public.reservation_status_tallies
                                 group by tenant_id, property_id, status having count(*) > 1) as repeated), 0::bigint,
  'after the fold each tenant, property and status has one row');
select is((select count(*) from public.reservation_status_tallies where reservations = 0), 0::bigint,
  'and none that counts nothing');
select is(tests.tally_mismatches(tests.fx('tenants')) + tests.tally_mismatches(:'beta'), 0::bigint,
  'the folded tallies are the reservations'' counts');
select is(private.fold_reservation_status_tallies(), 0, 'folding again changes nothing');

-- A tenant deleted with its reservations takes its tallies with it.
select lives_ok(format('delete from public.tenants where id = %L', :'beta'), 'a tenant with reservations is deleted');
select is(tests.tally_rows(:'beta'), 0::bigint, 'its tallies are gone');

select is((select schedule from cron.job where jobname = 'fold-reservation-status-tallies'), '* * * * *',
  'pg_cron folds the tallies every minute');

select * from finish();
rollback;
