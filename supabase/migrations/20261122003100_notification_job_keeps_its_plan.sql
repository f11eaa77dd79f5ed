-- The one place a notification's job is built, rewritten in PL/pgSQL with the same
-- signature, owner rights and search_path. As a SQL function with a SET clause it was
-- parsed and planned again on every call, that is on every check-in, check-out and
-- cancellation and every access code sent: perf on backends running check-ins found
-- that parse and plan under fmgr_sql, which 20261122003000 missed because this
-- function is not a policy helper.
create or replace function private.send_notification_job(notification_id uuid, tenant uuid)
returns void
language plpgsql
set search_path = ''
as $$
begin
  perform pgmq.send('notifications', jsonb_build_object('notificationId', notification_id, 'tenantId', tenant));
end
$$;
revoke all on function private.send_notification_job(uuid, uuid) from public;
