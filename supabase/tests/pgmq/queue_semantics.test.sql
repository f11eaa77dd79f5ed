-- pgmq's semantics, as the notification pipeline relies on them. The same file runs
-- against the pgmq the local stack pins and against hosted Supabase's
-- (`supabase test db`), so it asserts nothing that only one of them does.
begin;
create extension if not exists pgtap with schema extensions;
set local client_min_messages = warning;
select plan(48);

select has_function('pgmq', fn, format('pgmq.%s exists', fn))
from unnest(array['create', 'drop_queue', 'purge_queue', 'list_queues', 'send', 'send_batch',
                  'read', 'read_with_poll', 'pop', 'delete', 'archive', 'set_vt', 'metrics']) as fn;

select pgmq.create('tap_q');
select has_table('pgmq', 'q_tap_q', 'create makes the queue table pgmq.q_<name>');
select has_table('pgmq', 'a_tap_q', 'create makes the archive table pgmq.a_<name>');
-- pgmq 1.10 added last_read_at among them, so no test or query of ours takes the
-- columns by position or asks for exactly these.
select ok(
  array['msg_id', 'read_ct', 'enqueued_at', 'vt', 'message', 'headers']::name[]
    <@ array(select attname from pg_attribute where attrelid = 'pgmq.q_tap_q'::regclass and attnum > 0 and not attisdropped),
  'queue rows carry the message columns the pipeline reads');
select ok(exists (select from pgmq.list_queues() where queue_name = 'tap_q'), 'list_queues lists the new queue');

-- Visibility timeout and read_ct.
select pgmq.send('tap_q', '{"n": 1}') as first_id \gset
select results_eq(
  $$ select msg_id, read_ct, message from pgmq.read('tap_q', 30, 10) $$,
  format($$ values (%s::bigint, 1, '{"n": 1}'::jsonb) $$, :first_id),
  'read returns the message with read_ct 1');
select is_empty($$ select * from pgmq.read('tap_q', 30, 10) $$,
  'a read message is invisible until its vt');
select ok((select vt > clock_timestamp() + interval '25 seconds' from pgmq.q_tap_q where msg_id = :first_id),
  'read pushes vt forward by the visibility timeout');
select results_eq(
  format($$ select read_ct from pgmq.set_vt('tap_q', %s, 0) $$, :first_id),
  $$ values (1) $$,
  'set_vt returns the message without counting a read');
select results_eq($$ select read_ct from pgmq.read('tap_q', 30, 10) $$, $$ values (2) $$,
  'read_ct counts every read');

-- Delay, batches, headers.
select pgmq.send('tap_q', '{"later": true}', 60);
select is_empty($$ select * from pgmq.read('tap_q', 30, 10) $$,
  'a delayed message stays invisible until its delay passes');
-- metrics compares vt with now(), the transaction's start, not the clock: what this
-- transaction sent or read is never counted visible here.
select results_eq(
  $$ select queue_length, queue_visible_length from pgmq.metrics('tap_q') $$,
  $$ values (2::bigint, 0::bigint) $$,
  'metrics count all messages, and as visible none sent or read since the transaction began');
select results_eq(
  $$ select count(*)::integer from pgmq.send_batch('tap_q', array['{"b": 1}', '{"b": 2}', '{"b": 3}']::jsonb[]) $$,
  $$ values (3) $$,
  'send_batch returns one id per message');
select results_eq(
  $$ select message ->> 'b' from pgmq.read('tap_q', 30, 10) order by msg_id $$,
  $$ values ('1'), ('2'), ('3') $$,
  'a batch is read in the order it was sent');
select pgmq.send('tap_q', '{"h": true}', '{"trace": "abc"}'::jsonb) as header_id \gset
select is((select headers ->> 'trace' from pgmq.q_tap_q where msg_id = :header_id), 'abc',
  'send with headers stores them beside the message');
select results_eq(
  $$ select message from pgmq.read('tap_q', 30, 10, '{"h": true}') $$,
  $$ values ('{"h": true}'::jsonb) $$,
  'a conditional read returns only matching messages');

-- Archive moves the row; delete removes it.
select ok(pgmq.archive('tap_q', :first_id), 'archive of a queued message answers true');
select is_empty(format('select * from pgmq.q_tap_q where msg_id = %s', :first_id),
  'an archived message leaves the queue');
select results_eq(
  format('select msg_id, read_ct from pgmq.a_tap_q where msg_id = %s and archived_at is not null', :first_id),
  format('values (%s::bigint, 2)', :first_id),
  'an archived message keeps its id and read_ct in the archive');
select ok(not pgmq.archive('tap_q', :first_id), 'archiving it again answers false');
select ok(pgmq.delete('tap_q', :header_id), 'delete of a queued message answers true');
select ok(not pgmq.delete('tap_q', :header_id), 'deleting it again answers false');
select results_eq(
  $$ select count(*)::integer from pgmq.archive('tap_q', array(select msg_id from pgmq.q_tap_q where message ? 'b' order by msg_id limit 2)) $$,
  $$ values (2) $$,
  'archive of many returns the ids it moved');
select results_eq(
  $$ select count(*)::integer from pgmq.delete('tap_q', array(select msg_id from pgmq.q_tap_q where message ? 'b')) $$,
  $$ values (1) $$,
  'delete of many returns the ids it removed');

-- pop takes the first visible message out for good.
select pgmq.send('tap_q', '{"pop": 1}') as pop_id \gset
select results_eq($$ select message from pgmq.pop('tap_q') $$, $$ values ('{"pop": 1}'::jsonb) $$,
  'pop returns the first visible message');
select is_empty(format('select * from pgmq.q_tap_q where msg_id = %s', :pop_id), 'pop removes it');

-- Polling waits up to its limit on an empty queue, and returns as soon as a message is there.
select clock_timestamp() as poll_started \gset
select is_empty($$ select * from pgmq.read_with_poll('tap_q', 30, 1, 1, 50, '{"never": true}') $$,
  'read_with_poll on nothing visible returns nothing');
select ok(clock_timestamp() - :'poll_started'::timestamptz >= interval '1 second',
  'read_with_poll waited its max_poll_seconds');
select pgmq.send('tap_q', '{"poll": 1}');
select results_eq($$ select message from pgmq.read_with_poll('tap_q', 30, 1, 5, 50) $$,
  $$ values ('{"poll": 1}'::jsonb) $$,
  'read_with_poll returns a visible message');

select is(pgmq.purge_queue('tap_q'), 2::bigint, 'purge_queue returns how many it removed');
select ok(pgmq.drop_queue('tap_q'), 'drop_queue answers true');
select hasnt_table('pgmq', 'q_tap_q', 'drop_queue removes the queue table');

-- Queue names: pgmq refuses only what could break out of its SQL, and names longer
-- than its table names allow, each with a plain raise (SQLSTATE P0001). It keeps a
-- name as given: list_queues shows it so, while its tables are in lower case.
select throws_ok($$ select pgmq.create('bad;name') $$, 'P0001', null, 'a queue name with a semicolon is refused');
select throws_ok($$ select pgmq.create(repeat('q', 60)) $$, 'P0001', null, 'a queue name of 60 characters is refused');
select pgmq.create('Tap_Mixed');
select ok(exists (select from pgmq.list_queues() where queue_name = 'Tap_Mixed'),
  'list_queues gives a queue''s name as it was created');
select has_table('pgmq', 'q_tap_mixed', 'the queue''s table name is in lower case');

select * from finish();
rollback;
