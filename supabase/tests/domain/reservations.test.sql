-- The reservation lifecycle and the rules of a stay, as a staff member sees them.
begin;
\ir ../helpers/setup.psql
select plan(66);

select tests.use_fixture(tests.make_tenant('Alpha')) as fx \gset

-- A fresh reservation walked to `status`, each on its own dates in unit 102.
create sequence tests.stay_seq;
grant usage on sequence tests.stay_seq to public;
create function tests.reservation_in(status text) returns uuid
language plpgsql as $$
declare
  arrival date := date '2032-01-01' + 3 * nextval('tests.stay_seq')::int;
  rid uuid;
  step text;
begin
  insert into public.reservations (property_id, unit_id, guest_id, check_in, check_out, total_amount)
  values (tests.fx('properties'), tests.fx('unit2'), tests.fx('guests'), arrival, arrival + 2, 20000)
  returning id into rid;
  foreach step in array case status
    when 'confirmed' then array['confirmed']
    when 'checked_in' then array['confirmed', 'checked_in']
    when 'checked_out' then array['confirmed', 'checked_in', 'checked_out']
    when 'cancelled' then array['cancelled']
    when 'no_show' then array['confirmed', 'no_show']
    else array[]::text[] end
  loop
    update public.reservations set status = step where id = rid;
  end loop;
  return rid;
end
$$;

select tests.act_as('Alpha_staff', tests.fx('tenants'));

-- Every pair of statuses: the six lifecycle steps pass, the other 24 fail clearly.
select is(tests.error_of(format('update public.reservations set status = %L where id = %L', target, tests.reservation_in(origin))),
          case when (origin, target) in (('pending', 'confirmed'), ('pending', 'cancelled'), ('confirmed', 'checked_in'),
                                         ('confirmed', 'cancelled'), ('confirmed', 'no_show'), ('checked_in', 'checked_out'))
               then null else 'PT409' end,
          format('%s -> %s is %s', origin, target,
                 case when (origin, target) in (('pending', 'confirmed'), ('pending', 'cancelled'), ('confirmed', 'checked_in'),
                                                ('confirmed', 'cancelled'), ('confirmed', 'no_show'), ('checked_in', 'checked_out'))
                      then 'allowed' else 'refused' end))
from unnest(array['pending', 'confirmed', 'checked_in', 'checked_out', 'cancelled', 'no_show']) as origin,
     unnest(array['pending', 'confirmed', 'checked_in', 'checked_out', 'cancelled', 'no_show']) as target
where origin <> target;

select throws_ok(format('update public.reservations set status = ''checked_in'' where id = %L', tests.reservation_in('pending')),
  'PT409', 'a pending reservation cannot become checked_in', 'a refused step names both statuses');
select throws_ok(format('insert into public.reservations (property_id, guest_id, check_in, check_out, status) values (%L, %L, ''2033-01-01'', ''2033-01-02'', ''checked_in'')',
  tests.fx('properties'), tests.fx('guests')), '23514', 'a reservation starts as pending or confirmed, not checked_in',
  'a reservation cannot be created past the start of its lifecycle');

select tests.reservation_in('checked_out') as done_id \gset
select isnt((select checked_in_at from public.reservations where id = :'done_id'), null, 'checking in stamps checked_in_at');
select isnt((select checked_out_at from public.reservations where id = :'done_id'), null, 'checking out stamps checked_out_at');
select tests.reservation_in('cancelled') as cancelled_id \gset
select isnt((select cancelled_at from public.reservations where id = :'cancelled_id'), null,
  'cancelling stamps cancelled_at');
select throws_ok(format('update public.reservations set check_out = check_out + 1 where id = %L', :'done_id'), 'PT409',
  'a checked_out reservation can no longer change its stay or price', 'a finished stay cannot be moved');
select lives_ok(format('update public.reservations set notes = ''Left an umbrella'' where id = %L', :'done_id'),
  'a finished stay still takes notes');

-- Checking out leaves a cleaning task for the unit, due at the next check-in time.
select results_eq(format($$select type, status, unit_id, property_id, title like 'Clean 102 after %%', due_at
                          from public.tasks where reservation_id = %L$$, :'done_id'),
  format($$values ('cleaning', 'open', %L::uuid, %L::uuid, true,
                   ((select check_out from public.reservations where id = %L) + time '15:00') at time zone 'Europe/Lisbon')$$,
         tests.fx('unit2'), tests.fx('properties'), :'done_id'),
  'checking out creates one open cleaning task for the unit, due at the property''s check-in time');
select is((select count(*) from public.tasks where reservation_id = :'cancelled_id'), 0::bigint,
  'cancelling creates no cleaning task');

-- No double booking, enforced by the exclusion constraint.
insert into public.reservations (property_id, unit_id, guest_id, check_in, check_out)
values (tests.fx('properties'), tests.fx('units'), tests.fx('guests'), '2034-05-10', '2034-05-14')
returning id as first_id \gset
select throws_ok(format('insert into public.reservations (property_id, unit_id, guest_id, check_in, check_out) values (%L, %L, %L, ''2034-05-13'', ''2034-05-15'')',
  tests.fx('properties'), tests.fx('units'), tests.fx('guests')), '23P01', null,
  'an overlapping stay on the same unit is refused');
select throws_ok(format('insert into public.reservations (property_id, unit_id, guest_id, check_in, check_out) values (%L, %L, %L, ''2034-05-11'', ''2034-05-12'')',
  tests.fx('properties'), tests.fx('units'), tests.fx('guests')), '23P01', null,
  'a stay inside another on the same unit is refused');
select lives_ok(format('insert into public.reservations (property_id, unit_id, guest_id, check_in, check_out) values (%L, %L, %L, ''2034-05-14'', ''2034-05-16'')',
  tests.fx('properties'), tests.fx('units'), tests.fx('guests')),
  'arriving on the day the previous guest leaves is fine');
select lives_ok(format('insert into public.reservations (property_id, unit_id, guest_id, check_in, check_out) values (%L, %L, %L, ''2034-05-10'', ''2034-05-14'')',
  tests.fx('properties'), tests.fx('unit2'), tests.fx('guests')),
  'the same dates on another unit are fine');
select throws_ok(format('update public.reservations set check_in = ''2034-05-09'', check_out = ''2034-05-15'' where check_in = ''2034-05-14'' and unit_id = %L',
  tests.fx('units')), '23P01', null, 'moving a stay onto another is refused');
update public.reservations set status = 'cancelled', cancellation_reason = 'Plans changed' where id = :'first_id';
select lives_ok(format('insert into public.reservations (property_id, unit_id, guest_id, check_in, check_out) values (%L, %L, %L, ''2034-05-11'', ''2034-05-13'')',
  tests.fx('properties'), tests.fx('units'), tests.fx('guests')),
  'a cancelled stay frees its dates');
select throws_ok(format('update public.reservations set status = ''pending'' where id = %L', :'first_id'), 'PT409', null,
  'and cannot come back to block them');
select lives_ok(format($$insert into public.reservations (property_id, guest_id, check_in, check_out) values (%L, %L, '2034-05-11', '2034-05-13'),
  (%L, %L, '2034-05-11', '2034-05-13')$$, tests.fx('properties'), tests.fx('guests'), tests.fx('properties'), tests.fx('guests')),
  'stays not yet assigned to a unit do not block each other');

-- The rules of a stay.
select throws_ok(format('insert into public.reservations (property_id, guest_id, check_in, check_out) values (%L, %L, ''2035-01-05'', ''2035-01-05'')',
  tests.fx('properties'), tests.fx('guests')), '23514', null, 'check-out must be after check-in');
select throws_ok(format('insert into public.reservations (property_id, unit_id, guest_id, check_in, check_out, adults, children) values (%L, %L, %L, ''2035-02-01'', ''2035-02-03'', 2, 1)',
  tests.fx('properties'), tests.fx('units'), tests.fx('guests')), '23514', 'the unit sleeps 2, not 3',
  'a party larger than the unit is refused');
insert into public.reservations (property_id, guest_id, check_in, check_out, status)
values (tests.fx('properties'), tests.fx('guests'), '2035-03-01', '2035-03-03', 'confirmed') returning id as unassigned_id \gset
select throws_ok(format('update public.reservations set status = ''checked_in'' where id = %L', :'unassigned_id'), '23514',
  'assign a unit before checking in', 'checking in needs a unit');
select tests.act_as_operator();
update public.rate_plans set min_stay = 2, max_stay = 7 where id = tests.fx('rate_plans');
select tests.act_as('Alpha_staff', tests.fx('tenants'));
select throws_ok(format('insert into public.reservations (property_id, guest_id, rate_plan_id, check_in, check_out) values (%L, %L, %L, ''2035-04-01'', ''2035-04-02'')',
  tests.fx('properties'), tests.fx('guests'), tests.fx('rate_plans')), 'PT422', 'rate plan BAR does not sell this stay: min_stay',
  'a stay shorter than the rate plan''s minimum is refused');
select throws_ok(format('insert into public.reservations (property_id, guest_id, rate_plan_id, check_in, check_out, currency) values (%L, %L, %L, ''2035-04-01'', ''2035-04-04'', ''USD'')',
  tests.fx('properties'), tests.fx('guests'), tests.fx('rate_plans')), '23514', 'rate plan BAR is priced in currency EUR, not USD',
  'a reservation on a rate plan is in the rate plan''s currency');
insert into public.reservations (property_id, guest_id, check_in, check_out)
values (tests.fx('properties'), tests.fx('guests'), '2035-05-01', '2035-05-02') returning id as plain_id, currency as plain_currency \gset
select is(:'plain_currency'::text, 'EUR', 'without a rate plan, a reservation takes the property''s currency');

-- Confirmation codes and derived money.
select matches((select confirmation_code from public.reservations where id = :'plain_id'), '^[2-9A-HJKMNP-Z]{8}$',
  'the confirmation code is 8 unambiguous characters');
select is((select count(distinct confirmation_code) = count(*) from public.reservations), true,
  'confirmation codes are unique in the tenant');
-- Codes come from random(), so the same seed before two inserts makes the second draw
-- the first one's code, which it must draw again rather than fail on the unique key.
select setseed(0.42);
insert into public.reservations (property_id, guest_id, check_in, check_out)
values (tests.fx('properties'), tests.fx('guests'), '2035-06-01', '2035-06-02') returning confirmation_code as seeded_code \gset
select setseed(0.42);
select is((array(select private.random_code(8) from generate_series(1, 2)))[2],
  :'seeded_code', 'the seed replays the code the first insert drew after the column default');
select setseed(0.42);
select lives_ok(format($$insert into public.reservations (property_id, guest_id, check_in, check_out) values (%L, %L, '2035-06-05', '2035-06-06')$$,
  tests.fx('properties'), tests.fx('guests')), 'a reservation whose first code is taken is still created');
select isnt((select confirmation_code from public.reservations where check_in = '2035-06-05'), :'seeded_code',
  'and draws another confirmation code');
select throws_ok(format('update public.reservations set confirmation_code = ''AAAAAAAA'' where id = %L', :'plain_id'), '42501',
  'confirmation_code cannot change', 'a confirmation code cannot be changed');
select throws_ok(format('update public.reservations set amount_paid = 99999 where id = %L', :'plain_id'), '42501',
  'amount_paid is derived from payments and cannot be set', 'amount_paid cannot be written directly');
select results_eq(format('select total_amount, amount_paid, balance from public.reservations where id = %L', tests.fx('reservations')),
  $$values (36000::bigint, 5000::bigint, 31000::bigint)$$, 'amount paid and balance follow the recorded payments');
select tests.act_as_operator();
set local session_replication_role = replica;
update public.reservations set updated_at = '2000-01-01' where id = :'plain_id';
set local session_replication_role = origin;
select tests.act_as('Alpha_staff', tests.fx('tenants'));
update public.reservations set notes = 'Late arrival' where id = :'plain_id';
select is((select updated_at from public.reservations where id = :'plain_id'), now(), 'an update stamps updated_at');

-- The stay's own rules come first, in words, with or without a rate plan.
select throws_ok(format('update public.reservations set check_out = check_in - 1 where id = %L', :'plain_id'), '23514',
  null, 'check-out before check-in is refused before the stay range is built');
select throws_ok(format('update public.reservations set check_out = check_in + 366 where id = %L', :'plain_id'), '23514',
  'a stay is at most 365 nights, not 366', 'a stay is at most 365 nights');
update public.reservations set unit_id = tests.fx('unit2'), status = 'confirmed' where id = :'plain_id';
update public.reservations set status = 'checked_in' where id = :'plain_id';
select throws_ok(format('update public.reservations set check_in = check_in - 1 where id = %L', :'plain_id'), 'PT409',
  'a checked_in reservation cannot move its arrival date', 'a guest who has arrived keeps the arrival date');
select lives_ok(format('update public.reservations set check_out = check_out + 1 where id = %L', :'plain_id'),
  'a guest who has arrived may stay longer');

select * from finish();
rollback;
