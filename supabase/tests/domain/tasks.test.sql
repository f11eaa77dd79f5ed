-- The task lifecycle.
begin;
\ir ../helpers/setup.psql
select plan(22);

select tests.use_fixture(tests.make_tenant('Alpha')) as fx \gset

create function tests.task_in(status text) returns uuid
language plpgsql as $$
declare
  tid uuid;
  step text;
begin
  insert into public.tasks (property_id, unit_id, type, title)
  values (tests.fx('properties'), tests.fx('units'), 'inspection', 'Check smoke alarm')
  returning id into tid;
  foreach step in array case status
    when 'in_progress' then array['in_progress']
    when 'done' then array['in_progress', 'done']
    when 'cancelled' then array['cancelled']
    else array[]::text[] end
  loop
    update public.tasks set status = step where id = tid;
  end loop;
  return tid;
end
$$;

select tests.act_as('Alpha_staff', tests.fx('tenants'));

-- Every pair of statuses: six steps pass, the other six fail clearly.
select is(tests.error_of(format('update public.tasks set status = %L where id = %L', target, tests.task_in(origin))),
          case when origin in ('open', 'in_progress') then null else 'PT409' end,
          format('%s -> %s is %s', origin, target, case when origin in ('open', 'in_progress') then 'allowed' else 'refused' end))
from unnest(array['open', 'in_progress', 'done', 'cancelled']) as origin,
     unnest(array['open', 'in_progress', 'done', 'cancelled']) as target
where origin <> target;

select throws_ok(format('update public.tasks set status = ''open'' where id = %L', tests.task_in('done')), 'PT409',
  'a done task cannot become open', 'a refused step names both statuses');
select throws_ok(format('update public.tasks set title = ''Renamed'' where id = %L', tests.task_in('cancelled')), 'PT409',
  'a cancelled task can no longer change', 'a finished task cannot be edited');
select throws_ok(format('insert into public.tasks (property_id, type, title, status) values (%L, ''other'', ''x'', ''done'')',
  tests.fx('properties')), '23514', 'a task starts open or in_progress, not done', 'a task cannot be created finished');
select throws_ok(format('insert into public.tasks (property_id, type, title) values (%L, ''laundry'', ''x'')',
  tests.fx('properties')), '23514', null, 'task types are a closed list');

select tests.task_in('done') as done_id \gset
select results_eq(format('select started_at is not null, completed_at is not null, cancelled_at is null from public.tasks where id = %L', :'done_id'),
  $$values (true, true, true)$$, 'working and finishing a task stamp started_at and completed_at');
select tests.act_as_operator();
insert into public.properties (tenant_id, name, timezone, currency)
  values (tests.fx('tenants'), 'Second house', 'Asia/Tokyo', 'JPY') returning id as other_property \gset
select tests.act_as('Alpha_staff', tests.fx('tenants'));
select throws_ok(format('insert into public.tasks (property_id, unit_id, type, title) values (%L, %L, ''cleaning'', ''x'')',
  :'other_property', tests.fx('units')), '23503', null, 'a task''s unit must be in the task''s property');

-- A finished task lets go of a member who leaves, but a client cannot unassign it.
select tests.act_as('Alpha_admin', tests.fx('tenants'));
insert into public.tasks (property_id, unit_id, type, title, assignee_id)
  values (tests.fx('properties'), tests.fx('units'), 'cleaning', 'Turn down 101', tests.fx('staff'))
  returning id as assigned_task \gset
update public.tasks set status = 'done' where id = :'assigned_task';
select throws_ok(format('update public.tasks set assignee_id = null where id = %L', :'assigned_task'), 'PT409',
  'a done task can no longer change', 'a client cannot unassign a finished task');
select lives_ok($$select public.remove_tenant_member(tests.fx('staff'))$$,
  'a member assigned to a finished task can be removed');
select results_eq(format('select status, assignee_id from public.tasks where id = %L', :'assigned_task'),
  format($$values ('done'::text, null::uuid)$$), 'the finished task stays done and loses its assignee');
select throws_ok($$select public.remove_tenant_member(tests.fx('staff'))$$, 'PT404', null,
  'removing someone who is no longer a member is a 404');

select * from finish();
rollback;
