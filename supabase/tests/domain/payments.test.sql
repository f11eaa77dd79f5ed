-- Payments, payment links, and the reservation totals they drive.
begin;
\ir ../helpers/setup.psql
select plan(24);

select tests.use_fixture(tests.make_tenant('Alpha')) as fx \gset
select tests.make_tenant('Beta') as fx_beta \gset
update public.tenants set payment_page_base_url = 'https://pay.alpha.example/p/' where id = tests.fx('tenants');

select tests.act_as('Alpha_staff', tests.fx('tenants'));

-- Recording money.
insert into public.payments (reservation_id, amount, method) values (tests.fx('reservations'), 6000, 'card')
  returning id as card_id, currency as card_currency \gset
select is(:'card_currency'::text, 'EUR', 'a payment takes the reservation''s currency');
select results_eq(format('select amount_paid, balance from public.reservations where id = %L', tests.fx('reservations')),
  $$values (11000::bigint, 25000::bigint)$$, 'a payment raises amount_paid and lowers the balance');
select throws_ok(format('insert into public.payments (reservation_id, amount, currency) values (%L, 100, ''USD'')', tests.fx('reservations')),
  '23503', null, 'a payment in another currency than the reservation''s is refused');
select throws_ok(format('insert into public.payments (reservation_id, amount) values (%L, 0)', tests.fx('reservations')),
  '23514', null, 'a payment amount must be positive');
select throws_ok(format('insert into public.payments (reservation_id, amount, source) values (%L, 100, ''external'')', tests.fx('reservations')),
  '23514', null, 'an external payment needs its external reference');
select throws_ok(format('update public.payments set amount = 1 where id = %L', :'card_id'), 'PT409',
  'a payment cannot be edited; void it and record another', 'a payment cannot be edited');
select lives_ok(format('update public.payments set notes = ''Paid at the desk'' where id = %L', :'card_id'), 'a payment''s notes can be edited');
select throws_ok(format('update public.reservations set currency = ''USD'' where id = %L', tests.fx('reservations')), '23503', null,
  'a reservation with payments cannot change currency');

-- One payment per external reference in a tenant, so a retried call records once.
insert into public.payments (reservation_id, amount, source, external_reference) values (tests.fx('reservations'), 1000, 'external', 'psp_123');
select throws_ok(format('insert into public.payments (reservation_id, amount, source, external_reference) values (%L, 1000, ''external'', ''psp_123'')',
  tests.fx('reservations')), '23505', null, 'a second payment with the same external reference is refused');
select tests.act_as('Beta_staff', (:'fx_beta'::jsonb ->> 'tenants')::uuid);
select lives_ok(format('insert into public.payments (reservation_id, amount, source, external_reference) values (%L, 1000, ''external'', ''psp_123'')',
  :'fx_beta'::jsonb ->> 'reservations'), 'another tenant may use the same external reference');

-- Voiding is for managers, and gives the money back to the balance.
select tests.act_as('Alpha_admin', tests.fx('tenants'));
delete from public.payments where id = :'card_id';
select results_eq(format('select amount_paid, balance from public.reservations where id = %L', tests.fx('reservations')),
  $$values (6000::bigint, 30000::bigint)$$, 'voiding a payment takes it off amount_paid');

-- Payment links.
select tests.act_as('Alpha_staff', tests.fx('tenants'));
insert into public.payment_links (reservation_id, amount, token) values (tests.fx('reservations'), 30000, 'chosen-by-client')
  returning id as link_id, token, url, currency as link_currency, status as link_status, expires_at \gset
select matches(:'token'::text, '^[A-Za-z0-9_-]{32}$', 'a link''s token is 32 url-safe random characters, never the client''s');
select is(:'url'::text, 'https://pay.alpha.example/p/' || :'token', 'a link''s url is the tenant''s payment page and its token');
select results_eq(format('select currency, status, expires_at from public.payment_links where id = %L', :'link_id'),
  $$values ('EUR', 'active', now() + interval '7 days')$$, 'a link is active, in the reservation''s currency, for 7 days');
select throws_ok(format('insert into public.payments (reservation_id, payment_link_id, amount, source) values (%L, %L, 100, ''payment_link'')',
  tests.fx('reservations'), :'link_id'), '23514', null, 'a link is paid in its full amount');
insert into public.payments (reservation_id, payment_link_id, amount, source) values (tests.fx('reservations'), :'link_id', 30000, 'payment_link');
select results_eq(format('select status, paid_at is not null from public.payment_links where id = %L', :'link_id'),
  $$values ('paid', true)$$, 'paying through a link marks it paid');
select is((select balance from public.reservations where id = tests.fx('reservations')), 0::bigint, 'and settles the balance');
select throws_ok(format('insert into public.payments (reservation_id, payment_link_id, amount, source) values (%L, %L, 30000, ''payment_link'')',
  tests.fx('reservations'), :'link_id'), 'PT409', format('payment link %s is paid', :'link_id'), 'a paid link takes no second payment');
select throws_ok(format('update public.payment_links set status = ''active'' where id = %L', :'link_id'), 'PT409',
  'a paid payment link can no longer change', 'a paid link stays paid');

insert into public.payment_links (reservation_id, amount, expires_at) values (tests.fx('reservations'), 500, now() + interval '1 second')
  returning id as short_link \gset
select tests.act_as_operator();
set local session_replication_role = replica;
update public.payment_links set created_at = now() - interval '8 days', expires_at = now() - interval '1 minute' where id = :'short_link';
set local session_replication_role = origin;
select tests.act_as('Alpha_staff', tests.fx('tenants'));
select throws_ok(format('insert into public.payments (reservation_id, payment_link_id, amount, source) values (%L, %L, 500, ''payment_link'')',
  tests.fx('reservations'), :'short_link'), 'PT409', format('payment link %s is expired', :'short_link'),
  'an expired link takes no payment');
select throws_ok(format('update public.payment_links set amount = 1 where id = %L', :'short_link'), 'PT409', null,
  'a link''s amount cannot change');
select lives_ok(format('update public.payment_links set status = ''cancelled'' where id = %L', :'short_link'), 'an active link can be cancelled');
select throws_ok(format('update public.payment_links set status = ''cancelled'' where id = %L', :'short_link'), 'PT409',
  'a cancelled payment link can no longer change', 'cancelling a cancelled link again is refused');
select throws_ok(format('insert into public.payments (reservation_id, payment_link_id, amount, source) values (%L, %L, 500, ''manual'')',
  tests.fx('reservations'), tests.fx('payment_links')), '23514', null, 'a payment names a link only when it came through one');

select * from finish();
rollback;
