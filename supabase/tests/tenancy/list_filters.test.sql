-- The function behind the guest search runs as the table's owner, past RLS: it names only
-- the request tenant's guests, and only to a member of it.
begin;
\ir ../helpers/setup.psql
select plan(4);

create temp table fixture as
  select tests.make_tenant('Alpha') as a, tests.make_tenant('Beta') as b;
grant select on fixture to public;
select (a ->> 'tenants')::uuid as ta, (b ->> 'tenants')::uuid as tb,
       (a ->> 'guests')::uuid as ga
from fixture \gset

-- Each tenant's guest is Ada <label>.
select tests.act_as('Alpha_staff', :'ta');
select is(array(select private.guest_ids_matching('%alpha%')), array[:'ga'::uuid],
          'a member gets the request tenant''s matching guests');
select is(array(select private.guest_ids_matching('%beta%')), '{}'::uuid[], 'never another tenant''s');

-- A user asking for a tenant they are not a member of gets nothing.
select tests.act_as('Alpha_staff', :'tb');
select is(array(select private.guest_ids_matching('%beta%')), '{}'::uuid[], 'not a member: no guests');

select tests.act_as_anon();
select throws_ok($$ select private.guest_ids_matching('%alpha%') $$, '42501', null,
                 'anon cannot call it');

select * from finish();
rollback;
