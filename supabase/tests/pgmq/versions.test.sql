-- The project's calls into pgmq work on the pgmq hosted Supabase ships (1.5.1) and
-- on the one the local stack pins (1.11.0). Between them pgmq added overloads to
-- set_vt (an array of ids, a timestamp), added last_read_at to the rows read and
-- set_vt return, and made send_batch refuse an empty batch. So every call resolves,
-- with the argument types the project gives it, to a form both versions have; the
-- worker names the columns it reads; no batch it sends is empty. A view over a call
-- records the function the call resolved to, which is how each is checked here.
begin;
create extension if not exists pgtap with schema extensions;
set local client_min_messages = warning;
select plan(12);

-- The forms the project calls, each in pgmq 1.5.1 (its script and the upgrade
-- scripts up to it) and in 1.11.0, and who calls it.
create temporary table both_versions (signature text primary key, caller text not null);
insert into both_versions values
  ('create(queue_name text)', 'the notifications migration, the bench'),
  ('list_queues()', 'the notifications migration'),
  ('send(queue_name text, msg jsonb, headers jsonb, delay timestamp with time zone)', 'the notification trigger''s job'),
  ('send(queue_name text, msg jsonb)', 'the worker''s tests'),
  ('read(queue_name text, vt integer, qty integer, conditional jsonb)', 'the worker''s claim'),
  ('delete(queue_name text, msg_ids bigint[])', 'the worker''s settlement'),
  ('archive(queue_name text, msg_ids bigint[])', 'the worker, for a malformed job'),
  ('set_vt(queue_name text, msg_id bigint, vt integer)', 'the worker''s retry, the test support, the bench'),
  ('send_batch(queue_name text, msgs jsonb[])', 'the bench'),
  ('purge_queue(queue_name text)', 'the bench'),
  ('drop_queue(queue_name text)', 'the bench');

select is_empty(
  $$ select signature from both_versions
     except
     select p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ')'
     from pg_proc p where p.pronamespace = 'pgmq'::regnamespace $$,
  'the installed pgmq has every form the project calls');

select ok(
  string_to_array((select extversion from pg_extension where extname = 'pgmq'), '.')::int[] >= '{1,5,0}',
  'the installed pgmq is 1.5.0 or later, as the notifications migration demands');

-- The pgmq functions a statement calls, as it resolved them.
create function pg_temp.resolved(statement text) returns text[]
language plpgsql as $$
declare
  found text[];
begin
  execute format('create temporary view resolved_call as %s', statement);
  select array_agg(distinct p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ')')
  into found
  from pg_depend d
  join pg_rewrite r on r.oid = d.objid and d.classid = 'pg_rewrite'::regclass
  join pg_proc p on p.oid = d.refobjid and d.refclassid = 'pg_proc'::regclass
  where r.ev_class = 'pg_temp.resolved_call'::regclass and p.pronamespace = 'pgmq'::regnamespace;
  drop view pg_temp.resolved_call;
  return found;
end
$$;

create function pg_temp.in_both(calls text[]) returns boolean
language sql as $$ select calls is not null and calls <@ array(select signature from both_versions) $$;

-- Each statement as the project sends it (src/notifications/worker.ts,
-- test/support/notifications.ts, the migrations), its values typed as they are there.
select ok(pg_temp.in_both(pg_temp.resolved(
  $$ select from pgmq.send('notifications', jsonb_build_object('notificationId', gen_random_uuid()), null::jsonb, clock_timestamp()) $$)),
  'the trigger''s job goes through send''s base form');
select ok(pg_temp.in_both(pg_temp.resolved(
  $$ select msg_id::text, read_ct, message from pgmq.read('notifications', 60, 50) $$)),
  'the worker''s claim resolves to a read both versions have');
select ok(pg_temp.in_both(pg_temp.resolved(
  $$ select (select count(*) from pgmq.delete('notifications', array[1, 2]::bigint[])) as deleted,
            (select count(*) from unnest(array[3]::bigint[], array[30]::integer[]) as r(msg_id, delay),
                    lateral pgmq.set_vt('notifications', r.msg_id, r.delay)) as postponed $$)),
  'the worker''s settlement resolves to a delete and a set_vt both versions have');
select ok(pg_temp.in_both(pg_temp.resolved(
  $$ select pgmq.archive('notifications', array[1]::bigint[]) $$)),
  'the worker''s archive of malformed jobs resolves to an archive both versions have');
select ok(pg_temp.in_both(pg_temp.resolved(
  $$ select pgmq.set_vt('notifications', msg_id, 0) from pgmq.q_notifications $$)),
  'the test support''s set_vt resolves to the one both versions have');
select ok(pg_temp.in_both(pg_temp.resolved(
  $$ select from pgmq.list_queues() q where q.queue_name = 'notifications' $$)),
  'the migration''s look for its queue resolves to list_queues');

-- Why the worker types the ids and delays it hands set_vt: where pgmq has more than
-- the one set_vt (1.8.0 on), untyped values match several and the call is refused.
select case
  when (select count(*) from pg_proc where pronamespace = 'pgmq'::regnamespace and proname = 'set_vt') > 1 then
    throws_ok($$ prepare untyped_set_vt as select * from pgmq.set_vt('notifications', $1, $2) $$, '42725', null,
      'set_vt with untyped id and timeout is ambiguous in this pgmq')
  else
    lives_ok($$ prepare untyped_set_vt as select * from pgmq.set_vt('notifications', $1, $2) $$,
      'set_vt with untyped id and timeout resolves in this pgmq')
end;

-- The rows read and set_vt return: last_read_at (1.10 on) sits between enqueued_at
-- and vt, so their columns are read by name.
select ok(
  array['msg_id', 'read_ct', 'enqueued_at', 'vt', 'message', 'headers']::name[]
    <@ array(select attname from pg_attribute where attrelid = 'pgmq.message_record'::regclass and attnum > 0),
  'a read message carries the columns the worker names');

-- The trigger's job, read back the way the worker claims it.
select pgmq.create('tap_versions');
select from pgmq.send('tap_versions', jsonb_build_object('notificationId', 'n', 'tenantId', 't'), null::jsonb, clock_timestamp());
select results_eq(
  $$ select read_ct, message from pgmq.read('tap_versions', 60, 50) $$,
  $$ values (1, '{"notificationId": "n", "tenantId": "t"}'::jsonb) $$,
  'a job sent through send''s base form is visible at once and claimed whole');
select is(
  (select count(*) from pgmq.q_tap_versions where headers is not null), 0::bigint,
  'the job carries no headers');

select * from finish();
rollback;
