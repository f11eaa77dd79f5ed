-- private.settle_notification_claim, the worker's record of a claim: the queue's jobs go
-- or come back later, and each tenant's entry changes only that tenant's rows, under
-- background_worker's RLS. A change naming another tenant's notification, an inbox message
-- for someone who is not a member, or a sent notification's second change do nothing.
begin;
\ir ../helpers/setup.psql
select plan(12);

select tests.make_tenant('Alpha') as alpha \gset
select tests.make_tenant('Beta') as beta \gset
select (:'alpha'::jsonb ->> 'tenants')::uuid as alpha_tenant, (:'alpha'::jsonb ->> 'staff')::uuid as alpha_staff,
       (:'beta'::jsonb ->> 'tenants')::uuid as beta_tenant, (:'beta'::jsonb ->> 'staff')::uuid as beta_staff \gset

insert into public.notifications (tenant_id, recipient_id, recipient_type, template_key, channel)
  values (:'alpha_tenant', :'alpha_staff', 'user', 'check_in_alerts', 'in_app') returning id as alpha_notice \gset
insert into public.notifications (tenant_id, recipient_id, recipient_type, template_key, channel)
  values (:'beta_tenant', :'beta_staff', 'user', 'check_in_alerts', 'in_app') returning id as beta_notice \gset
insert into public.notifications (tenant_id, recipient_id, recipient_type, template_key, channel, status, sent_at)
  values (:'alpha_tenant', :'alpha_staff', 'user', 'check_in_alerts', 'in_app', 'sent', now()) returning id as alpha_sent \gset

select pgmq.send('notifications', '{}'::jsonb) as finished_job \gset
select pgmq.send('notifications', '{}'::jsonb) as retried_job \gset

select lives_ok(format($$select private.settle_notification_claim(%L)$$, jsonb_build_object(
  'finished', jsonb_build_array(:'finished_job'::bigint),
  'retried', jsonb_build_array(jsonb_build_object('msgId', :'retried_job'::bigint, 'delaySeconds', 600)),
  'tenants', jsonb_build_array(jsonb_build_object(
    'tenantId', :'alpha_tenant',
    -- Alpha's entry names Beta's notification and a notification already sent, too.
    'changes', jsonb_build_array(
      jsonb_build_object('id', :'alpha_notice', 'status', 'sent', 'status_reason', null, 'subject', 'Guest arrived', 'attempts', 1),
      jsonb_build_object('id', :'beta_notice', 'status', 'sent', 'status_reason', null, 'subject', 'Not yours'),
      jsonb_build_object('id', :'alpha_sent', 'status', 'failed', 'status_reason', 'late')),
    'inbox', jsonb_build_array(
      jsonb_build_object('notificationId', :'alpha_notice', 'userId', :'alpha_staff', 'templateKey', 'check_in_alerts',
                         'title', 'Guest arrived', 'body', 'Room 101', 'url', '/reservations'),
      -- Beta's staff member is no member of Alpha.
      jsonb_build_object('notificationId', :'alpha_notice', 'userId', :'beta_staff', 'templateKey', 'check_in_alerts',
                         'title', 'Guest arrived', 'body', 'Room 101', 'url', '/reservations')),
    'pushAccepted', '[]'::jsonb, 'pushGone', '[]'::jsonb))
)::text), 'the operator records a claim in one call');

select is(current_user::text, 'postgres', 'the caller''s role is back when it returns');
select is(current_setting('app.tenant_id'), :'alpha_tenant', 'in the last tenant''s context');
select tests.act_as_operator();

select is((select count(*) from pgmq.q_notifications where msg_id = :'finished_job'), 0::bigint, 'a finished job is deleted');
select ok((select vt > now() + interval '590 seconds' from pgmq.q_notifications where msg_id = :'retried_job'),
  'a retried job comes back after its delay');
select results_eq(format('select status, subject, attempts from public.notifications where id = %L', :'alpha_notice'),
  $$values ('sent'::text, 'Guest arrived'::text, 1)$$, 'the tenant''s own notification takes its change');
select ok((select sent_at is not null from public.notifications where id = :'alpha_notice'), 'sent_at is set with sent');
select results_eq(format('select status, subject from public.notifications where id = %L', :'beta_notice'),
  $$values ('pending'::text, null::text)$$, 'another tenant''s notification named in the entry is untouched');
select results_eq(format('select status, status_reason from public.notifications where id = %L', :'alpha_sent'),
  $$values ('sent'::text, null::text)$$, 'a notification already sent takes no change');
select results_eq(format('select user_id from public.inbox_messages where notification_id = %L', :'alpha_notice'),
  format('values (%L::uuid)', :'alpha_staff'), 'the member''s message lands in the inbox; a non-member''s does not');

select tests.act_as('Alpha_staff', :'alpha_tenant');
select throws_ok($$select private.settle_notification_claim('{}')$$, '42501', null, 'a member cannot call it');
select tests.act_as_operator();
select is(has_function_privilege('background_worker', 'private.settle_notification_claim(jsonb)', 'execute'), false,
  'nor can background_worker');

select * from finish();
rollback;
