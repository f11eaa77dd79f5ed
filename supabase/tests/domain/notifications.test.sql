-- Notifications: the domain's changes enqueue their events in the same transaction, the
-- worker's expansion makes them notifications with their jobs, RLS keeps them per tenant,
-- the worker's role reads one tenant and records outcomes only.
begin;
\ir ../helpers/setup.psql
select plan(51);

select tests.use_fixture(tests.make_tenant('Alpha')) as fx \gset
select tests.make_tenant('Beta') as beta \gset
select (:'beta'::jsonb ->> 'tenants')::uuid as beta_tenant \gset

create function tests.jobs_for(notification uuid) returns bigint
language sql security definer set search_path = ''
as $$ select count(*) from pgmq.q_notifications q where q.message ->> 'notificationId' = notification::text $$;

create function tests.job_of(notification uuid) returns jsonb
language sql security definer set search_path = ''
as $$ select q.message from pgmq.q_notifications q where q.message ->> 'notificationId' = notification::text $$;

create function tests.jobs_of_tenant(tenant uuid) returns bigint
language sql security definer set search_path = ''
as $$ select count(*) from pgmq.q_notifications q where q.message ->> 'tenantId' = tenant::text $$;

create function tests.events_for(reservation uuid) returns jsonb
language sql security definer set search_path = ''
as $$ select jsonb_agg(q.message order by q.msg_id) from pgmq.q_notification_events q
      where q.message ->> 'reservationId' = reservation::text $$;

-- The worker's step before it claims jobs, as the owner the worker connects as.
create function tests.expand_events() returns table (expanded integer, dropped integer)
language sql security definer set search_path = ''
as $$ select * from private.expand_notification_events(1000) $$;

create function tests.notification_for(reservation uuid, template text) returns uuid
language sql security definer set search_path = ''
as $$ select n.id from public.notifications n where n.reservation_id = reservation and n.template_key = template $$;

-- The fixtures' door codes' events, made into their notifications first.
select tests.expand_events();
select tests.act_as('Alpha_staff', tests.fx('tenants'));

-- Checking in leaves one event and nothing else; the expansion makes it a pending email to
-- the guest with its job, as old as the check-in.
update public.reservations set status = 'checked_in' where id = tests.fx('reservations');
select is(tests.events_for(tests.fx('reservations')),
  jsonb_build_array(jsonb_build_object('tenantId', tests.fx('tenants'), 'templateKey', 'checkin_reminder',
                                       'reservationId', tests.fx('reservations'), 'accessCodeId', null)),
  'checking in enqueues its event');
select is(tests.notification_for(tests.fx('reservations'), 'checkin_reminder'), null, 'and no notification yet');
select results_eq('select * from tests.expand_events()', $$values (1, 0)$$, 'the expansion takes the event');
select is(tests.events_for(tests.fx('reservations')), null, 'and deletes it');
select tests.notification_for(tests.fx('reservations'), 'checkin_reminder') as checkin \gset
select results_eq(format('select recipient_type, recipient_id, channel, status, body, sent_at, created_at = now() from public.notifications where id = %L', :'checkin'),
  format($$values ('guest'::text, %L::uuid, 'email'::text, 'pending'::text, ''::text, null::timestamptz, true)$$, tests.fx('guests')),
  'a pending email to the guest, created at the check-in''s time');
select is(tests.jobs_for(:'checkin'), 1::bigint, 'and one job for it');
select is(tests.job_of(:'checkin'),
  jsonb_build_object('notificationId', :'checkin'::uuid, 'tenantId', tests.fx('tenants')), 'the job names the notification and the tenant');

update public.reservations set status = 'checked_out' where id = tests.fx('reservations');
select tests.expand_events();
select isnt(tests.notification_for(tests.fx('reservations'), 'checkout_summary'), null, 'checking out enqueues the summary');

-- A rolled-back change leaves no event.
insert into public.reservations (property_id, unit_id, guest_id, check_in, check_out, status)
  values (tests.fx('properties'), tests.fx('unit2'), tests.fx('guests'), '2031-01-01', '2031-01-03', 'confirmed')
  returning id as second_stay \gset
savepoint before_cancel;
update public.reservations set status = 'cancelled' where id = :'second_stay';
select is(jsonb_array_length(tests.events_for(:'second_stay')), 1, 'cancelling enqueues the cancellation');
rollback to savepoint before_cancel;
select is(tests.events_for(:'second_stay'), null, 'a rolled-back cancellation leaves no event');

insert into public.access_codes (reservation_id) values (:'second_stay') returning id as code \gset
select is(tests.events_for(:'second_stay') -> 0 ->> 'accessCodeId', :'code', 'a new door code enqueues its event');
select tests.expand_events();
select results_eq(format('select template_key, access_code_id, reservation_id from public.notifications where access_code_id = %L', :'code'),
  format($$values ('access_code_delivery'::text, %L::uuid, %L::uuid)$$, :'code', :'second_stay'),
  'and its delivery');
update public.reservations set notes = 'Late arrival' where id = :'second_stay';
select is(tests.events_for(:'second_stay'), null, 'other changes enqueue nothing');

-- An event whose reservation is gone reaches nobody; one that is not an event is archived.
select tests.act_as_operator();
select pgmq.send('notification_events', jsonb_build_object('tenantId', tests.fx('tenants'), 'templateKey', 'checkin_reminder',
  'reservationId', gen_random_uuid(), 'accessCodeId', null));
select pgmq.send('notification_events', '{"notificationId": "not an event"}'::jsonb);
select results_eq('select * from tests.expand_events()', $$values (0, 2)$$, 'both dropped');
select is((select count(*) from pgmq.a_notification_events a where a.message ->> 'notificationId' = 'not an event'), 1::bigint,
  'the malformed one kept in the archive');

-- One event whose notifications cannot be written holds back none of the others: the
-- batch falls back to one event at a time, and the one that still fails is archived.
create function tests.refuse_notifications_of() returns trigger language plpgsql as $$
begin
  if new.reservation_id::text = current_setting('tests.refused_stay', true) then
    raise exception 'this stay''s notifications are refused' using errcode = 'P0001';
  end if;
  return new;
end $$;
create trigger tests_refuse_notifications before insert on public.notifications
  for each row execute function tests.refuse_notifications_of();
select set_config('tests.refused_stay', tests.fx('reservations')::text, true);
select pgmq.send('notification_events', jsonb_build_object('tenantId', tests.fx('tenants'), 'templateKey', 'reservation_cancelled',
  'reservationId', tests.fx('reservations'), 'accessCodeId', null));
select pgmq.send('notification_events', jsonb_build_object('tenantId', tests.fx('tenants'), 'templateKey', 'reservation_cancelled',
  'reservationId', :'second_stay'::uuid, 'accessCodeId', null));
select results_eq('select * from tests.expand_events()', $$values (1, 1)$$, 'the other event is expanded, the refused one dropped');
select is((select count(*) from pgmq.a_notification_events a where a.message ->> 'reservationId' = tests.fx('reservations')::text),
  1::bigint, 'and the refused one kept in the archive');
select isnt(tests.notification_for(:'second_stay', 'reservation_cancelled'), null, 'while the other made its notification');
drop trigger tests_refuse_notifications on public.notifications;

-- The worker's way: it takes the events with what a check-in's alert says, renders the
-- alert once, and hands the events back with it; the front desk's in-app alerts are then
-- written sent, into their inboxes, with no job each.
create function tests.alerts_of(reservation uuid) returns table (status text, subject text, body text, attempts integer, sent boolean, jobs bigint)
language sql security definer set search_path = ''
as $$ select n.status, n.subject, n.body, n.attempts, n.sent_at is not null, tests.jobs_for(n.id)
      from public.notifications n where n.reservation_id = reservation and n.template_key = 'check_in_alerts' and n.channel = 'in_app' $$;
-- The events in the temporary table taken, handed back with `alert` added to each.
create function tests.hand_back(alert jsonb) returns table (expanded integer, dropped integer, sent integer)
language plpgsql security definer set search_path = ''
as $$
begin
  return query select * from private.expand_taken_notification_events((
    select jsonb_agg(jsonb_build_object('msgId', t.msg_id, 'event',
             case when t.event is not null and alert is not null then t.event || jsonb_build_object('alert', alert) else t.event end))
    from pg_temp.taken t));
end $$;
delete from public.notifications where reservation_id = :'second_stay';
select pgmq.send('notification_events', jsonb_build_object('tenantId', tests.fx('tenants'), 'templateKey', 'checkin_reminder',
  'reservationId', :'second_stay'::uuid, 'accessCodeId', null));
select current_setting('role') as role_before \gset
create temp table taken as select * from private.take_notification_events(10, true);
select is(current_setting('role'), :'role_before', 'the alerts are read as the worker, and the caller''s role is back after');
select results_eq($$select check_in_alert -> 'reservation' ->> 'id', check_in_alert -> 'guest' ->> 'firstName', check_in_alert -> 'unit' ->> 'name' is not null,
                           check_in_alert ->> 'checkedInAt' ~ '^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$' from taken$$,
  format($$values (%L::text, 'Ada'::text, true, true)$$, :'second_stay'),
  'a check-in is taken with what its alert says: the stay, the guest, the unit, when, as an RFC 3339 instant');
select results_eq($$select * from tests.hand_back('{"title": "Guest checked in: Ada", "body": "Room 2", "url": "/reservations/x"}')$$,
  $$values (1, 0, 1)$$, 'handed back with its alert, the event is expanded and its alert sent');
select results_eq(format('select * from tests.alerts_of(%L)', :'second_stay'),
  $$values ('sent'::text, 'Guest checked in: Ada'::text, 'Room 2'::text, 1, true, 0::bigint)$$,
  'the staff member''s in-app alert is sent as it is made, with no job');
select results_eq(format('select m.user_id, m.template_key, m.title, m.body, m.url from public.inbox_messages m join public.notifications n on n.tenant_id = m.tenant_id and n.id = m.notification_id where n.reservation_id = %L', :'second_stay'),
  format($$values (%L::uuid, 'check_in_alerts'::text, 'Guest checked in: Ada'::text, 'Room 2'::text, '/reservations/x'::text)$$, tests.fx('staff')),
  'and it is in the member''s inbox');
select results_eq(format('select status, jobs from (select n.status, tests.jobs_for(n.id) as jobs from public.notifications n where n.reservation_id = %L and n.channel = ''email'') e', :'second_stay'),
  $$values ('pending'::text, 1::bigint)$$, 'the guest''s email waits for its job as before');
select is((select count(*) from pgmq.q_notification_events), 0::bigint, 'the event is off its queue');
drop table taken;

-- An alert the tables refuse (an empty title) costs the event nothing: its staff get a job.
delete from public.notifications where reservation_id = :'second_stay';
select pgmq.send('notification_events', jsonb_build_object('tenantId', tests.fx('tenants'), 'templateKey', 'checkin_reminder',
  'reservationId', :'second_stay'::uuid, 'accessCodeId', null));
create temp table taken as select * from private.take_notification_events(10, true);
select results_eq($$select * from tests.hand_back('{"title": "", "body": "Room 2", "url": "/reservations/x"}')$$,
  $$values (1, 0, 0)$$, 'an alert the tables refuse: the event is still expanded');
select results_eq(format('select * from tests.alerts_of(%L)', :'second_stay'),
  $$values ('pending'::text, null::text, ''::text, 0, false, 1::bigint)$$, 'and its staff member''s alert goes by a job');
drop table taken;

-- A tenant that opted out of in-app check-in alerts has none rendered: its jobs skip them.
insert into public.notification_preferences (tenant_id, template_key, channel, enabled)
  values (tests.fx('tenants'), 'check_in_alerts', 'in_app', false);
select pgmq.send('notification_events', jsonb_build_object('tenantId', tests.fx('tenants'), 'templateKey', 'checkin_reminder',
  'reservationId', :'second_stay'::uuid, 'accessCodeId', null));
create temp table taken as select * from private.take_notification_events(10, true);
select results_eq('select event is not null, check_in_alert is null from taken', $$values (true, true)$$,
  'an opted-out tenant''s check-in is taken with no alert to render');
select results_eq($$select * from tests.hand_back(null)$$, $$values (1, 0, 0)$$, 'and expanded with its staff''s jobs');
drop table taken;
delete from public.notification_preferences where tenant_id = tests.fx('tenants') and template_key = 'check_in_alerts';

-- Other events are taken with nothing to render.
select pgmq.send('notification_events', jsonb_build_object('tenantId', tests.fx('tenants'), 'templateKey', 'reservation_cancelled',
  'reservationId', :'second_stay'::uuid, 'accessCodeId', null));
create temp table taken as select * from private.take_notification_events(10, true);
select results_eq('select event ->> ''templateKey'', check_in_alert is null from taken', $$values ('reservation_cancelled'::text, true)$$,
  'a cancellation is taken with no alert');
select results_eq($$select * from tests.hand_back(null)$$, $$values (1, 0, 0)$$, 'and expanded as before');
drop table taken;

-- Check-ins of two tenants taken together, interleaved: each is taken, in order, with the
-- alert of its own stay and guest, read in its own tenant.
select (:'beta'::jsonb ->> 'reservations')::uuid as beta_stay \gset
select pgmq.send('notification_events', jsonb_build_object('tenantId', tenant, 'templateKey', 'checkin_reminder',
  'reservationId', stay, 'accessCodeId', null))
from (values (1, tests.fx('tenants'), :'second_stay'::uuid), (2, :'beta_tenant'::uuid, :'beta_stay'::uuid),
             (3, tests.fx('tenants'), tests.fx('reservations'))) as e (n, tenant, stay)
order by n;
create temp table taken as select * from private.take_notification_events(10, true);
select results_eq($$select event ->> 'reservationId', check_in_alert -> 'reservation' ->> 'id', check_in_alert -> 'guest' ->> 'lastName' from taken$$,
  format($$values (%L::text, %L::text, 'Alpha'::text), (%L, %L, 'Beta'), (%L, %L, 'Alpha')$$,
         :'second_stay', :'second_stay', :'beta_stay', :'beta_stay', tests.fx('reservations'), tests.fx('reservations')),
  'check-ins of two tenants taken together each come with their own stay''s alert, in the order taken');
select pgmq.delete('notification_events', array(select msg_id from taken));
drop table taken;
select tests.act_as('Alpha_staff', tests.fx('tenants'));

-- Members read their tenant's notifications and write none.
select throws_ok(format('update public.notifications set status = ''sent'', sent_at = now() where id = %L', :'checkin'), '42501', null,
  'members cannot mark a notification sent');
select throws_ok(format('insert into public.notifications (recipient_type, template_key, channel) values (''guest'', ''checkin_reminder'', ''email'')'),
  '42501', null, 'members cannot write notifications');
select tests.act_as('Beta_owner', :'beta_tenant');
select is((select count(*) from public.notifications where tenant_id = tests.fx('tenants')), 0::bigint,
  'another tenant''s members see none of them');

-- The worker's role: the job's tenant only, outcomes only.
select tests.act_as_worker(:'beta_tenant');
select is((select count(*) from public.notifications where tenant_id = tests.fx('tenants')), 0::bigint,
  'the worker in Beta''s context reads none of Alpha''s notifications');
select is(tests.rows_changed(format('update public.notifications set status = ''sent'', sent_at = now() where id = %L', :'checkin')),
  0::bigint, 'nor changes them');
select is((select count(*) from private.load_notification_claim(array[:'checkin'::uuid], 600)), 0::bigint,
  'nor loads them for a claim');
-- A whole claim in one call: each notification read in the tenant it is paired with, under RLS.
select tests.act_as_operator();
select results_eq(format('select tenant_id, id, first_name from private.load_notification_claims(array[%L, %L]::uuid[], array[%L, %L]::uuid[], 600)',
                         :'beta_tenant', tests.fx('tenants'), :'checkin', :'checkin'),
  format($$values (%L::uuid, %L::uuid, 'Ada'::text)$$, tests.fx('tenants'), :'checkin'),
  'a claim''s load finds a notification in its own tenant, and not where a job names it under another');
select throws_ok(format('select * from private.load_notification_claims(array[%L]::uuid[], array[]::uuid[], 600)', tests.fx('tenants')),
  '22023', null, 'a claim pairs each notification with its tenant');
select tests.act_as_worker(tests.fx('tenants'));
select results_eq(format('select id, template_key, first_name, confirmation_code is not null from private.load_notification_claim(array[%L::uuid], 600)', :'checkin'),
  format($$values (%L::uuid, 'checkin_reminder'::text, 'Ada'::text, true)$$, :'checkin'),
  'in Alpha''s context the claim loads the notification with its guest and stay');
select lives_ok(format('update public.notifications set subject = ''Welcome'', body = ''<p>Welcome</p>'', status = ''sent'', sent_at = now(), attempts = 1, send_started_at = null where id = %L', :'checkin'),
  'the worker records a delivery');
select throws_ok(format('update public.notifications set template_key = ''checkout_summary'' where id = %L',
  tests.notification_for(tests.fx('reservations'), 'checkout_summary')), '42501', null, 'the worker cannot change what a notification is');
select throws_ok(format('update public.notifications set status = ''failed'', sent_at = null where id = %L', :'checkin'), 'PT409',
  'a sent notification cannot become failed', 'sent is final');
update public.notifications set status = 'failed', status_reason = 'mailbox does not exist', attempts = 1
  where id = tests.notification_for(tests.fx('reservations'), 'checkout_summary');

-- An operator retries a failed notification from the SQL editor.
select tests.act_as_operator();
select tests.notification_for(tests.fx('reservations'), 'checkout_summary') as failed_one \gset
select is(private.retry_notification(:'failed_one'), true, 'a failed notification can be retried');
select results_eq(format('select status, status_reason, attempts from public.notifications where id = %L', :'failed_one'),
  $$values ('pending'::text, null::text, 0)$$, 'it is pending again');
select is(tests.jobs_for(:'failed_one'), 2::bigint, 'with a new job');
select is(private.retry_notification(:'checkin'), false, 'a sent notification is not retried');

-- Preferences: managers set them, for known templates and channels.
select tests.act_as('Alpha_staff', tests.fx('tenants'));
select throws_ok($$insert into public.notification_preferences (template_key, channel, enabled) values ('checkin_reminder', 'email', false)$$,
  '42501', null, 'staff cannot change preferences');
select tests.act_as('Alpha_admin', tests.fx('tenants'));
select lives_ok($$insert into public.notification_preferences (template_key, channel, enabled) values ('marketing_emails', 'email', false)$$,
  'an admin opts the tenant out of a settings-screen template');
select throws_ok($$insert into public.notification_preferences (template_key, channel, enabled) values ('checkin_reminder', 'fax', false)$$,
  '23514', null, 'channels are email, sms, push and in_app');

select * from finish();
rollback;
