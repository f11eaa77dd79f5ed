-- The job the notifications worker reads is built in one place, so a new
-- notification and an operator's retry cannot drift apart in what they send.
create or replace function private.send_notification_job(notification_id uuid, tenant uuid)
returns void
language sql
set search_path = ''
as $$
  select from pgmq.send('notifications', jsonb_build_object('notificationId', notification_id, 'tenantId', tenant))
$$;
revoke all on function private.send_notification_job(uuid, uuid) from public;

create or replace function private.enqueue_notification(
  tenant uuid, template text, guest uuid, reservation uuid, access_code uuid default null
) returns uuid
language plpgsql security definer
set search_path = ''
as $$
declare
  notification_id uuid;
begin
  insert into public.notifications (tenant_id, recipient_id, recipient_type, template_key, channel, reservation_id, access_code_id)
  values (tenant, guest, 'guest', template, 'email', reservation, access_code)
  returning id into notification_id;
  perform private.send_notification_job(notification_id, tenant);
  return notification_id;
end
$$;

create or replace function private.retry_notification(notification_id uuid)
returns boolean
language plpgsql
set search_path = ''
as $$
declare
  tenant uuid;
begin
  update public.notifications n
  set status = 'pending', status_reason = null, attempts = 0
  where n.id = notification_id and n.status = 'failed'
  returning n.tenant_id into tenant;
  if tenant is null then
    return false;
  end if;
  perform private.send_notification_job(notification_id, tenant);
  return true;
end
$$;
