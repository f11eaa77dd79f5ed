-- Calendar imports: a feed's events become the unit's holds, run by run, and nothing else
-- does; a night the unit cannot be held for is a conflict, not a hold; members cannot
-- change an imported hold; a feed failing three times in a row is told once.
begin;
\ir ../helpers/setup.psql
select plan(28);

select tests.use_fixture(tests.make_tenant('Alpha')) as fx \gset

-- The events of a calendar as the worker hands them over, in days from the property's today.
create function tests.fetched(variadic runs integer[]) returns jsonb language sql as $$
  select jsonb_build_object('outcome', 'fetched', 'etag', '"v1"', 'events', coalesce(jsonb_agg(jsonb_build_object(
    'startsOn', (now() at time zone 'Europe/Lisbon')::date + runs[i], 'endsOn', (now() at time zone 'Europe/Lisbon')::date + runs[i + 1])), '[]'))
  from generate_series(1, coalesce(array_length(runs, 1), 0), 2) i
$$;
create function tests.held() returns table (starts_on integer, ends_on integer) language sql as $$
  select b.starts_on - (now() at time zone 'Europe/Lisbon')::date, b.ends_on - (now() at time zone 'Europe/Lisbon')::date
  from public.unit_blocks b where b.calendar_import_id is not null order by b.starts_on
$$;

select ok((select relrowsecurity from pg_class where oid = 'public.calendar_imports'::regclass),
  'calendar_imports: row-level security is enabled');

select tests.act_as('Alpha_admin', tests.fx('tenants'));
insert into public.calendar_imports (unit_id, name, url)
values (tests.fx('units'), 'Airbnb', 'https://calendar.example.com/room-101.ics') returning id as feed \gset
select is((select property_id from public.calendar_imports where id = :'feed'), tests.fx('properties'),
  'an import takes its unit''s property');
select throws_ok(format($$update public.calendar_imports set unit_id = %L where id = %L$$, tests.fx('unit2'), :'feed'),
  '42501', null, 'a manager cannot move an import to another unit');

select tests.act_as('Alpha_staff', tests.fx('tenants'));
select is((select count(*) from public.calendar_imports), 0::bigint, 'staff see no imports');
select throws_ok(format($$select private.apply_calendar_import(%L, %L, tests.fetched(1, 3))$$, tests.fx('tenants'), :'feed'),
  '42501', null, 'a member cannot apply a calendar');

-- What the worker does, as the tables' owner.
select tests.act_as_operator();
select throws_ok(format($$update public.calendar_imports set unit_id = %L where id = %L$$, tests.fx('unit2'), :'feed'),
  'PT409', null, 'nor can the operator: an import stays on its unit');
select is((select count(*) from private.claim_calendar_imports(10, 60) c where c.id = :'feed'), 1::bigint,
  'a new import is due at once');
select is((select count(*) from private.claim_calendar_imports(10, 60) c where c.id = :'feed'), 0::bigint,
  'and a claimed one waits out its lease');

select is(private.apply_calendar_import(tests.fx('tenants'), :'feed', tests.fetched(10, 13, 20, 22, -5, -2, 800, 805)),
  'changed', 'a first calendar changes what is held');
select results_eq('select * from tests.held()', $$values (10, 13), (20, 22)$$,
  'each event from today to two years ahead holds its nights, DTEND exclusive');
select is((select events from public.calendar_imports where id = :'feed'), 2, 'the import counts the events it holds');
select ok((select next_fetch_at > now() + interval '14 minutes' from public.calendar_imports where id = :'feed'),
  'a calendar that answered is fetched again in a quarter of an hour');

select array_agg(id order by starts_on) as first_blocks from public.unit_blocks where calendar_import_id = :'feed' \gset
select is(private.apply_calendar_import(tests.fx('tenants'), :'feed', tests.fetched(20, 22, 10, 13)), 'unchanged',
  'the same events again change nothing');
select is((select array_agg(id order by starts_on) from public.unit_blocks where calendar_import_id = :'feed'),
  :'first_blocks'::uuid[], 'and keep the same holds');

select is(private.apply_calendar_import(tests.fx('tenants'), :'feed', tests.fetched(10, 13, 20, 23)), 'changed',
  'a longer event changes the calendar');
select results_eq('select * from tests.held()', $$values (10, 13), (20, 23)$$, 'its hold follows the event');
select is((select id from public.unit_blocks where calendar_import_id = :'feed' order by starts_on limit 1),
  (:'first_blocks'::uuid[])[1], 'an unchanged run keeps its hold');

-- Nights the unit cannot be held for. Unit 101 is its room type's only unit.
select tests.act_as('Alpha_staff', tests.fx('tenants'));
insert into public.reservations (property_id, unit_id, guest_id, check_in, check_out)
values (tests.fx('properties'), tests.fx('units'), tests.fx('guests'),
        (now() at time zone 'Europe/Lisbon')::date + 30, (now() at time zone 'Europe/Lisbon')::date + 32);
insert into public.reservations (property_id, room_type_id, guest_id, check_in, check_out)
values (tests.fx('properties'), tests.fx('room_types'), tests.fx('guests'),
        (now() at time zone 'Europe/Lisbon')::date + 40, (now() at time zone 'Europe/Lisbon')::date + 41);
select throws_ok(format($$update public.unit_blocks set reason = 'mine' where calendar_import_id = %L$$, :'feed'),
  'PT409', null, 'a member cannot change an imported hold');
select tests.act_as('Alpha_admin', tests.fx('tenants'));
select throws_ok(format($$delete from public.unit_blocks where calendar_import_id = %L$$, :'feed'),
  'PT409', null, 'nor can a manager remove one');

select tests.act_as_operator();
select is(private.apply_calendar_import(tests.fx('tenants'), :'feed', tests.fetched(29, 33, 40, 41)), 'changed',
  'a calendar over a stay and a full room type is applied');
select results_eq('select * from tests.held()', $$values (29, 30), (32, 33)$$,
  'only the nights nothing else holds are held');
select is((select conflicts from public.calendar_imports where id = :'feed'),
  jsonb_build_array(
    jsonb_build_object('startsOn', (now() at time zone 'Europe/Lisbon')::date + 30,
                       'endsOn', (now() at time zone 'Europe/Lisbon')::date + 32, 'reason', 'stay'),
    jsonb_build_object('startsOn', (now() at time zone 'Europe/Lisbon')::date + 40,
                       'endsOn', (now() at time zone 'Europe/Lisbon')::date + 41, 'reason', 'room_type_full')),
  'the others are kept as conflicts, with their reason');

-- Failing fetches.
select is(private.apply_calendar_import(tests.fx('tenants'), :'feed', '{"outcome": "failed", "code": "timeout"}'),
  'failed', 'a failed fetch is recorded');
select private.apply_calendar_import(tests.fx('tenants'), :'feed', '{"outcome": "failed", "code": "timeout"}');
select is((select count(*) from public.notifications where template_key = 'calendar_import_failing'), 0::bigint,
  'two failures tell nobody');
select private.apply_calendar_import(tests.fx('tenants'), :'feed', '{"outcome": "failed", "code": "timeout"}');
select private.apply_calendar_import(tests.fx('tenants'), :'feed', '{"outcome": "failed", "code": "timeout"}');
select results_eq(format($$select count(*), min(n.context ->> 'calendarImportId') from public.notifications n
                            where n.template_key = 'calendar_import_failing'$$),
  format($$values (1::bigint, %L)$$, :'feed'), 'the third failure in a row tells the managers once');
select results_eq(format($$select failures, last_error_code from public.calendar_imports where id = %L$$, :'feed'),
  $$values (4, 'timeout')$$, 'the import counts its failures, and keeps its holds');
select is(private.apply_calendar_import(tests.fx('tenants'), :'feed', '{"outcome": "unchanged"}'), 'unchanged',
  'a calendar that answers again');
select results_eq(format($$select failures, reported_at is null, (select count(*) from tests.held())
                           from public.calendar_imports where id = %L$$, :'feed'),
  $$values (0, true, 2::bigint)$$, 'is no longer failing, and held what it held');

select * from finish();
rollback;
