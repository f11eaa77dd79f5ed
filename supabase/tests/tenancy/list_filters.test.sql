-- The function behind the guest search runs as the table's owner, past RLS: it names only
-- the request tenant's guests, and only to a member of it, and counts no others.
begin;
\ir ../helpers/setup.psql
select plan(5);

create temp table fixture as
  select tests.make_tenant('Alpha') as a, tests.make_tenant('Beta') as b;
grant select on fixture to public;
select (a ->> 'tenants')::uuid as ta, (b ->> 'tenants')::uuid as tb,
       (a ->> 'guests')::uuid as ga
from fixture \gset

-- Each tenant's guest is Ada <label>.
select tests.act_as('Alpha_staff', :'ta');
select is((select row(ids, total)::text from private.guest_search_page('%alpha%', 10, 0)),
          row(array[:'ga'::uuid], 1::bigint)::text,
          'a member gets the request tenant''s matching guests and their count');
select is((select row(ids, total)::text from private.guest_search_page('%alpha%', 10, 1)),
          row('{}'::uuid[], 1::bigint)::text,
          'past the last match the page is empty and the count stays');
select is((select row(ids, total)::text from private.guest_search_page('%beta%', 10, 0)),
          row('{}'::uuid[], 0::bigint)::text, 'never another tenant''s, nor in the count');

-- A user asking for a tenant they are not a member of gets nothing.
select tests.act_as('Alpha_staff', :'tb');
select is((select row(ids, total)::text from private.guest_search_page('%beta%', 10, 0)),
          row('{}'::uuid[], 0::bigint)::text, 'not a member: no guests');

select tests.act_as_anon();
select throws_ok($$ select private.guest_search_page('%alpha%', 10, 0) $$, '42501', null,
                 'anon cannot call it');

select * from finish();
rollback;
