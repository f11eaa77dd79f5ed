-- The notifications worker records a claim in one statement instead of three or four per
-- tenant. Through a transaction pooler nothing is prepared, and postgres.js has each
-- statement with parameters described before it binds it, one round trip more that also
-- holds back every statement after it: a claim across ten tenants spent most of its time
-- waiting on those. One call here is one such statement for the whole claim.
--
-- The claim, as src/notifications/worker.ts builds it:
--   {finished: [msg_id], retried: [{msgId, delaySeconds}],
--    tenants: [{tenantId, changes: [...], inbox: [...], pushAccepted: [uuid], pushGone: [uuid]}]}
-- The queue is the caller's (the functions' login role), so its jobs are deleted and
-- postponed first; then the rest runs as background_worker, tenant by tenant in that
-- tenant's context, so RLS decides what each statement touches, as it did statement by
-- statement. The role stays set for the rest of the transaction, which the worker ends
-- right after. Invoker's rights: a security definer function may not change the role.
create or replace function private.settle_notification_claim(claim jsonb)
returns void
language plpgsql
set search_path = ''
as $$
declare
  tenant record;
begin
  perform pgmq.delete('notifications', array(select pgmq_id::bigint from jsonb_array_elements_text(claim -> 'finished') as f(pgmq_id)));
  perform pgmq.set_vt('notifications', r."msgId", r."delaySeconds")
  from jsonb_to_recordset(claim -> 'retried') as r("msgId" bigint, "delaySeconds" integer);

  perform set_config('role', 'background_worker', true);
  for tenant in
    select * from jsonb_to_recordset(claim -> 'tenants')
      as t("tenantId" uuid, changes jsonb, inbox jsonb, "pushAccepted" jsonb, "pushGone" jsonb)
  loop
    perform set_config('app.tenant_id', tenant."tenantId"::text, true);

    -- Once per notification and member, however often a job comes back; a member who left
    -- since the claim was loaded has no inbox here any more.
    insert into public.inbox_messages (tenant_id, notification_id, user_id, template_key, title, body, url)
    select private.request_tenant_id(), m."notificationId", m."userId", m."templateKey", m.title, m.body, m.url
    from jsonb_to_recordset(coalesce(tenant.inbox, '[]')) as m(
      "notificationId" uuid, "userId" uuid, "templateKey" text, title text, body text, url text)
    where exists (select from public.tenant_memberships tm
                  where tm.tenant_id = private.request_tenant_id() and tm.user_id = m."userId")
    on conflict on constraint inbox_messages_tenant_id_notification_id_user_id_key do nothing;

    update public.push_subscriptions set last_accepted_at = now()
    where id in (select s::uuid from jsonb_array_elements_text(coalesce(tenant."pushAccepted", '[]')) as a(s));
    delete from public.push_subscriptions
    where id in (select s::uuid from jsonb_array_elements_text(coalesce(tenant."pushGone", '[]')) as g(s));

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
revoke all on function private.settle_notification_claim(jsonb) from public;
