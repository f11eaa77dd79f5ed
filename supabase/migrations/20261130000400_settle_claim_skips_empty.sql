-- private.settle_notification_claim runs only the statements a tenant's outcomes need: a
-- claim's tenants mostly have no push subscription to stamp or remove and often no inbox
-- message, and each statement skipped is one planless but not free execution under RLS
-- per tenant of every claim. The request's tenant is read once per statement, in a
-- sub-select, not once per row.
create or replace function private.settle_notification_claim(claim jsonb)
returns void
language plpgsql
set search_path = ''
as $$
declare
  tenant record;
begin
  perform pgmq.delete('notifications', array(select pgmq_id::bigint from jsonb_array_elements_text(claim -> 'finished') as f(pgmq_id)));
  if jsonb_array_length(coalesce(claim -> 'retried', '[]')) > 0 then
    perform pgmq.set_vt('notifications', r."msgId", r."delaySeconds")
    from jsonb_to_recordset(claim -> 'retried') as r("msgId" bigint, "delaySeconds" integer);
  end if;

  perform set_config('role', 'background_worker', true);
  for tenant in
    select * from jsonb_to_recordset(claim -> 'tenants')
      as t("tenantId" uuid, changes jsonb, inbox jsonb, "pushAccepted" jsonb, "pushGone" jsonb)
  loop
    perform set_config('app.tenant_id', tenant."tenantId"::text, true);

    -- Once per notification and member, however often a job comes back; a member who left
    -- since the claim was loaded has no inbox here any more.
    if jsonb_array_length(coalesce(tenant.inbox, '[]')) > 0 then
      insert into public.inbox_messages (tenant_id, notification_id, user_id, template_key, title, body, url)
      select (select private.request_tenant_id()), m."notificationId", m."userId", m."templateKey", m.title, m.body, m.url
      from jsonb_to_recordset(tenant.inbox) as m(
        "notificationId" uuid, "userId" uuid, "templateKey" text, title text, body text, url text)
      where exists (select from public.tenant_memberships tm
                    where tm.tenant_id = (select private.request_tenant_id()) and tm.user_id = m."userId")
      on conflict on constraint inbox_messages_tenant_id_notification_id_user_id_key do nothing;
    end if;

    if jsonb_array_length(coalesce(tenant."pushAccepted", '[]')) > 0 then
      update public.push_subscriptions set last_accepted_at = now()
      where id in (select s::uuid from jsonb_array_elements_text(tenant."pushAccepted") as a(s));
    end if;
    if jsonb_array_length(coalesce(tenant."pushGone", '[]')) > 0 then
      delete from public.push_subscriptions
      where id in (select s::uuid from jsonb_array_elements_text(tenant."pushGone") as g(s));
    end if;

    -- Only a pending notification takes a change: it is marked sent only once. Columns a
    -- change leaves out keep their value; sent_at is set with `sent` and cleared otherwise.
    update public.notifications n
    set status = c.status,
        status_reason = c.status_reason,
        subject = coalesce(c.subject, n.subject),
        body = coalesce(c.body, n.body),
        attempts = coalesce(c.attempts, n.attempts),
        recipient_address = coalesce(c.recipient_address, n.recipient_address),
        provider_message_id = coalesce(c.provider_message_id, n.provider_message_id),
        sent_at = case when c.status = 'sent' then now() end
    from jsonb_to_recordset(coalesce(tenant.changes, '[]')) as c(
      id uuid, status text, status_reason text, subject text, body text, attempts integer,
      recipient_address text, provider_message_id text)
    where n.id = c.id and n.status = 'pending';
  end loop;
end
$$;
