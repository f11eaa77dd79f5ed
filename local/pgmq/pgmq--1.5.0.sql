-- The pgmq API for the project's local cluster, written from pgmq's documented
-- behaviour: one table a queue (pgmq.q_<name>) and one archive (pgmq.a_<name>),
-- messages hidden until their visibility timestamp (vt), read_ct counting reads.
\echo Use "CREATE EXTENSION pgmq" to load this file. \quit

create table pgmq.meta (
  queue_name varchar not null unique,
  is_partitioned boolean not null default false,
  is_unlogged boolean not null default false,
  created_at timestamptz not null default now()
);
select pg_catalog.pg_extension_config_dump('pgmq.meta', '');

create type pgmq.message_record as (
  msg_id bigint,
  read_ct integer,
  enqueued_at timestamptz,
  vt timestamptz,
  message jsonb,
  headers jsonb
);

create type pgmq.queue_record as (
  queue_name varchar,
  is_partitioned boolean,
  is_unlogged boolean,
  created_at timestamptz
);

create type pgmq.metrics_result as (
  queue_name text,
  queue_length bigint,
  newest_msg_age_sec integer,
  oldest_msg_age_sec integer,
  total_messages bigint,
  scrape_time timestamptz,
  queue_visible_length bigint
);

-- Queue names become parts of table names, so they are held to identifier rules
-- and folded to lower case the same way everywhere.
create function pgmq._queue_key(queue_name text) returns text
language plpgsql immutable
as $$
begin
  if queue_name is null or queue_name !~ '^[A-Za-z0-9_]{1,47}$' then
    raise exception 'invalid queue name: %', coalesce(queue_name, 'null')
      using errcode = '22023',
            hint = 'Use 1 to 47 letters, digits or underscores.';
  end if;
  return lower(queue_name);
end
$$;

create function pgmq._queue_table(queue_name text) returns text
language plpgsql immutable
as $$ begin return format('pgmq.%I', 'q_' || pgmq._queue_key(queue_name)); end $$;

create function pgmq._archive_table(queue_name text) returns text
language plpgsql immutable
as $$ begin return format('pgmq.%I', 'a_' || pgmq._queue_key(queue_name)); end $$;

create function pgmq._create(queue_name text, unlogged boolean) returns void
language plpgsql
as $$
declare
  queue_key text := pgmq._queue_key(queue_name);
  persistence text := case when unlogged then 'unlogged' else '' end;
begin
  execute format(
    'create %s table if not exists pgmq.%I (
       msg_id bigint primary key generated always as identity,
       read_ct integer not null default 0,
       enqueued_at timestamptz not null default now(),
       vt timestamptz not null,
       message jsonb,
       headers jsonb
     )', persistence, 'q_' || queue_key);
  execute format(
    'create table if not exists pgmq.%I (
       msg_id bigint primary key,
       read_ct integer not null default 0,
       enqueued_at timestamptz not null default now(),
       archived_at timestamptz not null default now(),
       vt timestamptz not null,
       message jsonb,
       headers jsonb
     )', 'a_' || queue_key);
  execute format('create index if not exists %I on pgmq.%I (vt)',
    'q_' || queue_key || '_vt_idx', 'q_' || queue_key);
  execute format('create index if not exists %I on pgmq.%I (archived_at)',
    'archived_at_idx_' || queue_key, 'a_' || queue_key);
  insert into pgmq.meta (queue_name, is_unlogged)
  values (queue_key, unlogged)
  on conflict on constraint meta_queue_name_key do nothing;
end
$$;

create function pgmq.create(queue_name text) returns void
language sql
as $$ select pgmq._create(queue_name, false) $$;

create function pgmq.create_unlogged(queue_name text) returns void
language sql
as $$ select pgmq._create(queue_name, true) $$;

create function pgmq.drop_queue(queue_name text) returns boolean
language plpgsql
as $$
declare
  queue_key text := pgmq._queue_key(queue_name);
begin
  if not exists (select from pgmq.meta m where m.queue_name = queue_key) then
    raise notice 'pgmq queue % does not exist', queue_key;
    return false;
  end if;
  execute format('drop table if exists %s', pgmq._queue_table(queue_key));
  execute format('drop table if exists %s', pgmq._archive_table(queue_key));
  delete from pgmq.meta m where m.queue_name = queue_key;
  return true;
end
$$;

create function pgmq.purge_queue(queue_name text) returns bigint
language plpgsql
as $$
declare
  purged bigint;
begin
  execute format('with gone as (delete from %s returning 1) select count(*) from gone',
    pgmq._queue_table(queue_name))
  into purged;
  return purged;
end
$$;

create function pgmq.list_queues() returns setof pgmq.queue_record
language sql stable
as $$
  select m.queue_name, m.is_partitioned, m.is_unlogged, m.created_at
  from pgmq.meta m
  order by m.created_at, m.queue_name
$$;

-- Every batch variant lands here: messages and their headers pair up by position.
create function pgmq._send(
  queue_name text, msgs jsonb[], headers jsonb[], visible_at timestamptz
) returns setof bigint
language plpgsql
as $$
begin
  if headers is not null and cardinality(headers) <> cardinality(msgs) then
    raise exception 'pgmq: % messages but % headers', cardinality(msgs), cardinality(headers)
      using errcode = '22023';
  end if;
  return query execute format(
    'insert into %s (vt, message, headers)
     select $1, m.body, h.body
     from unnest($2) with ordinality as m(body, position)
     left join unnest($3) with ordinality as h(body, position) using (position)
     order by m.position
     returning msg_id', pgmq._queue_table(queue_name))
  using visible_at, msgs, headers;
end
$$;

-- Every single-message variant lands here, as every notification trigger sends: one
-- row inserted directly. The batch form's unnest, join and sort, planned afresh on
-- every call, and a set-returning call in between cost a trigger a measurable share
-- of its transaction's throughput (pgbench on check-ins).
create function pgmq._send_one(queue_name text, msg jsonb, headers jsonb, visible_at timestamptz)
returns bigint
language plpgsql
as $$
declare
  sent bigint;
begin
  execute format('insert into %s (vt, message, headers) values ($1, $2, $3) returning msg_id', pgmq._queue_table(queue_name))
  into sent
  using visible_at, msg, headers;
  return sent;
end
$$;

create function pgmq.send(queue_name text, msg jsonb, delay integer default 0)
returns setof bigint
language plpgsql
as $$ begin return next pgmq._send_one(queue_name, msg, null, clock_timestamp() + make_interval(secs => delay)); end $$;

create function pgmq.send(queue_name text, msg jsonb, headers jsonb, delay integer default 0)
returns setof bigint
language plpgsql
as $$ begin return next pgmq._send_one(queue_name, msg, headers, clock_timestamp() + make_interval(secs => delay)); end $$;

create function pgmq.send(queue_name text, msg jsonb, delay timestamptz)
returns setof bigint
language plpgsql
as $$ begin return next pgmq._send_one(queue_name, msg, null, delay); end $$;

create function pgmq.send(queue_name text, msg jsonb, headers jsonb, delay timestamptz)
returns setof bigint
language plpgsql
as $$ begin return next pgmq._send_one(queue_name, msg, headers, delay); end $$;

create function pgmq.send_batch(queue_name text, msgs jsonb[], delay integer default 0)
returns setof bigint
language plpgsql
as $$ begin return query select * from pgmq._send(queue_name, msgs, null, clock_timestamp() + make_interval(secs => delay)); end $$;

create function pgmq.send_batch(queue_name text, msgs jsonb[], headers jsonb[], delay integer default 0)
returns setof bigint
language plpgsql
as $$ begin return query select * from pgmq._send(queue_name, msgs, headers, clock_timestamp() + make_interval(secs => delay)); end $$;

create function pgmq.send_batch(queue_name text, msgs jsonb[], delay timestamptz)
returns setof bigint
language plpgsql
as $$ begin return query select * from pgmq._send(queue_name, msgs, null, delay); end $$;

create function pgmq.send_batch(queue_name text, msgs jsonb[], headers jsonb[], delay timestamptz)
returns setof bigint
language plpgsql
as $$ begin return query select * from pgmq._send(queue_name, msgs, headers, delay); end $$;

-- Visible messages are claimed with SKIP LOCKED, so concurrent readers each get
-- different messages and none waits on another.
create function pgmq.read(queue_name text, vt integer, qty integer, conditional jsonb default '{}')
returns setof pgmq.message_record
language plpgsql
as $$
begin
  return query execute format(
    'with claimed as (
       select msg_id from %1$s
       where vt <= clock_timestamp()
         and ($3 = ''{}''::jsonb or message @> $3)
       order by msg_id
       limit $2
       for update skip locked
     )
     update %1$s as q
     set vt = clock_timestamp() + make_interval(secs => $1),
         read_ct = q.read_ct + 1
     from claimed
     where q.msg_id = claimed.msg_id
     returning q.msg_id, q.read_ct, q.enqueued_at, q.vt, q.message, q.headers',
    pgmq._queue_table(queue_name))
  using vt, qty, coalesce(conditional, '{}'::jsonb);
end
$$;

create function pgmq.read_with_poll(
  queue_name text,
  vt integer,
  qty integer,
  max_poll_seconds integer default 5,
  poll_interval_ms integer default 100,
  conditional jsonb default '{}'
) returns setof pgmq.message_record
language plpgsql
as $$
declare
  deadline timestamptz := clock_timestamp() + make_interval(secs => max_poll_seconds);
begin
  loop
    return query select * from pgmq.read(queue_name, vt, qty, conditional);
    if found or clock_timestamp() >= deadline then
      return;
    end if;
    perform pg_sleep(poll_interval_ms / 1000.0);
  end loop;
end
$$;

create function pgmq.pop(queue_name text, qty integer default 1)
returns setof pgmq.message_record
language plpgsql
as $$
begin
  return query execute format(
    'with claimed as (
       select msg_id from %1$s
       where vt <= clock_timestamp()
       order by msg_id
       limit $1
       for update skip locked
     )
     delete from %1$s as q
     using claimed
     where q.msg_id = claimed.msg_id
     returning q.msg_id, q.read_ct, q.enqueued_at, q.vt, q.message, q.headers',
    pgmq._queue_table(queue_name))
  using qty;
end
$$;

create function pgmq.delete(queue_name text, msg_ids bigint[]) returns setof bigint
language plpgsql
as $$
begin
  return query execute format(
    'delete from %s where msg_id = any($1) returning msg_id',
    pgmq._queue_table(queue_name))
  using msg_ids;
end
$$;

create function pgmq.delete(queue_name text, msg_id bigint) returns boolean
language plpgsql
as $$ begin return exists (select from pgmq.delete(queue_name, array[msg_id])); end $$;

create function pgmq.archive(queue_name text, msg_ids bigint[]) returns setof bigint
language plpgsql
as $$
begin
  return query execute format(
    'with moved as (
       delete from %s where msg_id = any($1)
       returning msg_id, read_ct, enqueued_at, vt, message, headers
     )
     insert into %s (msg_id, read_ct, enqueued_at, vt, message, headers)
     select msg_id, read_ct, enqueued_at, vt, message, headers from moved
     returning msg_id',
    pgmq._queue_table(queue_name), pgmq._archive_table(queue_name))
  using msg_ids;
end
$$;

create function pgmq.archive(queue_name text, msg_id bigint) returns boolean
language plpgsql
as $$ begin return exists (select from pgmq.archive(queue_name, array[msg_id])); end $$;

create function pgmq.set_vt(queue_name text, msg_id bigint, vt integer)
returns setof pgmq.message_record
language plpgsql
as $$
begin
  return query execute format(
    'update %s
     set vt = clock_timestamp() + make_interval(secs => $2)
     where msg_id = $1
     returning msg_id, read_ct, enqueued_at, vt, message, headers',
    pgmq._queue_table(queue_name))
  using msg_id, vt;
end
$$;

create function pgmq.metrics(queue_name text) returns pgmq.metrics_result
language plpgsql
as $$
declare
  queue_key text := pgmq._queue_key(queue_name);
  result pgmq.metrics_result;
  sent_ever bigint;
begin
  execute format(
    'select count(*),
            extract(epoch from (now() - max(enqueued_at)))::integer,
            extract(epoch from (now() - min(enqueued_at)))::integer,
            count(*) filter (where vt <= clock_timestamp())
     from %s', pgmq._queue_table(queue_key))
  into result.queue_length, result.newest_msg_age_sec, result.oldest_msg_age_sec,
       result.queue_visible_length;
  execute format('select case when is_called then last_value else 0 end from %s',
    pg_get_serial_sequence(pgmq._queue_table(queue_key), 'msg_id'))
  into sent_ever;
  result.queue_name := queue_key;
  result.total_messages := sent_ever;
  result.scrape_time := now();
  return result;
end
$$;

create function pgmq.metrics_all() returns setof pgmq.metrics_result
language sql
as $$
  select r.*
  from pgmq.meta m
  cross join lateral pgmq.metrics(m.queue_name) r
  order by m.queue_name
$$;
