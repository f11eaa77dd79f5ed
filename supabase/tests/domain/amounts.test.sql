-- The maxima of amounts: a nightly price is at most 10^9 minor units, any other single
-- amount at most 10^12, and the payments of one reservation add up to at most 10^12, so
-- no amount or sum the schema keeps passes what a client reads as a number (2^53 - 1).
-- Each is a named check, and exactly the maximum is taken.
begin;
\ir ../helpers/setup.psql
select plan(16);

select tests.use_fixture(tests.make_tenant('Alpha')) as fx \gset
select tests.act_as('Alpha_admin', tests.fx('tenants'));

-- Rate plans.
select lives_ok(format('update public.rate_plans set nightly_price = 1000000000 where id = %L', tests.fx('rate_plans')),
  'a nightly price of 10^9 is taken');
select throws_ok(format('update public.rate_plans set nightly_price = 1000000001 where id = %L', tests.fx('rate_plans')),
  '23514', 'new row for relation "rate_plans" violates check constraint "rate_plans_nightly_price_within_maximum"',
  'a nightly price of 10^9 + 1 is refused by its rule');

-- A reservation's total: 365 nights at the most a night costs fit with room to spare.
select lives_ok(format('update public.reservations set check_in = %L, check_out = %L, total_amount = 365 * 1000000000::bigint where id = %L',
  '2030-06-01', '2031-06-01', tests.fx('reservations')), '365 nights at the maximum nightly price is a total within the maximum');
select lives_ok(format('update public.reservations set total_amount = 1000000000000 where id = %L', tests.fx('reservations')),
  'a total of 10^12 is taken');
select throws_ok(format('update public.reservations set total_amount = 1000000000001 where id = %L', tests.fx('reservations')),
  '23514', 'new row for relation "reservations" violates check constraint "reservations_total_amount_within_maximum"',
  'a total of 10^12 + 1 is refused by its rule');

-- Payment links.
select lives_ok(format('insert into public.payment_links (reservation_id, amount) values (%L, 1000000000000)', tests.fx('reservations')),
  'a payment link of 10^12 is taken');
select throws_ok(format('insert into public.payment_links (reservation_id, amount) values (%L, 1000000000001)', tests.fx('reservations')),
  '23514', 'new row for relation "payment_links" violates check constraint "payment_links_amount_within_maximum"',
  'a payment link of 10^12 + 1 is refused by its rule');

-- One payment: the fixture's reservation has 5,000 paid already.
select throws_ok(format('insert into public.payments (reservation_id, amount) values (%L, 1000000000001)', tests.fx('reservations')),
  '23514', 'new row for relation "payments" violates check constraint "payments_amount_within_maximum"',
  'a payment of 10^12 + 1 is refused by its rule');

-- What one reservation's payments add up to.
select lives_ok(format('insert into public.payments (reservation_id, amount) values (%L, 1000000000000 - 5000 - 1)', tests.fx('reservations')),
  'payments adding up to 10^12 - 1 are taken');
select lives_ok(format('insert into public.payments (reservation_id, amount, method) values (%L, 1, ''cash'')', tests.fx('reservations')),
  'and one more up to exactly 10^12');
select results_eq(format('select amount_paid, balance from public.reservations where id = %L', tests.fx('reservations')),
  $$values (1000000000000::bigint, 0::bigint)$$, 'amount_paid is 10^12 and the balance 0');
select throws_ok(format('insert into public.payments (reservation_id, amount) values (%L, 1)', tests.fx('reservations')),
  '23514', 'new row for relation "reservations" violates check constraint "reservations_amount_paid_within_maximum"',
  'a payment past 10^12 in all is refused by the reservation''s rule');
select throws_ok(format('insert into public.payments (reservation_id, amount, source, external_reference) values (%L, 1000000000000, ''external'', ''psp-far'')',
  tests.fx('reservations')), '23514',
  'new row for relation "reservations" violates check constraint "reservations_amount_paid_within_maximum"',
  'an external payment too');
select results_eq(format('select amount_paid, balance, (select count(*) from public.payments p where p.reservation_id = r.id) from public.reservations r where id = %L',
  tests.fx('reservations')), $$values (1000000000000::bigint, 0::bigint, 3::bigint)$$, 'and nothing of either is kept');
-- A lower total leaves the paid sum where it is: a negative balance is an overpayment, at most 10^12.
select lives_ok(format('update public.reservations set total_amount = 0 where id = %L', tests.fx('reservations')),
  'a total lowered below what was paid is taken');
select is((select balance from public.reservations where id = tests.fx('reservations')), -1000000000000::bigint,
  'and the balance is at least -10^12');

select * from finish();
rollback;
