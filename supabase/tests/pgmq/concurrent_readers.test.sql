-- Two readers in overlapping transactions never receive the same message: the
-- pipeline runs several workers at once. Each reader is its own connection
-- (dblink), because one session cannot contend with itself.
begin;
create extension if not exists pgtap with schema extensions;
create extension if not exists dblink with schema extensions;
select plan(4);

select format('dbname=%s port=%s host=%s user=%s', current_database(), current_setting('port'),
              split_part(current_setting('unix_socket_directories'), ',', 1), current_user) as conninfo \gset

-- Set-up commits on its own connection so both readers can see the messages.
select dblink_connect('setup', :'conninfo');
select dblink_exec('setup', $$ do $set_up$ begin
  if exists (select from pgmq.list_queues() where queue_name = 'tap_concurrent') then
    perform pgmq.drop_queue('tap_concurrent');
  end if;
  perform pgmq.create('tap_concurrent');
  perform pgmq.send_batch('tap_concurrent', array(select jsonb_build_object('n', n) from generate_series(1, 10) n));
end $set_up$ $$);

select dblink_connect('reader_a', :'conninfo');
select dblink_connect('reader_b', :'conninfo');
select dblink_exec('reader_a', 'begin');
select dblink_exec('reader_b', 'begin');

create temporary table got_a as
  select msg_id from dblink('reader_a', $$ select msg_id from pgmq.read('tap_concurrent', 30, 6) $$) as t(msg_id bigint);
-- reader_a holds its six rows uncommitted while reader_b reads.
create temporary table got_b as
  select msg_id from dblink('reader_b', $$ select msg_id from pgmq.read('tap_concurrent', 30, 10) $$) as t(msg_id bigint);

select is((select count(*) from got_a), 6::bigint, 'the first reader gets what it asked for');
select is((select count(*) from got_b), 4::bigint, 'the second reader gets only the messages the first did not claim');
select is_empty('select msg_id from got_a intersect select msg_id from got_b',
  'no message goes to both readers');

select dblink_exec('reader_a', 'commit');
select dblink_exec('reader_b', 'commit');
select is(
  (select count(*) from dblink('setup', $$ select msg_id from pgmq.read('tap_concurrent', 30, 10) $$) as t(msg_id bigint)),
  0::bigint,
  'after both commit, every message is still hidden by its visibility timeout');

select dblink_exec('setup', $$ do $tear_down$ begin perform pgmq.drop_queue('tap_concurrent'); end $tear_down$ $$);
select dblink_disconnect('reader_a');
select dblink_disconnect('reader_b');
select dblink_disconnect('setup');

select * from finish();
rollback;
