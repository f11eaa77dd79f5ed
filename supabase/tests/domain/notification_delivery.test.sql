-- What the providers report after accepting a message (private.record_delivery_events, as
-- the webhooks' role calls it): each event once, the delivery state from all of them in any
-- order, a report only for the message the worker stored, the guest's address marked by a
-- hard bounce and cleared by a manager or a new address, and the role that can do nothing
-- else. Also the operators' views.
begin;
\ir ../helpers/setup.psql
select plan(49);

select tests.use_fixture(tests.make_tenant('Alpha')) as fx \gset
select tests.make_tenant('Beta') as beta \gset
select (:'beta'::jsonb ->> 'tenants')::uuid as beta_tenant \gset

-- The access code make_tenant created left an access_code_delivery for Alpha's guest (made
-- from its event as the worker makes it): the worker sent it as message M-1 to the guest's address.
select expanded from private.expand_notification_events(1000);
select id as sent_one from public.notifications where tenant_id = tests.fx('tenants') and template_key = 'access_code_delivery' \gset
update public.notifications set status = 'sent', sent_at = now(), provider_message_id = 'M-1', recipient_address = 'alpha.guest@example.com'
  where id = :'sent_one';
-- A second one, still pending: its provider's answer is not recorded yet.
select private.enqueue_notification(tests.fx('tenants'), 'checkin_reminder', tests.fx('guests'), tests.fx('reservations')) as pending_one \gset

-- One event of the sent notification as the api function passes it.
create function tests.event(notification uuid, event_id text, event text, state text, at text,
                            message text default 'M-1', undeliverable boolean default false,
                            reason text default null, code text default null, tenant uuid default null) returns jsonb
language sql as $$
  select jsonb_build_object('tenant_id', coalesce(tenant, tests.fx('tenants')), 'notification_id', notification,
    'provider_message_id', message, 'provider_event_id', event_id, 'event', event, 'delivery_state', state,
    'occurred_at', at, 'reason', reason, 'code', code, 'undeliverable', undeliverable)
$$;

-- A batch recorded as the webhooks record it: as provider_webhook. Its outcomes as one
-- object, {"recorded": 1, ...}.
create function tests.record(provider text, variadic events jsonb[]) returns jsonb
language plpgsql as $$
declare
  result jsonb;
begin
  perform set_config('role', 'postgres', true);
  perform set_config('request.jwt.claims', '', true);
  perform set_config('app.tenant_id', '', true);
  perform set_config('role', 'provider_webhook', true);
  select jsonb_object_agg(outcome, total) into result
  from private.record_delivery_events(provider, to_jsonb(events)) where total > 0;
  perform set_config('role', 'postgres', true);
  return coalesce(result, '{}');
end
$$;

create function tests.state_of(notification uuid) returns text
language sql as $$
  select concat_ws(' | ', delivery_state, delivery_state_at::text, delivery_reason, delivery_code)
  from public.notifications where id = notification
$$;

create function tests.events_of(notification uuid) returns bigint
language sql as $$ select count(*) from public.notification_events where notification_id = notification $$;

-- The role the webhooks run as can do nothing but record.
select tests.act_as_operator();
select ok(not pg_catalog.has_table_privilege('provider_webhook', 'public.notifications', 'SELECT'),
  'the webhooks'' role cannot read notifications');
select ok(not pg_catalog.has_table_privilege('provider_webhook', 'public.notification_events', 'INSERT'),
  'nor write events itself');
select ok(not pg_catalog.has_table_privilege('provider_webhook', 'public.guests', 'UPDATE'), 'nor change guests');
select ok(pg_catalog.has_function_privilege('provider_webhook', 'private.record_delivery_events(text, jsonb)', 'EXECUTE'),
  'it may record delivery events');
select ok(not pg_catalog.has_function_privilege('authenticated', 'private.record_delivery_events(text, jsonb)', 'EXECUTE')
      and not pg_catalog.has_function_privilege('anon', 'private.record_delivery_events(text, jsonb)', 'EXECUTE')
      and not pg_catalog.has_function_privilege('api_integration', 'private.record_delivery_events(text, jsonb)', 'EXECUTE'),
  'no other request role may');

-- Delivered, then the same event again, then an open: one of each, the state delivered.
select is(tests.record('sendgrid', tests.event(:'sent_one', 'ev-processed', 'processed', null, '2020-05-01T10:00:00Z'),
                                    tests.event(:'sent_one', 'ev-delivered', 'delivered', 'delivered', '2020-05-01T10:00:02Z', reason => '250 OK')),
  '{"recorded": 2}'::jsonb, 'processed and delivered are recorded');
select is(tests.state_of(:'sent_one'), 'delivered | 2020-05-01 10:00:02+00 | 250 OK', 'the notification is delivered, when and with the answer');
select is(tests.record('sendgrid', tests.event(:'sent_one', 'ev-delivered', 'delivered', 'delivered', '2020-05-01T10:00:02Z', reason => '250 OK')),
  '{"duplicate": 1}'::jsonb, 'the same event again is a duplicate');
select is(tests.events_of(:'sent_one'), 2::bigint, 'and is stored once');
select is(tests.record('sendgrid', tests.event(:'sent_one', 'ev-open', 'open', null, '2020-05-01T11:00:00Z')),
  '{"recorded": 1}'::jsonb, 'an open is recorded');
select is(tests.state_of(:'sent_one'), 'delivered | 2020-05-01 10:00:02+00 | 250 OK', 'as an event only: the state stays delivered');
select is((select status from public.notifications where id = :'sent_one'), 'sent', 'the status stays sent');

-- A deferral that happened before the delivery but arrives after it changes nothing; a
-- later deferral does not undo a delivery either.
select is(tests.record('sendgrid', tests.event(:'sent_one', 'ev-deferred', 'deferred', 'deferred', '2020-05-01T10:00:01Z', reason => '421 try later')),
  '{"recorded": 1}'::jsonb, 'a late-arriving deferral is recorded');
select is(tests.state_of(:'sent_one'), 'delivered | 2020-05-01 10:00:02+00 | 250 OK', 'and the state stays delivered');

-- Reports for anything but the stored message are unmatched and change nothing.
select is(tests.record('sendgrid', tests.event(:'sent_one', 'ev-other', 'bounce', 'bounced', '2020-05-01T12:00:00Z', message => 'M-2', undeliverable => true)),
  '{"unmatched": 1}'::jsonb, 'another message id is unmatched');
select is(tests.record('sms', tests.event(:'sent_one', 'ev-sms', 'undelivered', 'undelivered', '2020-05-01T12:00:00Z')),
  '{"unmatched": 1}'::jsonb, 'another channel''s provider is unmatched');
select is(tests.record('sendgrid', tests.event(gen_random_uuid(), 'ev-unknown', 'delivered', 'delivered', '2020-05-01T12:00:00Z')),
  '{"unmatched": 1}'::jsonb, 'an unknown notification is unmatched');
select is(tests.record('sendgrid', tests.event(:'sent_one', 'ev-tenant', 'bounce', 'bounced', '2020-05-01T12:00:00Z', tenant => :'beta_tenant')),
  '{"unmatched": 1}'::jsonb, 'the notification named under another tenant is unmatched');
select is(tests.record('sendgrid', tests.event(:'pending_one', 'ev-early', 'delivered', 'delivered', '2020-05-01T12:00:00Z')),
  '{"early": 1}'::jsonb, 'a pending notification without a message id is early');
select is(tests.events_of(:'sent_one') + tests.events_of(:'pending_one'), 4::bigint, 'none of them stored anything');
select is(tests.state_of(:'sent_one'), 'delivered | 2020-05-01 10:00:02+00 | 250 OK', 'nor changed the state');
select is((select email_undeliverable_at from public.guests where id = tests.fx('guests')), null, 'nor marked the guest');

-- A bounce after the delivery (an asynchronous bounce) wins, and marks the guest's address.
select is(tests.record('sendgrid', tests.event(:'sent_one', 'ev-bounce', 'bounce', 'bounced', '2020-05-01T13:00:00Z',
                                               undeliverable => true, reason => '550 5.1.1 no such user', code => '5.1.1')),
  '{"recorded": 1}'::jsonb, 'a bounce is recorded');
select is(tests.state_of(:'sent_one'), 'bounced | 2020-05-01 13:00:00+00 | 550 5.1.1 no such user | 5.1.1', 'the notification is bounced');
select results_eq(format('select email_undeliverable_at, email_undeliverable_reason from public.guests where id = %L', tests.fx('guests')),
  $$values ('2020-05-01T13:00:00Z'::timestamptz, 'the mail bounced: 550 5.1.1 no such user'::text)$$,
  'the guest''s address is marked undeliverable: when and why');

-- Clearing the mark: not by staff, not by setting one, by a manager.
select tests.act_as('Alpha_staff', tests.fx('tenants'));
select throws_ok(format('update public.guests set email_undeliverable_at = null, email_undeliverable_reason = null where id = %L', tests.fx('guests')),
  '42501', 'only the tenant''s owners and admins clear an undeliverable mark', 'staff cannot clear the mark');
select throws_ok(format('update public.guests set email_undeliverable_reason = ''made up'' where id = %L', tests.fx('guests')),
  '42501', 'an email address is marked undeliverable only by its provider''s report', 'nor change it');
select throws_ok(format($$insert into public.guests (first_name, last_name, email, email_undeliverable_at, email_undeliverable_reason)
                         values ('New', 'Guest', 'new@example.com', now(), 'made up')$$),
  '42501', 'an email address is marked undeliverable only by its provider''s report', 'nor create a marked guest');
select tests.act_as('Alpha_admin', tests.fx('tenants'));
select throws_ok(format('update public.guests set email_undeliverable_cleared_at = now() where id = %L', tests.fx('guests')),
  '42501', 'email_undeliverable_cleared_at is stamped when the mark is cleared and cannot be set', 'the clearing time is never set directly');
select is(tests.rows_changed(format('update public.guests set email_undeliverable_at = null, email_undeliverable_reason = null where id = %L', tests.fx('guests'))),
  1::bigint, 'an admin clears the mark');
select tests.act_as_operator();
select ok((select email_undeliverable_at is null and email_undeliverable_cleared_at is not null from public.guests where id = tests.fx('guests')),
  'the mark is gone and the clearing stamped');

-- A report of something before the clearing does not mark the address again; a later one does.
select is(tests.record('sendgrid', tests.event(:'sent_one', 'ev-spam-old', 'spamreport', 'spam_report', '2020-05-01T14:00:00Z', undeliverable => true)),
  '{"recorded": 1}'::jsonb, 'an old spam report is recorded');
select is((select email_undeliverable_at from public.guests where id = tests.fx('guests')), null,
  'but does not mark the address the manager cleared after it');
select is(tests.state_of(:'sent_one'), 'spam_report | 2020-05-01 14:00:00+00', 'the notification is reported as spam');
select is(tests.record('sendgrid', tests.event(:'sent_one', 'ev-spam-new', 'spamreport', 'spam_report', (now() + interval '1 minute')::text, undeliverable => true)),
  '{"recorded": 1}'::jsonb, 'a spam report after the clearing is recorded');
select is((select email_undeliverable_reason from public.guests where id = tests.fx('guests')), 'the guest reported the mail as spam',
  'and marks the address again');

-- A new address loses the mark, and a report about the old one does not mark the new one.
select tests.act_as('Alpha_staff', tests.fx('tenants'));
select is(tests.rows_changed(format('update public.guests set email = ''ALPHA.GUEST@example.com'' where id = %L', tests.fx('guests'))),
  1::bigint, 'staff change the address''s letter case');
select tests.act_as_operator();
select isnt((select email_undeliverable_at from public.guests where id = tests.fx('guests')), null, 'the same address keeps its mark');
select tests.act_as('Alpha_staff', tests.fx('tenants'));
select is(tests.rows_changed(format('update public.guests set email = ''ada.new@example.com'' where id = %L', tests.fx('guests'))),
  1::bigint, 'staff change the guest''s address');
select tests.act_as_operator();
select is((select email_undeliverable_at from public.guests where id = tests.fx('guests')), null, 'a new address has no mark');
select is(tests.record('sendgrid', tests.event(:'sent_one', 'ev-bounce-2', 'bounce', 'bounced', (now() + interval '2 minutes')::text, undeliverable => true)),
  '{"recorded": 1}'::jsonb, 'a bounce of the mail to the old address is recorded');
select is((select email_undeliverable_at from public.guests where id = tests.fx('guests')), null, 'and leaves the new address unmarked');

-- Members read their tenant's events and write none; others see none.
select tests.act_as('Alpha_staff', tests.fx('tenants'));
select is((select count(*) from public.notification_events), tests.events_of(:'sent_one'), 'a member reads the tenant''s events');
select throws_ok(format($$insert into public.notification_events (notification_id, provider, provider_event_id, event, occurred_at)
                         values (%L, 'sendgrid', 'forged', 'delivered', now())$$, :'sent_one'),
  '42501', null, 'members cannot write events');
select tests.act_as('Beta_owner', :'beta_tenant');
select is((select count(*) from public.notification_events), 0::bigint, 'another tenant''s members see none');
select tests.act_as_operator();
select throws_ok(format('update public.notification_events set reason = ''edited'' where notification_id = %L', :'sent_one'),
  '42501', 'a notification event is what the provider reported and never changes', 'events never change, even for the owner');

-- A sent notification changes in its delivery columns only.
select throws_ok(format('update public.notifications set body = ''edited'' where id = %L', :'sent_one'),
  'PT409', 'a sent notification cannot change', 'the rest of a sent notification stays final');

-- The operators' views.
select is((select count(*) from private.notification_failures_last_day where notification_id = :'sent_one'), 1::bigint,
  'the bounced notification is among the last day''s failures');
select ok((select depth >= 1 and read_more_than_once >= 0 from private.notification_queue_health),
  'the queue''s health counts the pending job');

select * from finish();
rollback;
