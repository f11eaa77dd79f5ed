-- The rate calendar: per-day prices with extra guests, restrictions, derived plans, and
-- reservations priced from it night by night unless their writer gave a total.
begin;
\ir ../helpers/setup.psql
select plan(36);

select tests.use_fixture(tests.make_tenant('Alpha')) as fx \gset

-- A double (two guests in the price, three at most) with one unit, a plan for it at 100.00
-- a night with 25.00 for a third adult and 10.00 for a child above two guests, and a plan
-- derived from it at 10 % off.
select tests.act_as('Alpha_owner', tests.fx('tenants'));
insert into public.room_types (property_id, code, name, standard_occupancy, max_occupancy)
values (tests.fx('properties'), 'DBL', 'Double', 2, 3) returning id as dbl \gset
insert into public.units (property_id, name, capacity, room_type_id) values (tests.fx('properties'), 'D1', 3, :'dbl');
insert into public.rate_plans (property_id, name, code, currency, nightly_price, extra_adult_price, extra_child_price, room_type_id)
values (tests.fx('properties'), 'Flexible', 'FLEX', 'EUR', 10000, 2500, 1000, :'dbl') returning id as flex \gset
insert into public.rate_plans (property_id, name, code, currency, derived_from_id, derived_percent, nightly_price)
values (tests.fx('properties'), 'Prepaid', 'PREPAID', 'EUR', :'flex', -10, 0) returning id as prepaid \gset

-- June 2035: Friday and Saturday nights at 150.00; closed to arrival on Sunday the 10th;
-- a stay arriving on Tuesday the 5th is at least three nights; closed to departure on
-- Thursday the 14th; closed on Wednesday the 20th.
insert into public.rate_plan_days (rate_plan_id, day, price)
select :'flex', d::date, 15000 from generate_series(date '2035-06-01', date '2035-06-30', interval '1 day') d
where extract(isodow from d) in (5, 6);
insert into public.rate_plan_days (rate_plan_id, day, closed_to_arrival) values (:'flex', '2035-06-10', true);
insert into public.rate_plan_days (rate_plan_id, day, min_stay) values (:'flex', '2035-06-05', 3);
insert into public.rate_plan_days (rate_plan_id, day, closed_to_departure) values (:'flex', '2035-06-14', true);
insert into public.rate_plan_days (rate_plan_id, day, closed) values (:'flex', '2035-06-20', true);

-- Quotes.
select is(private.quote_stay(:'flex', :'dbl', '2035-06-01', '2035-06-04', 2, 0) -> 'nights',
  '[{"date": "2035-06-01", "amount": 15000}, {"date": "2035-06-02", "amount": 15000}, {"date": "2035-06-03", "amount": 10000}]'::jsonb,
  'each night at its own price: the weekend''s, then the plan''s');
select is((private.quote_stay(:'flex', :'dbl', '2035-06-01', '2035-06-04', 2, 0) ->> 'total')::bigint, 40000::bigint,
  'the total is the nights'' sum');
select is((private.quote_stay(:'flex', :'dbl', '2035-06-03', '2035-06-04', 3, 0) ->> 'total')::bigint, 12500::bigint,
  'a third adult adds the extra-adult amount');
select is((private.quote_stay(:'flex', :'dbl', '2035-06-03', '2035-06-04', 2, 1) ->> 'total')::bigint, 11000::bigint,
  'a child above the standard occupancy adds the extra-child amount');
select is((private.quote_stay(:'flex', :'dbl', '2035-06-03', '2035-06-04', 1, 1) ->> 'total')::bigint, 10000::bigint,
  'a child within the standard occupancy adds nothing');
select is((private.quote_stay(:'prepaid', :'dbl', '2035-06-01', '2035-06-04', 2, 0) ->> 'total')::bigint, 36000::bigint,
  'a derived plan charges its base plan''s prices, 10 % off');
select is(private.quote_stay(:'flex', :'dbl', '2035-06-01', '2035-06-04', 2, 0) -> 'restrictions', '[]'::jsonb,
  'a stay nothing refuses has no restriction');
select is(private.quote_stay(:'flex', :'dbl', '2035-06-10', '2035-06-12', 2, 0) -> 'restrictions',
  '[{"code": "closed_to_arrival", "date": "2035-06-10"}]'::jsonb, 'closed to arrival on the arrival day');
select is(private.quote_stay(:'flex', :'dbl', '2035-06-05', '2035-06-07', 2, 0) -> 'restrictions',
  '[{"code": "min_stay", "date": "2035-06-05", "minStay": 3}]'::jsonb, 'the arrival day''s minimum stay');
select is(private.quote_stay(:'flex', :'dbl', '2035-06-12', '2035-06-14', 2, 0) -> 'restrictions',
  '[{"code": "closed_to_departure", "date": "2035-06-14"}]'::jsonb, 'closed to departure on the departure day');
select is(private.quote_stay(:'flex', :'dbl', '2035-06-19', '2035-06-22', 2, 0) -> 'restrictions',
  '[{"code": "closed", "date": "2035-06-20"}]'::jsonb, 'a closed night inside the stay');
select is(private.quote_stay(:'prepaid', :'dbl', '2035-06-10', '2035-06-12', 2, 0) -> 'restrictions',
  '[{"code": "closed_to_arrival", "date": "2035-06-10"}]'::jsonb, 'a derived plan follows its base plan''s restrictions');

-- The days a plan sets, beside what every other day takes, and the same for a plan derived
-- from it: the days its base plan sets, 10 % off.
select results_eq(format($$select day, price, closed_to_arrival from private.rate_plan_calendar_days(array[%L]::uuid[],
                                 '2035-06-08', '2035-06-11') where rate_plan_id = %L order by day nulls first$$, :'flex', :'flex'),
  $$values (null::date, 10000::bigint, false), ('2035-06-08', 15000, false), ('2035-06-09', 15000, false),
           ('2035-06-10', 10000, true)$$, 'a plan''s defaults, then the days it sets');
select results_eq(format($$select day, price, closed_to_arrival from private.rate_plan_calendar_days(array[%L]::uuid[],
                                 '2035-06-08', '2035-06-11') order by day nulls first$$, :'prepaid'),
  $$values (null::date, 9000::bigint, false), ('2035-06-08', 13500, false), ('2035-06-09', 13500, false),
           ('2035-06-10', 9000, true)$$, 'a derived plan''s, from the days its base plan sets');

-- A derived plan's days set restrictions, not prices.
select throws_ok(format('insert into public.rate_plan_days (rate_plan_id, day, price) values (%L, ''2035-06-03'', 1)', :'prepaid'),
  '23514', 'a derived plan takes its prices from its base plan; set them there', 'a derived plan sets no price of its own');
select throws_ok(format('update public.rate_plans set derived_from_id = %L, derived_amount = -500 where id = %L', :'prepaid', :'flex'),
  '23514', null, 'a plan other plans derive from derives from none');

-- Reservations, as staff book them.
select tests.act_as('Alpha_staff', tests.fx('tenants'));
insert into public.reservations (property_id, rate_plan_id, guest_id, check_in, check_out, adults)
values (tests.fx('properties'), :'flex', tests.fx('guests'), '2035-06-01', '2035-06-04', 2) returning id as priced \gset
select results_eq(format('select room_type_id, total_amount, price_overridden from public.reservations where id = %L', :'priced'),
  format('values (%L::uuid, 40000::bigint, false)', :'dbl'),
  'a stay on a plan for one room type is of that type, priced from the calendar');
update public.reservations set check_out = '2035-06-05' where id = :'priced';
select is((select total_amount from public.reservations where id = :'priced'), 50000::bigint, 'a longer stay is priced again');
update public.reservations set adults = 3 where id = :'priced';
select is((select total_amount from public.reservations where id = :'priced'), 60000::bigint, 'a larger party is priced again');
update public.reservations set total_amount = 45000 where id = :'priced';
update public.reservations set check_out = '2035-06-04' where id = :'priced';
select results_eq(format('select total_amount, price_overridden from public.reservations where id = %L', :'priced'),
  $$values (45000::bigint, true)$$, 'a total the writer gave is kept when the stay changes');
update public.reservations set total_amount = null where id = :'priced';
select results_eq(format('select total_amount, price_overridden from public.reservations where id = %L', :'priced'),
  $$values (47500::bigint, false)$$, 'a total set to null is the calendar''s again');
select throws_ok(format('insert into public.reservations (property_id, rate_plan_id, guest_id, check_in, check_out) values (%L, %L, %L, ''2035-06-10'', ''2035-06-12'')',
    tests.fx('properties'), :'flex', tests.fx('guests')),
  'PT422', 'rate plan FLEX does not sell this stay: closed_to_arrival', 'a booking a restriction refuses is refused, naming it');
select lives_ok(format('insert into public.reservations (property_id, rate_plan_id, guest_id, check_in, check_out, total_amount) values (%L, %L, %L, ''2035-06-11'', ''2035-06-12'', 100)',
    tests.fx('properties'), :'flex', tests.fx('guests')),
  'a booking with its own total is kept as given');
select is((select total_amount from public.reservations where check_in = '2035-06-11' and rate_plan_id = :'flex'), 100::bigint,
  'with the total the writer gave');

-- Availability: per room type the rooms left on its fullest night, the units free on
-- every night, the plans that sell it; nothing of a property the caller cannot see.
select tests.act_as_operator();
create temp table beta as select tests.make_tenant('Beta') as fx;
grant select on beta to public;
select tests.act_as('Alpha_owner', tests.fx('tenants'));
insert into public.units (property_id, name, capacity, room_type_id) values (tests.fx('properties'), 'D2', 3, :'dbl') returning id as d2 \gset
create function pg_temp.double_in(arrival date, departure date) returns jsonb language sql as $$
  select t from jsonb_array_elements(private.availability(tests.fx('properties'), arrival, departure, 2, 0)::jsonb -> 'roomTypes') t
  where t ->> 'code' = 'DBL' $$;
select results_eq($$select (d ->> 'available')::int, d -> 'freeUnits' @> '[{"name": "D1"}, {"name": "D2"}]', jsonb_array_length(d -> 'ratePlans')
                    from pg_temp.double_in('2035-07-06', '2035-07-09') d$$,
  $$values (2, true, 3)$$, 'an empty double: both rooms left, both units free, each plan that sells it quoted (BAR, FLEX, PREPAID)');
insert into public.reservations (property_id, room_type_id, guest_id, check_in, check_out, total_amount)
values (tests.fx('properties'), :'dbl', tests.fx('guests'), '2035-07-07', '2035-07-08', 10000);
select is((pg_temp.double_in('2035-07-06', '2035-07-09') ->> 'available')::int, 1,
  'a stay without a unit takes a room on its night, and the fullest night counts');
insert into public.unit_blocks (unit_id, starts_on, ends_on, reason) values (:'d2', '2035-07-08', '2035-07-10', 'Repainting');
select results_eq($$select (d ->> 'available')::int, d -> 'freeUnits' from pg_temp.double_in('2035-07-06', '2035-07-09') d$$,
  $$values (1, '[{"name": "D1", "unitId": "$$ || (select id from public.units where name = 'D1' and room_type_id = :'dbl') || $$"}]'::jsonb)$$,
  'a blocked unit is not free, and counts out of its type on its nights');
insert into public.reservations (property_id, room_type_id, guest_id, check_in, check_out, total_amount)
values (tests.fx('properties'), :'dbl', tests.fx('guests'), '2035-07-08', '2035-07-09', 10000);
select is((pg_temp.double_in('2035-07-06', '2035-07-09') ->> 'available')::int, 0,
  'a night with one unit blocked and one stay held leaves no room');
select is(private.availability((select (fx ->> 'properties')::uuid from beta), '2035-07-06', '2035-07-09', 2, 0)::jsonb, null,
  'another tenant''s property has no availability to read');

-- The bulk writer: the days that exist are updated, the missing ones inserted, in order;
-- a weekday filter; null back to the default removes a day left empty; a derived plan's
-- price refused; a day written around it still stamped by the trigger.
select tests.act_as('Alpha_owner', tests.fx('tenants'));
select is(private.write_rate_calendar(jsonb_build_array(
    jsonb_build_object('plan', :'flex', 'from', '2035-09-01', 'to', '2035-09-07', 'isodays', '[1,2,3,4,5,6,7]'::jsonb,
                       'set', '{"price": 11000}'::jsonb),
    jsonb_build_object('plan', :'flex', 'from', '2035-09-05', 'to', '2035-09-10', 'isodays', '[1,2,3,4,5,6,7]'::jsonb,
                       'set', '{"min_stay": 2}'::jsonb))),
  13, 'seven days written, then six of which three existed: thirteen written, counted once per change');
select results_eq($$select day, price, min_stay from public.rate_plan_days where rate_plan_id = $$ || quote_literal(:'flex') ||
                    $$ and day between '2035-09-04' and '2035-09-08' order by day$$,
  $$values ('2035-09-04'::date, 11000::bigint, null::integer), ('2035-09-05', 11000, 2), ('2035-09-06', 11000, 2),
           ('2035-09-07', 11000, 2), ('2035-09-08', null, 2)$$,
  'a later change adds its field to the days an earlier one wrote, and leaves the other fields');
select is(private.write_rate_calendar(jsonb_build_array(
    jsonb_build_object('plan', :'flex', 'from', '2035-09-01', 'to', '2035-09-30', 'isodays', '[6,7]'::jsonb,
                       'set', '{"closed": true}'::jsonb))),
  10, 'only the chosen days of the week: the ten Saturdays and Sundays of September 2035');
select is((select count(*)::int from public.rate_plan_days where rate_plan_id = :'flex' and closed and day >= '2035-09-01'
           and extract(isodow from day) not in (6, 7)), 0, 'no other day of the week is closed');
select private.write_rate_calendar(jsonb_build_array(
  jsonb_build_object('plan', :'flex', 'from', '2035-09-08', 'to', '2035-09-10', 'isodays', '[1,2,3,4,5,6,7]'::jsonb,
                     'set', '{"min_stay": null, "closed": null}'::jsonb)));
select is((select array_agg(day order by day) from public.rate_plan_days where rate_plan_id = :'flex'
           and day between '2035-09-08' and '2035-09-10'), null::date[],
  'days taken back to the defaults in every field are removed');
select throws_ok(format($$select private.write_rate_calendar('[{"plan": "%s", "from": "2035-09-01", "to": "2035-09-02",
    "isodays": [1,2,3,4,5,6,7], "set": {"price": 1}}]')$$, :'prepaid'),
  '23514', null, 'a derived plan''s days take no price, written in bulk as any other way');
update public.rate_plan_days set min_stay = 3, updated_at = '2000-01-01' where rate_plan_id = :'flex' and day = '2035-09-05';
select is((select updated_at from public.rate_plan_days where rate_plan_id = :'flex' and day = '2035-09-05'), now(),
  'a writer that sets another updated_at is stamped with now() all the same');

select * from finish();
rollback;
