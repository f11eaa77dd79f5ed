-- A notification is sent once, whatever stops a run: the claim's load marks each send it
-- will make as under way, and counts the attempt; a send marked by an earlier claim is not
-- marked again while its provider may still report on it (the unconfirmed wait), and a
-- door code's message not at all; the provider's report on a marked send gives it the
-- provider's message id while it stays pending, and the worker's settlement then makes it
-- sent with the state the report says. (20261202000100_each_notification_sent_once.sql)
begin;
\ir ../helpers/setup.psql
select plan(17);

select tests.use_fixture(tests.make_tenant('Alpha')) as fx \gset
select expanded from private.expand_notification_events(1000);
select private.enqueue_notification(tests.fx('tenants'), 'checkin_reminder', tests.fx('guests'), tests.fx('reservations')) as reminder \gset
select id as code_message from public.notifications where tenant_id = tests.fx('tenants') and template_key = 'access_code_delivery' \gset

create function tests.load(notification uuid, wait integer default 600)
returns table (send_fresh boolean, attempts integer, marked boolean)
language sql as $$
  select l.send_fresh, l.attempts, l.send_started_at is not null
  from private.load_notification_claims(array[tests.fx('tenants')], array[notification], wait) l
$$;

-- ---------------------------------------------------------------- the load's mark

select results_eq(format('select * from tests.load(%L)', :'reminder'), $$ values (true, 1, true) $$,
  'the first load marks the send as under way and counts its attempt');
select results_eq(format('select * from tests.load(%L)', :'reminder'), $$ values (false, 1, true) $$,
  'a second load finds it under way: not marked again, not counted again');
select results_eq(format($$ select status from public.notifications where id = %L $$, :'reminder'), $$ values ('pending') $$,
  'it stays pending while its outcome is not known');
update public.notifications set send_started_at = now() - interval '11 minutes' where id = :'reminder';
select results_eq(format('select * from tests.load(%L)', :'reminder'), $$ values (true, 2, true) $$,
  'marked longer ago than the wait and never reported: marked afresh, a second attempt');

select results_eq(format('select * from tests.load(%L)', :'code_message'), $$ values (true, 1, true) $$, 'a door code''s message is marked too');
update public.notifications set send_started_at = now() - interval '11 minutes' where id = :'code_message';
select results_eq(format('select * from tests.load(%L)', :'code_message'), $$ values (false, 1, true) $$,
  'but past the wait it is not marked again: an operator decides');

insert into public.notifications (tenant_id, recipient_id, recipient_type, template_key, channel)
  values (tests.fx('tenants'), tests.fx('staff'), 'user', 'check_in_alerts', 'in_app') returning id as alert \gset
select results_eq(format('select * from tests.load(%L)', :'alert'), $$ values (false, 0, false) $$,
  'an inbox message goes through no provider: nothing to mark');

select throws_ok(format($$ update public.notifications set status = 'sent', sent_at = now() where id = %L $$, :'reminder'),
  '23514', null, 'a notification is sent only with its mark cleared');

-- ---------------------------------------------------------------- the provider's report

create function tests.event(notification uuid, event_id text, state text) returns jsonb
language sql as $$
  select jsonb_build_object('tenant_id', tests.fx('tenants'), 'notification_id', notification,
    'provider_message_id', 'M-LATE', 'provider_event_id', event_id, 'event', coalesce(state, 'processed'),
    'delivery_state', state, 'occurred_at', '2026-12-02T10:00:00Z', 'reason', null, 'code', null, 'undeliverable', false)
$$;

select results_eq(format($$ select outcome, total from private.record_delivery_events('sendgrid', %L) where total > 0 $$,
                         jsonb_build_array(tests.event(:'reminder', 'E-1', null), tests.event(:'reminder', 'E-2', 'delivered'))),
  $$ values ('recorded', 2::bigint) $$, 'reports on a send under way are recorded');
select results_eq(format($$ select status, provider_message_id, delivery_state, send_started_at is not null
                             from public.notifications where id = %L $$, :'reminder'),
  $$ values ('pending', 'M-LATE', null::text, true) $$,
  'the notification takes the provider''s message id and stays pending, with no delivery state yet');

select results_eq(format('select * from tests.load(%L)', :'reminder'), $$ values (false, 2, true) $$,
  'a reported send is not marked again, whatever the wait');

select lives_ok(format($$ select private.settle_notification_claim(%L) $$, jsonb_build_object(
  'finished', '[]'::jsonb, 'retried', '[]'::jsonb,
  'tenants', jsonb_build_array(jsonb_build_object('tenantId', tests.fx('tenants'),
    'changes', jsonb_build_array(jsonb_build_object('id', :'reminder', 'status', 'sent', 'status_reason', null,
                                                    'subject', 'Welcome', 'body', 'Hello', 'attempts', 2)))))),
  'the worker settles it sent');
select results_eq(format($$ select status, provider_message_id, delivery_state, send_started_at, subject
                             from public.notifications where id = %L $$, :'reminder'),
  $$ values ('sent', 'M-LATE', 'delivered', null::timestamptz, 'Welcome') $$,
  'sent, its mark cleared, with the state its reports give it and what it said');

-- A report naming a pending notification with no send under way and no message id is early.
select enqueued from private.enqueue_notification(tests.fx('tenants'), 'checkout_summary', tests.fx('guests'), tests.fx('reservations')) as enqueued \gset
select results_eq(format($$ select outcome, total from private.record_delivery_events('sendgrid', %L) where total > 0 $$,
                         jsonb_build_array(tests.event(:'enqueued', 'E-3', null))),
  $$ values ('early', 1::bigint) $$, 'a report on a notification with no send under way is early, and nothing is stored');

-- ---------------------------------------------------------------- the settlement keeps or clears the mark

select results_eq(format('select * from tests.load(%L)', :'enqueued'), $$ values (true, 1, true) $$, 'marked');
select lives_ok(format($$ select private.settle_notification_claim(%L) $$, jsonb_build_object(
  'finished', '[]'::jsonb, 'retried', '[]'::jsonb,
  'tenants', jsonb_build_array(jsonb_build_object('tenantId', tests.fx('tenants'),
    'changes', jsonb_build_array(jsonb_build_object('id', :'enqueued', 'status', 'pending', 'status_reason', 'timed out',
                                                    'send_started_at', (select send_started_at from public.notifications where id = :'enqueued'))))))),
  'an unconfirmed send is settled pending with its mark');
select results_eq(format($$ select status, status_reason, send_started_at is not null from public.notifications where id = %L $$, :'enqueued'),
  $$ values ('pending', 'timed out', true) $$, 'its mark stays until its outcome is known');

select * from finish();
rollback;
