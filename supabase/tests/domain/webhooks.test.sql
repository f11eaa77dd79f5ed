-- Outbound webhooks in the database: managers alone see and manage subscriptions, never
-- reading a secret but through the definer functions; every change that makes an event
-- records it with one delivery and one job per matching subscription, in its own
-- transaction, or nothing when no subscription wants it; filters by type and property
-- hold; nothing crosses tenants.
begin;
\ir ../helpers/setup.psql
select plan(36);

select tests.use_fixture(tests.make_tenant('Alpha')) as fx \gset
select tests.make_tenant('Beta') as beta \gset
select (:'beta'::jsonb ->> 'tenants')::uuid as beta_tenant, (:'beta'::jsonb ->> 'reservations')::uuid as beta_stay \gset
select tests.fx('tenants') as alpha_tenant, tests.fx('properties') as alpha_property, tests.fx('reservations') as alpha_stay,
       tests.fx('guests') as alpha_guest, tests.fx('tasks') as alpha_task, tests.fx('access_codes') as alpha_code \gset

-- Alpha's jobs only: the queue is shared with whatever else ran on this database.
create function tests.jobs() returns bigint language sql security definer set search_path = ''
as $$ select count(*) from pgmq.q_webhooks where message ->> 'tenantId' = (select (fx ->> 'tenants') from tests.fixture) $$;
create function tests.events(event_type text) returns bigint language sql security definer set search_path = ''
as $$ select count(*) from public.webhook_events e
      where e.type = event_type and e.tenant_id = (select (fx ->> 'tenants')::uuid from tests.fixture) $$;
create function tests.last_event(event_type text) returns jsonb language sql security definer set search_path = ''
as $$ select e.data from public.webhook_events e
      where e.type = event_type and e.tenant_id = (select (fx ->> 'tenants')::uuid from tests.fixture)
      order by e.occurred_at desc, e.id desc limit 1 $$;

-- ---------------------------------------------------------------- no subscription, no event

select tests.act_as('Alpha_owner', :'alpha_tenant');
update public.reservations set notes = 'late arrival' where id = :'alpha_stay';
select tests.act_as_operator();
select is(tests.events('reservation.updated'), 0::bigint, 'without a subscription a change records no event');
select is(tests.jobs(), 0::bigint, 'and queues no job');

-- ---------------------------------------------------------------- managing subscriptions

select tests.act_as('Alpha_admin', :'alpha_tenant');
select lives_ok($$insert into public.webhook_subscriptions (url, description) values ('https://hooks.example.com/all', 'everything')$$,
  'an admin subscribes an endpoint to every event');
select id as all_hooks from public.webhook_subscriptions where url = 'https://hooks.example.com/all' \gset
select throws_ok('select secret from public.webhook_subscriptions', '42501', null, 'the secret is not a column a member reads');
select matches(private.webhook_subscription_secret(:'all_hooks'), '^whsec_[A-Za-z0-9+/]{43}=$',
  'the definer function shows it to a manager, as Standard Webhooks writes secrets');
select private.webhook_subscription_secret(:'all_hooks') as first_secret \gset
select isnt(private.rotate_webhook_secret(:'all_hooks'), :'first_secret', 'a rotation makes a new secret');
select ok((select previous_secret_expires_at between now() + interval '23 hours' and now() + interval '25 hours'
           from public.webhook_subscriptions where id = :'all_hooks'), 'the old one signs beside it for a day');
select throws_ok(format($$select private.rotate_webhook_secret(%L, interval '8 days')$$, :'all_hooks'), '22023', null,
  'an overlap beyond a week is refused');
select throws_ok($$insert into public.webhook_subscriptions (url, event_types) values ('https://x.example.com', '{reservation.paid}')$$,
  '23514', null, 'an unknown event type is refused');
select throws_ok(format($$insert into public.webhook_subscriptions (url, property_ids) values ('https://x.example.com', '{%s}')$$,
  (:'beta'::jsonb ->> 'properties')), '23503', null, 'another tenant''s property is refused');
select throws_ok($$insert into public.webhook_subscriptions (url) values ('ftp://files.example.com')$$, '23514', null,
  'a URL that is not http(s) is refused');
select lives_ok(format($$insert into public.webhook_subscriptions (url, event_types, property_ids)
  values ('https://hooks.example.com/checkins', '{reservation.checked_in}', '{%s}')$$, :'alpha_property'),
  'a subscription limited to one type and one property');
select id as checkin_hooks from public.webhook_subscriptions where url = 'https://hooks.example.com/checkins' \gset

select tests.act_as('Alpha_staff', :'alpha_tenant');
select is((select count(*) from public.webhook_subscriptions), 0::bigint, 'staff see no subscriptions');
select throws_ok($$insert into public.webhook_subscriptions (url) values ('https://staff.example.com')$$, '42501', null,
  'nor create one');
select throws_ok(format('select private.webhook_subscription_secret(%L)', :'all_hooks'), '42501', null, 'nor read a secret');
select tests.act_as('Beta_owner', :'beta_tenant');
select is((select count(*) from public.webhook_subscriptions), 0::bigint, 'another tenant''s owner sees none of them');
select is(private.rotate_webhook_secret(:'all_hooks'), null, 'nor rotates one');
select is(private.send_webhook_test(:'all_hooks'), null, 'nor tests one');

-- ---------------------------------------------------------------- events

select tests.act_as('Alpha_owner', :'alpha_tenant');
update public.reservations set notes = 'early arrival', adults = 2 where id = :'alpha_stay';
select tests.act_as_operator();
select is(tests.events('reservation.updated'), 1::bigint, 'a change to a stay records reservation.updated');
select is(tests.last_event('reservation.updated') -> 'changedFields', '["adults", "notes"]'::jsonb,
  'naming the fields that changed, as the API names them');
select is(tests.last_event('reservation.updated') #>> '{reservation,notes}', 'early arrival',
  'with the reservation as it is after the change');
select ok(not (tests.last_event('reservation.updated') -> 'reservation' ?| array['tenantId', 'tenant_id', 'stay', 'createdBy']),
  'and without the columns the API does not show');
select is(tests.jobs(), 1::bigint, 'one job: only the subscription to every event wants it');

select tests.act_as('Alpha_owner', :'alpha_tenant');
update public.reservations set status = 'checked_in' where id = :'alpha_stay';
select tests.act_as_operator();
select is(tests.events('reservation.checked_in'), 1::bigint, 'a check-in records reservation.checked_in');
select is((select count(*) from public.webhook_deliveries d join public.webhook_events e on e.tenant_id = d.tenant_id and e.id = d.event_id
           where e.type = 'reservation.checked_in'), 2::bigint, 'delivered to both subscriptions');
select ok((select bool_and(d.sequence > p.sequence) from public.webhook_deliveries d
           join public.webhook_events e on e.tenant_id = d.tenant_id and e.id = d.event_id and e.type = 'reservation.checked_in'
           join public.webhook_deliveries p on p.subscription_id = d.subscription_id and p.reservation_id = d.reservation_id and p.id <> d.id),
  'each after the same stay''s earlier delivery to the same subscription');
select is(tests.jobs(), 3::bigint, 'each with its job');

select tests.act_as('Alpha_owner', :'alpha_tenant');
insert into public.payments (reservation_id, amount, method, source) values (:'alpha_stay', 1000, 'card', 'manual');
select tests.act_as_operator();
select is(tests.last_event('payment.recorded') #>> '{payment,amount}', '1000', 'a payment records payment.recorded');
select is(tests.last_event('payment.recorded') #>> '{reservation,amountPaid}', '6000',
  'with the stay''s paid amount after it');
select is(tests.events('reservation.updated'), 1::bigint, 'and no reservation.updated for the paid amount it changed');

select tests.act_as('Alpha_owner', :'alpha_tenant');
update public.access_codes set status = 'revoked' where id = :'alpha_code';
update public.tasks set status = 'in_progress' where id = :'alpha_task';
update public.guests set phone = '+351912345678' where id = :'alpha_guest';
select tests.act_as_operator();
select is(tests.last_event('access_code.revoked') #>> '{accessCode,id}', :'alpha_code', 'a revoked code records access_code.revoked');
select is(tests.last_event('task.status_changed') ->> 'previousStatus', 'open', 'a task''s new status records task.status_changed');
select is(tests.last_event('guest.updated') -> 'changedFields', '["phone"]'::jsonb, 'a guest''s change records guest.updated');

-- A change rolled back records nothing.
select tests.act_as('Alpha_owner', :'alpha_tenant');
savepoint before_checkout;
update public.reservations set status = 'checked_out' where id = :'alpha_stay';
rollback to savepoint before_checkout;
select tests.act_as_operator();
select is(tests.events('reservation.checked_out'), 0::bigint, 'a change rolled back leaves no event');
select is((select count(*) from pgmq.q_webhooks where message ->> 'tenantId' = :'alpha_tenant'), (select count(*) from public.webhook_deliveries where tenant_id = :'alpha_tenant'),
  'and every job is a delivery''s');

-- Another tenant's change reaches none of Alpha's subscriptions.
update public.reservations set notes = 'beta note' where id = :'beta_stay';
select is((select count(*) from public.webhook_events where tenant_id = :'beta_tenant'), 0::bigint,
  'another tenant''s change records nothing for Alpha''s subscriptions');

select * from finish();
rollback;
