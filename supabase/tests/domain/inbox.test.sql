-- The in-app inbox and push subscriptions, as members meet them: each member reads, marks
-- and removes only their own rows in the request's tenant; a delivered message takes only
-- its read mark, once; a subscription is registered only through the definer function,
-- which moves an endpoint to whoever registers it last; nothing crosses tenants; both go
-- with the membership.
begin;
\ir ../helpers/setup.psql
select plan(39);

select tests.use_fixture(tests.make_tenant('Alpha')) as fx \gset
select tests.make_tenant('Beta') as beta \gset
select (:'beta'::jsonb ->> 'tenants')::uuid as beta_tenant \gset
select (:'beta'::jsonb ->> 'owner')::uuid as beta_owner \gset

-- What the worker delivers for an in_app notification: the notification, sent, and the
-- message in the member's inbox. As the operator.
create function tests.deliver(tenant uuid, member uuid, title text) returns uuid
language plpgsql security definer set search_path = ''
as $$
declare
  notice uuid;
  message uuid;
begin
  insert into public.notifications (tenant_id, recipient_id, recipient_type, template_key, channel, status, sent_at)
    values (tenant, member, 'user', 'check_in_alerts', 'in_app', 'sent', now()) returning id into notice;
  insert into public.inbox_messages (tenant_id, user_id, notification_id, template_key, title, body)
    values (tenant, member, notice, 'check_in_alerts', title, 'Room 101') returning id into message;
  return message;
end
$$;

create function tests.read_at(message uuid) returns timestamptz
language sql security definer set search_path = ''
as $$ select m.read_at from public.inbox_messages m where m.id = message $$;

create function tests.subscription_owner(endpoint text, tenant uuid) returns uuid
language sql security definer set search_path = ''
as $$ select s.user_id from public.push_subscriptions s where s.endpoint = subscription_owner.endpoint and s.tenant_id = tenant $$;

-- Alpha's staff member is a member of Beta too.
insert into public.tenant_memberships (tenant_id, user_id, role) values (:'beta_tenant', tests.fx('staff'), 'staff');

select tests.deliver(tests.fx('tenants'), tests.fx('staff'), 'staff one') as staff_one \gset
select tests.deliver(tests.fx('tenants'), tests.fx('staff'), 'staff two') as staff_two \gset
select tests.deliver(tests.fx('tenants'), tests.fx('admin'), 'admin one') as admin_one \gset
select tests.deliver(:'beta_tenant', tests.fx('staff'), 'staff in beta') as staff_in_beta \gset
select tests.deliver(:'beta_tenant', :'beta_owner', 'beta owner') as beta_one \gset

-- ---------------------------------------------------------------- reading

select tests.act_as('Alpha_staff', tests.fx('tenants'));
select results_eq('select title from public.inbox_messages order by title', $$values ('staff one'::text), ('staff two')$$,
  'a member reads their own inbox in the tenant, and no one else''s');
select tests.act_as('Alpha_admin', tests.fx('tenants'));
select results_eq('select title from public.inbox_messages', $$values ('admin one'::text)$$, 'so does an admin');
select tests.act_as('Alpha_owner', tests.fx('tenants'));
select is((select count(*) from public.inbox_messages), 0::bigint, 'an owner reads no member''s inbox');

select tests.act_as('Alpha_staff', :'beta_tenant');
select results_eq('select title from public.inbox_messages', $$values ('staff in beta'::text)$$,
  'in another tenant a member reads only that tenant''s messages');
select tests.act_as('Beta_owner', tests.fx('tenants'));
select is((select count(*) from public.inbox_messages), 0::bigint, 'a non-member naming the tenant reads nothing');
select tests.act_as('Beta_owner', :'beta_tenant');
select is((select count(*) from public.inbox_messages where tenant_id = tests.fx('tenants')), 0::bigint,
  'nor does naming the other tenant in the query');
select tests.act_as('Alpha_staff', null);
select is((select count(*) from public.inbox_messages), 0::bigint, 'without a tenant, nothing');
select tests.act_as_anon();
select throws_ok('select 1 from public.inbox_messages', '42501', null, 'anon reads nothing');

-- ---------------------------------------------------------------- marking read

select tests.act_as('Alpha_staff', tests.fx('tenants'));
select is(tests.rows_changed(format('update public.inbox_messages set read_at = now() where id = %L', :'admin_one')), 0::bigint,
  'a member cannot mark another member''s message');
select is(tests.rows_changed(format('update public.inbox_messages set read_at = now() where id = %L', :'staff_in_beta')), 0::bigint,
  'nor their own message of another tenant');
select is(tests.read_at(:'staff_in_beta'), null, 'which stays unread');
select is(tests.rows_changed(format('update public.inbox_messages set read_at = now() where id = %L', :'staff_one')), 1::bigint,
  'a member marks their own message read');
select tests.read_at(:'staff_one') as first_mark \gset
select isnt(:'first_mark'::timestamptz, null::timestamptz, 'it is read');
select is(tests.rows_changed(format('update public.inbox_messages set read_at = now() + interval ''1 hour'' where id = %L', :'staff_one')),
  1::bigint, 'marking it again is allowed');
select is(tests.read_at(:'staff_one'), :'first_mark'::timestamptz, 'and keeps the first mark');
update public.inbox_messages set read_at = null where id = :'staff_one';
select is(tests.read_at(:'staff_one'), :'first_mark'::timestamptz, 'a read message cannot become unread');
select throws_ok(format('update public.inbox_messages set title = ''changed'' where id = %L', :'staff_two'), '42501', null,
  'a member changes nothing but the read mark');
select throws_ok(format('delete from public.inbox_messages where id = %L', :'staff_two'), '42501', null,
  'nor deletes a message');
select throws_ok(format($$insert into public.inbox_messages (tenant_id, user_id, notification_id, template_key, title, body)
  select tenant_id, user_id, notification_id, 'check_in_alerts', 'forged', '' from public.inbox_messages where id = %L$$, :'staff_two'),
  '42501', null, 'nor writes one');
select tests.act_as_operator();
select throws_ok(format('update public.inbox_messages set body = ''rewritten'' where id = %L', :'staff_two'), '42501',
  'an inbox message only takes its read mark', 'what was delivered stays as it was, even for the operator');

-- The worker delivers within the job's tenant only.
select tests.act_as_worker(:'beta_tenant');
select throws_ok(format($$insert into public.inbox_messages (tenant_id, user_id, notification_id, template_key, title, body)
  values (%L, %L, (select n.id from public.notifications n limit 1), 'check_in_alerts', 'misrouted', '')$$,
  tests.fx('tenants'), tests.fx('staff')), '42501', null, 'the worker in Beta''s context delivers nothing to Alpha');

-- ---------------------------------------------------------------- push subscriptions

-- Keys of the stored form (the API checks the point; the table checks the encoding).
select 'B' || repeat('A', 86) as p256dh, repeat('A', 22) as auth_secret \gset
select tests.act_as('Alpha_staff', tests.fx('tenants'));
select lives_ok(format($$select private.register_push_subscription('https://push.example.test/one', %L, %L, null, 'Firefox')$$,
  :'p256dh', :'auth_secret'), 'a member registers their browser');
select is(tests.subscription_owner('https://push.example.test/one', tests.fx('tenants')), tests.fx('staff'), 'as theirs');
select is((select count(*) from public.push_subscriptions), 1::bigint, 'and reads it');
select throws_ok(format($$insert into public.push_subscriptions (user_id, endpoint, p256dh, auth) values (%L, 'https://push.example.test/two', %L, %L)$$,
  tests.fx('staff'), :'p256dh', :'auth_secret'), '42501', null, 'a member writes subscriptions only through the function');
select throws_ok(format($$update public.push_subscriptions set user_id = %L where endpoint = 'https://push.example.test/one'$$, tests.fx('admin')),
  '42501', null, 'and changes none');
select tests.act_as('Alpha_admin', tests.fx('tenants'));
select is((select count(*) from public.push_subscriptions), 0::bigint, 'another member does not see it');
select is(tests.rows_changed($$delete from public.push_subscriptions where endpoint = 'https://push.example.test/one'$$), 0::bigint,
  'nor removes it');
select private.register_push_subscription('https://push.example.test/one', :'p256dh', :'auth_secret', null, 'Chrome') as moved \gset
select is(tests.subscription_owner('https://push.example.test/one', tests.fx('tenants')), tests.fx('admin'),
  'registering the same endpoint makes it the new user''s');
select tests.act_as('Alpha_staff', tests.fx('tenants'));
select is((select count(*) from public.push_subscriptions), 0::bigint, 'and no longer the old one''s');
select tests.act_as('Alpha_admin', tests.fx('tenants'));
select is(tests.rows_changed($$delete from public.push_subscriptions where endpoint = 'https://push.example.test/one'$$), 1::bigint,
  'its user removes it');

select tests.act_as('Beta_owner', tests.fx('tenants'));
select throws_ok(format($$select private.register_push_subscription('https://push.example.test/three', %L, %L, null, null)$$,
  :'p256dh', :'auth_secret'), '42501', null, 'a non-member registers nothing in the tenant');
select tests.act_as('Alpha_staff', tests.fx('tenants'));
select private.register_push_subscription('https://push.example.test/three', :'p256dh', :'auth_secret', null, null) as in_alpha \gset
select tests.act_as('Alpha_staff', :'beta_tenant');
select private.register_push_subscription('https://push.example.test/three', :'p256dh', :'auth_secret', null, null) as in_beta \gset
select is((select count(*) from public.push_subscriptions), 1::bigint,
  'the same browser registered in two tenants is one subscription in each, and each tenant shows its own');
select tests.act_as('Beta_owner', :'beta_tenant');
select is((select count(*) from public.push_subscriptions), 0::bigint, 'another member of that tenant sees none of them');
select tests.act_as_anon();
select throws_ok('select 1 from public.push_subscriptions', '42501', null, 'anon reads no subscription');

-- ---------------------------------------------------------------- membership

select tests.act_as_operator();
delete from public.tenant_memberships where tenant_id = tests.fx('tenants') and user_id = tests.fx('staff');
select is((select count(*) from public.inbox_messages where tenant_id = tests.fx('tenants') and user_id = tests.fx('staff')), 0::bigint,
  'a member''s inbox goes with their membership');
select is((select count(*) from public.push_subscriptions where tenant_id = tests.fx('tenants') and user_id = tests.fx('staff')), 0::bigint,
  'and so do their subscriptions');
select is((select count(*) from public.inbox_messages where tenant_id = :'beta_tenant' and user_id = tests.fx('staff')), 1::bigint,
  'their inbox in another tenant stays');
select is((select count(*) from public.push_subscriptions where tenant_id = :'beta_tenant' and user_id = tests.fx('staff')), 1::bigint,
  'and their subscription there');

select * from finish();
rollback;
