-- Calendar feeds: managers alone make and see them, a feed keeps its unit or room type and
-- its token, and the token's function answers for a live feed and nothing else.
begin;
\ir ../helpers/setup.psql
select plan(14);

select tests.use_fixture(tests.make_tenant('Alpha')) as fx \gset
select tests.make_tenant('Beta') as fx_beta \gset

select ok((select relrowsecurity from pg_class where oid = 'public.calendar_feeds'::regclass),
  'calendar_feeds: row-level security is enabled');

select tests.act_as('Alpha_admin', tests.fx('tenants'));
select lives_ok(format($$insert into public.calendar_feeds (unit_id, name, token_hash, last_four)
  values (%L, 'Room 1', sha256('token-a'::bytea), 'en-a')$$, tests.fx('units')), 'an admin makes a feed of a unit');
select is((select property_id from public.calendar_feeds where last_four = 'en-a'), tests.fx('properties'),
  'the feed takes its unit''s property');
select throws_ok($$select token_hash from public.calendar_feeds$$, '42501', null, 'nobody reads a token''s hash back');
select throws_ok(format($$insert into public.calendar_feeds (unit_id, name, token_hash, last_four)
  values (%L, 'Theirs', sha256('token-b'::bytea), 'en-b')$$, :'fx_beta'::jsonb ->> 'units'), '23503', null,
  'a feed cannot name another tenant''s unit');
select throws_ok(format($$insert into public.calendar_feeds (unit_id, room_type_id, name, token_hash, last_four)
  values (%L, (select room_type_id from public.units where id = %L), 'Both', sha256('token-c'::bytea), 'en-c')$$,
  tests.fx('units'), tests.fx('units')), '23514', null, 'a feed is of a unit or of a room type, not both');
select throws_ok($$update public.calendar_feeds set last_four = 'moved' where last_four = 'en-a'$$, '42501', null,
  'a manager cannot point a feed elsewhere');

select tests.act_as('Alpha_staff', tests.fx('tenants'));
select is((select count(*) from public.calendar_feeds), 0::bigint, 'staff see no feeds');
select throws_ok(format($$insert into public.calendar_feeds (unit_id, name, token_hash, last_four)
  values (%L, 'Mine', sha256('token-d'::bytea), 'en-d')$$, tests.fx('units')), '42501', null, 'staff cannot make feeds');
select throws_ok($$select * from private.calendar_feed_events(sha256('token-a'::bytea))$$, '42501', null,
  'a signed-in user cannot call the token''s function');

-- The token's function, as the API calls it.
select tests.act_as_operator();
select is((select count(*) from private.calendar_feed_events(sha256('token-a'::bytea)) where kind = 'feed'), 1::bigint,
  'a live token names its feed');
select is_empty($$select * from private.calendar_feed_events(sha256('token-z'::bytea))$$, 'an unknown token answers nothing');
update public.calendar_feeds set revoked_at = now() where last_four = 'en-a';
select is_empty($$select * from private.calendar_feed_events(sha256('token-a'::bytea))$$, 'nor does a revoked one');
select throws_ok($$update public.calendar_feeds set revoked_at = null where last_four = 'en-a'$$, 'PT409', null,
  'a revoked feed stays revoked');

select * from finish();
rollback;
