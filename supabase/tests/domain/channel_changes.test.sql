-- The log of what channels mirror (public.ari_changes): written by triggers whoever writes,
-- one row per transaction and subject, widened to every day the transaction touched;
-- derived plans follow their base; read by a key as far as its properties and scopes go.
begin;
\ir ../helpers/setup.psql
select plan(14);

grant usage on schema extensions to api_integration;

select tests.use_fixture(tests.make_tenant('Alpha')) as fx \gset
select tests.act_as_operator();
-- This test runs in one transaction: what the fixture wrote is this transaction's too.
delete from public.ari_changes;

insert into public.rate_plans (tenant_id, property_id, name, code, currency, nightly_price, derived_from_id, derived_percent)
  values (tests.fx('tenants'), tests.fx('properties'), 'Non-refundable', 'NRF', 'EUR', 10800, tests.fx('rate_plans'), -10)
  returning id as derived \gset
select results_eq($$select kind, subject_id, first_day, last_day from public.ari_changes order by id$$,
  format($$values ('rates'::text, %L::uuid, null::date, null::date)$$, :'derived'), 'a new plan changes every day of it');

-- Two statements on a plan's days in one transaction: one change, widened, for it and the plan derived from it.
insert into public.rate_plan_days (tenant_id, rate_plan_id, day, price)
  select tests.fx('tenants'), tests.fx('rate_plans'), d::date, 13000 from generate_series(date '2032-01-01', date '2032-12-30', '1 day') d;
update public.rate_plan_days set closed = true where rate_plan_id = tests.fx('rate_plans') and day = date '2031-02-06';
select results_eq($$select subject_id, first_day, last_day from public.ari_changes where kind = 'rates' order by subject_id$$,
  format($$select * from (values (%L::uuid, null::date, null::date), (%L::uuid, date '2031-02-06', date '2032-12-30')) v
           order by 1$$, :'derived', tests.fx('rate_plans')),
  'a year of days and one more are one change per plan; the derived plan''s every-day change stays every day');
select is((select count(*)::integer from public.ari_changes where kind = 'rates' and subject_id = tests.fx('rate_plans')), 1,
  'one row for the base plan');

-- A plan's defaults changed: every day. A change that touches nothing it sells: nothing.
delete from public.ari_changes;
update public.rate_plans set name = 'Renamed' where id = tests.fx('rate_plans');
select is((select count(*)::integer from public.ari_changes), 0, 'a renamed plan changes no rates');
update public.rate_plans set min_stay = 2 where id = tests.fx('rate_plans');
select is((select count(*)::integer from public.ari_changes where first_day is null), 2,
  'a plan''s default changes every day of it and of the plan derived from it');

-- A stay: its nights of its type, and itself; moved, the old and the new nights in one change.
delete from public.ari_changes;
update public.reservations set check_out = date '2030-06-06' where id = tests.fx('reservations');
select results_eq($$select kind, first_day, last_day from public.ari_changes order by id$$,
  $$values ('availability'::text, date '2030-06-01', date '2030-06-05'), ('reservation', date '2030-06-01', date '2030-06-05')$$,
  'a stay moved changes its type''s old and new nights, and itself');
select is((select subject_id from public.ari_changes where kind = 'availability'), tests.fx('room_types'), 'of its room type');
delete from public.ari_changes;
update public.reservations set notes = 'Late' where id = tests.fx('reservations');
select results_eq($$select kind from public.ari_changes$$, $$values ('reservation'::text)$$,
  'a note changes the stay and no availability');

-- A block, and a unit leaving service.
delete from public.ari_changes;
update public.unit_blocks set ends_on = date '2031-03-05' where id = tests.fx('unit_blocks');
select results_eq($$select kind, first_day, last_day from public.ari_changes$$,
  $$values ('availability'::text, date '2031-03-01', date '2031-03-04')$$, 'a block lengthened: its old and new nights');
delete from public.ari_changes;
update public.units set status = 'out_of_service' where id = tests.fx('unit2');
select results_eq($$select kind, first_day, last_day from public.ari_changes$$,
  $$values ('availability'::text, null::date, null::date)$$, 'a unit out of service: every night of its type');

-- Deleted with its property, a change goes with it; its rows' deletes record nothing.
select lives_ok(format($$delete from public.tenants where id = %L$$, tests.fx('tenants')), 'the tenant and its log go');
select is((select count(*)::integer from public.ari_changes), 0, 'nothing is left of it');

-- Read by a key: its property's, and reservations only with a scope that reads them.
select tests.make_tenant('Beta') as beta \gset
select tests.act_as('Beta_admin', (:'beta'::jsonb ->> 'tenants')::uuid);
select tests.issue_key('aaaaaaaaaaaaaaaa', 'ari', array[(:'beta'::jsonb ->> 'properties')::uuid], '{ari:read}');
select tests.act_as_operator();
update public.reservations set notes = 'x' where id = (:'beta'::jsonb ->> 'reservations')::uuid;
update public.units set status = 'out_of_service' where id = (:'beta'::jsonb ->> 'unit2')::uuid;
select tests.act_as_key('aaaaaaaaaaaaaaaa', 'ari');
select ok((select count(*) > 0 and bool_and(kind <> 'reservation') from public.ari_changes),
  'a key with ari:read reads availability and rates, not reservations');
select tests.act_as('Beta_staff', (:'beta'::jsonb ->> 'tenants')::uuid);
select throws_ok($$select count(*) from public.ari_changes$$, '42501', null, 'members have no read of the log');

select * from finish();
rollback;
