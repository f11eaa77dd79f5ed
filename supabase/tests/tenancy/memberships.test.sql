-- Creating tenants, adding members by email, roles, and the owner rules.
begin;
\ir ../helpers/setup.psql
select plan(37);

select count(tests.create_user(name)) as users from unnest(array['gina', 'hal', 'ivy', 'joe']) as name \gset

-- Creating a tenant makes the caller its owner.
select tests.act_as('gina');
select (public.create_tenant('Gamma Stays')).id as gamma \gset
select results_eq('select tenant_id, name, role::text from public.list_my_tenants()',
  format('values (%L::uuid, ''Gamma Stays'', ''owner'')', :'gamma'),
  'create_tenant makes the caller the owner, and list_my_tenants shows it without a tenant in context');
select tests.act_as('hal');
select is_empty('select 1 from public.list_my_tenants()', 'list_my_tenants shows nobody else''s tenants');
select tests.act_as_anon();
select throws_ok('select public.create_tenant(''Anon Inn'')', '42501', null, 'anon cannot create a tenant');

-- Adding members by email.
select tests.act_as('gina', :'gamma');
select is((public.add_tenant_member('hal@tests.local', 'admin')).role::text, 'admin', 'an owner adds a member by email');
select is((public.add_tenant_member('  IVY@tests.local ', 'staff')).user_id, tests.user_id('ivy'),
  'the email match ignores case and surrounding spaces');
select throws_ok('select public.add_tenant_member(''nobody@tests.local'')', 'PT404', 'no user has the email nobody@tests.local',
  'adding an email without an account fails clearly');
select throws_ok('select public.add_tenant_member(''hal@tests.local'')', 'PT409', 'hal@tests.local is already a member',
  'adding a member twice fails clearly');

select tests.act_as('ivy', :'gamma');
select throws_ok('select public.add_tenant_member(''joe@tests.local'')', '42501', 'only owners and admins add members',
  'staff cannot add members');
select throws_ok(format('select public.change_tenant_member_role(%L, ''admin'')', tests.user_id('ivy')), '42501',
  'only owners and admins may change another member''s membership', 'staff cannot promote themselves');
select throws_ok(format('select public.remove_tenant_member(%L)', tests.user_id('hal')), '42501',
  'only owners and admins may remove another member''s membership', 'staff cannot remove other members');
select throws_ok(format('select public.remove_tenant_member(%L)', gen_random_uuid()), 'PT404', null,
  'removing someone who is not a member is a 404');
select is((select count(*) from public.tenant_memberships), 3::bigint, 'staff see the tenant''s member list');

-- Admins manage members but not owners.
select tests.act_as('hal', :'gamma');
select is((public.add_tenant_member('joe@tests.local')).role::text, 'staff', 'an admin adds a member, staff by default');
select is((public.change_tenant_member_role(tests.user_id('joe'), 'admin')).role::text, 'admin', 'an admin changes a member''s role');
select throws_ok(format('select public.change_tenant_member_role(%L, ''owner'')', tests.user_id('joe')), '42501',
  'only an owner can grant or remove the owner role', 'an admin cannot make an owner');
select throws_ok(format('select public.change_tenant_member_role(%L, ''staff'')', tests.user_id('gina')), '42501',
  'only an owner can grant or remove the owner role', 'an admin cannot demote an owner');
select throws_ok(format('select public.remove_tenant_member(%L)', tests.user_id('gina')), '42501',
  'only an owner can grant or remove the owner role', 'an admin cannot remove an owner');
select throws_ok(format('update public.tenant_memberships set user_id = %L where user_id = %L',
  tests.user_id('gina'), tests.user_id('joe')), '42501', 'a membership''s tenant and user cannot change',
  'a membership cannot be turned into someone else''s');
select lives_ok(format('select public.remove_tenant_member(%L)', tests.user_id('joe')), 'an admin removes a member');

-- A tenant always keeps an owner.
select tests.act_as('gina', :'gamma');
select throws_ok(format('select public.change_tenant_member_role(%L, ''admin'')', tests.user_id('gina')), 'PT409',
  'a tenant must keep at least one owner', 'the last owner cannot step down');
select throws_ok(format('select public.remove_tenant_member(%L)', tests.user_id('gina')), 'PT409',
  'a tenant must keep at least one owner', 'the last owner cannot leave');
select is((public.change_tenant_member_role(tests.user_id('hal'), 'owner')).role::text, 'owner', 'an owner makes another owner');
select is((public.change_tenant_member_role(tests.user_id('gina'), 'admin')).role::text, 'admin',
  'with a second owner in place, an owner can step down');
select tests.act_as('hal', :'gamma');
select throws_ok(format('select public.remove_tenant_member(%L)', tests.user_id('hal')), 'PT409',
  'a tenant must keep at least one owner', 'the new sole owner is held to the same rule');

-- Members can leave.
select tests.act_as('ivy', :'gamma');
select lives_ok(format('select public.remove_tenant_member(%L)', tests.user_id('ivy')), 'a staff member leaves the tenant');
select is_empty('select 1 from public.tenants', 'after leaving, the tenant is out of reach');

-- Tenant settings: managers change them, within their rules.
select tests.act_as('gina', :'gamma');
select is(tests.rows_changed('update public.tenants set sender_email = ''front@gamma.example'', sender_name = ''Gamma Stays'''),
  1::bigint, 'an admin updates the tenant''s settings');
select is((select sender_email from public.tenants), 'front@gamma.example', 'the sender address is saved');
select throws_ok('update public.tenants set sender_email = ''not an address''', '23514', null,
  'a malformed sender address is refused');
select is(tests.rows_changed('delete from public.tenants'), 0::bigint, 'an admin cannot delete the tenant');

-- Tasks can only be assigned to members, and leaving unassigns.
select tests.act_as_operator();
insert into public.properties (tenant_id, name, timezone, currency) values (:'gamma', 'Gamma Loft', 'America/New_York', 'USD');
select tests.act_as('gina', :'gamma');
select throws_ok(format('insert into public.tasks (property_id, type, title, assignee_id) select id, ''other'', ''Water plants'', %L from public.properties',
  tests.user_id('joe')), '23503', null, 'a task cannot be assigned to someone outside the tenant');
insert into public.tasks (property_id, type, title, assignee_id)
  select id, 'other', 'Water plants', tests.user_id('gina') from public.properties;
select tests.act_as('hal', :'gamma');
select lives_ok(format('select public.change_tenant_member_role(%L, ''staff'')', tests.user_id('gina')), 'the owner demotes gina');
select lives_ok(format('select public.remove_tenant_member(%L)', tests.user_id('gina')), 'the owner removes gina');
select is((select assignee_id from public.tasks), null, 'removing a member unassigns their tasks');

-- The owner deletes the tenant; everything of it goes.
select is(tests.rows_changed('delete from public.tenants'), 1::bigint, 'the owner deletes the tenant');
select tests.act_as_operator();
select is((select count(*) from public.tenant_memberships where tenant_id = :'gamma'), 0::bigint,
  'deleting a tenant removes its memberships, owners included');
select is((select count(*) from public.tasks where tenant_id = :'gamma'), 0::bigint, 'and its data');

select * from finish();
rollback;
