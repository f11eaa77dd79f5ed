-- The two functions behind the reservation list's dates and the guest search run as the
-- tables' owner, past RLS: they name only the request tenant's rows, and only to a member
-- of it (or an integration of it).
begin;
\ir ../helpers/setup.psql
select plan(10);

create temp table fixture as
  select tests.make_tenant('Alpha') as a, tests.make_tenant('Beta') as b;
grant select on fixture to public;
select (a ->> 'tenants')::uuid as ta, (b ->> 'tenants')::uuid as tb,
       (a ->> 'reservations')::uuid as ra, (a ->> 'guests')::uuid as ga
from fixture \gset

-- Each tenant's reservation stays from 2030-06-01 to 2030-06-04; its guest is Ada <label>.
select tests.act_as('Alpha_staff', :'ta');
select is(array(select private.reservation_ids_during('2030-06-02', '2030-06-03')), array[:'ra'::uuid],
          'a member gets the stays of the request tenant that meet the dates');
select is(array(select private.reservation_ids_during('2030-06-04', null)), '{}'::uuid[],
          'check-out is not a night of the stay');
select is(array(select private.reservation_ids_during(null, '2030-06-02')), array[:'ra'::uuid], 'only `to`');
select is(array(select private.reservation_ids_during('2030-06-03', '2030-06-03')), array[:'ra'::uuid],
          'from = to: the stays holding that night');
select is(array(select private.reservation_ids_during('2030-06-03', '2030-06-01')), array[:'ra'::uuid],
          'from after to: the stays holding the night of from');
select is(array(select private.guest_ids_matching('%alpha%')), array[:'ga'::uuid],
          'a member gets the request tenant''s matching guests');
select is(array(select private.guest_ids_matching('%beta%')), '{}'::uuid[], 'never another tenant''s');

-- A user asking for a tenant they are not a member of gets nothing.
select tests.act_as('Alpha_staff', :'tb');
select is(array(select private.reservation_ids_during('2030-06-02', '2030-06-03')), '{}'::uuid[],
          'not a member: no stays');
select is(array(select private.guest_ids_matching('%beta%')), '{}'::uuid[], 'not a member: no guests');

select tests.act_as_anon();
select throws_ok($$ select private.reservation_ids_during('2030-06-02', '2030-06-03') $$, '42501', null,
                 'anon cannot call it');

select * from finish();
rollback;
