-- The notification trigger's job goes through pgmq.send's base form, (queue, message,
-- headers, visible at). pgmq's shorter forms, pgmq.send(queue, message) among them,
-- are SQL functions that call this one; a SQL function called from PL/pgSQL has its
-- body parsed and planned again on every call. In loops of 3,000, a check-in's whole
-- enqueue (the notification row and its job) took about 117 µs through the short
-- form and 94 µs through this one; without any job it takes about 54.
-- The base form is a PL/pgSQL function in every pgmq from 1.5.0 on (hosted Supabase
-- ships 1.5.1; the local stack pins 1.11.0). pgmq 1.4.4, which older hosted projects
-- may still have, has no base form: there `alter extension pgmq update` comes first,
-- and this migration says so rather than leaving every check-in to fail.
do $$
declare
  installed text := (select e.extversion from pg_catalog.pg_extension e where e.extname = 'pgmq');
begin
  if pg_catalog.to_regprocedure('pgmq.send(text, jsonb, jsonb, timestamp with time zone)') is null then
    raise exception 'pgmq % has no pgmq.send(text, jsonb, jsonb, timestamptz); it came with pgmq 1.5.0', installed
      using hint = 'Run: alter extension pgmq update;';
  end if;
end
$$;

create or replace function private.send_notification_job(notification_id uuid, tenant uuid)
returns void
language plpgsql
set search_path = ''
as $$
begin
  -- Visible at once, as pgmq.send(queue, message) would make it; no headers.
  perform pgmq.send('notifications', jsonb_build_object('notificationId', notification_id, 'tenantId', tenant),
                    null::jsonb, clock_timestamp());
end
$$;
