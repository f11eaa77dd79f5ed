-- Both claims' settlements take their tenants in one order, so that two claims settling
-- at once lock the rows they share in the same order and cannot deadlock. Written by
-- scripts/schema-compare.sh --schemas --sql from supabase/schemas.

SET local check_function_bodies = off;

CREATE OR REPLACE FUNCTION private.settle_notification_claim (
  claim jsonb
)
  RETURNS void
  LANGUAGE plpgsql
  SET search_path TO ''
  SET plan_cache_mode TO 'force_generic_plan'
  SET enable_seqscan TO 'off'
  AS $function$
declare
  caller_role text := current_setting('role');
  tenant record;
  sent_now uuid[];
  settled_sent jsonb := '[]';
  reported record;
begin
  perform pgmq.delete('notifications', array(select pgmq_id::bigint from jsonb_array_elements_text(claim -> 'finished') as f(pgmq_id)));
  if jsonb_array_length(coalesce(claim -> 'retried', '[]')) > 0 then
    perform pgmq.set_vt('notifications', r."msgId", r."delaySeconds")
    from jsonb_to_recordset(claim -> 'retried') as r("msgId" bigint, "delaySeconds" integer);
  end if;

  perform set_config('role', 'background_worker', true);
  -- Tenants in one order in every claim, so that two claims settling at once take the
  -- rows they share (a member's push subscriptions) in the same order, never in a cycle.
  for tenant in
    select * from jsonb_to_recordset(claim -> 'tenants')
      as t("tenantId" uuid, changes jsonb, inbox jsonb, "pushAccepted" jsonb, "pushGone" jsonb)
    order by t."tenantId"
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
    with changed as (
      update public.notifications n
      set status = c.status,
          status_reason = c.status_reason,
          subject = coalesce(c.subject, n.subject),
          body = coalesce(c.body, n.body),
          attempts = coalesce(c.attempts, n.attempts),
          recipient_address = coalesce(c.recipient_address, n.recipient_address),
          provider_message_id = coalesce(c.provider_message_id, n.provider_message_id),
          sent_at = case when c.status = 'sent' then now() end,
          send_started_at = case when c.status = 'pending' then c.send_started_at end
      from jsonb_to_recordset(coalesce(tenant.changes, '[]')) as c(
        id uuid, status text, status_reason text, subject text, body text, attempts integer,
        recipient_address text, provider_message_id text, send_started_at timestamptz)
      where n.id = c.id and n.status = 'pending'
      returning n.id, n.status
    )
    select coalesce(array_agg(changed.id) filter (where changed.status = 'sent'), '{}') into sent_now from changed;
    if cardinality(sent_now) > 0 then
      settled_sent := settled_sent || jsonb_build_object('tenantId', tenant."tenantId", 'ids', to_jsonb(sent_now));
    end if;
  end loop;
  perform set_config('role', caller_role, true);

  -- The delivery columns are the recording function's (column grants keep them from the
  -- worker's role): settled as the caller, for the notifications with a state-bearing report.
  for reported in
    select s."tenantId" as tenant_id, e.notification_id
    from jsonb_to_recordset(settled_sent) as s("tenantId" uuid, ids jsonb)
    cross join lateral jsonb_array_elements_text(s.ids) as i(id)
    join lateral (select distinct ev.notification_id from public.notification_events ev
                  where ev.tenant_id = s."tenantId" and ev.notification_id = i.id::uuid and ev.delivery_state is not null) e on true
  loop
    perform private.settle_delivery_state(reported.tenant_id, reported.notification_id);
  end loop;
end
$function$;

CREATE OR REPLACE FUNCTION private.settle_webhook_claim (
  claim jsonb
)
  RETURNS void
  LANGUAGE plpgsql
  SET search_path TO ''
  SET plan_cache_mode TO 'force_generic_plan'
  SET enable_seqscan TO 'off'
  AS $function$
declare
  caller_role text := current_setting('role');
  tenant record;
begin
  perform pgmq.delete('webhooks', array(select m::bigint from jsonb_array_elements_text(claim -> 'finished') as f(m)));
  perform pgmq.set_vt('webhooks', p."msgId", p."delaySeconds")
  from jsonb_to_recordset(claim -> 'postponed') as p("msgId" bigint, "delaySeconds" integer);

  perform set_config('role', 'background_worker', true);
  -- Tenants in one order in every claim, so that two claims settling at once take the
  -- rows they share (a subscription's) in the same order, never in a cycle.
  for tenant in
    select * from jsonb_to_recordset(claim -> 'tenants')
      as t("tenantId" uuid, attempts jsonb, deliveries jsonb, subscriptions jsonb, released jsonb)
    order by t."tenantId"
  loop
    perform set_config('app.tenant_id', tenant."tenantId"::text, true);

    insert into public.webhook_attempts (tenant_id, delivery_id, attempt, started_at, duration_ms, status_code, outcome,
                                         error, response_snippet, next_attempt_at)
    select (select private.request_tenant_id()), a."deliveryId", a.attempt, a."startedAt", a."durationMs", a."statusCode",
           a.outcome, a.error, a."responseSnippet", a."nextAttemptAt"
    from jsonb_to_recordset(coalesce(tenant.attempts, '[]')) as a(
      "deliveryId" uuid, attempt integer, "startedAt" timestamptz, "durationMs" integer, "statusCode" integer,
      outcome text, error text, "responseSnippet" text, "nextAttemptAt" timestamptz)
    on conflict on constraint webhook_attempts_tenant_id_delivery_id_attempt_key do nothing;

    update public.webhook_deliveries d
    set status = c.status,
        attempts = coalesce(c.attempts, d.attempts),
        next_attempt_at = c."nextAttemptAt",
        last_attempt_at = coalesce(c."lastAttemptAt", d.last_attempt_at),
        last_status_code = coalesce(c."lastStatusCode", d.last_status_code),
        ended_at = case when c.status = 'pending' then null else now() end
    from jsonb_to_recordset(coalesce(tenant.deliveries, '[]')) as c(
      id uuid, status text, attempts integer, "nextAttemptAt" timestamptz, "lastAttemptAt" timestamptz, "lastStatusCode" integer)
    where d.tenant_id = (select private.request_tenant_id()) and d.id = c.id and d.status = 'pending';

    if jsonb_array_length(coalesce(tenant.released, '[]')) > 0 then
      update public.webhook_deliveries d
      set attempt_started_at = null
      from jsonb_to_recordset(tenant.released) as r(id uuid, "startedAt" timestamptz)
      where d.tenant_id = (select private.request_tenant_id()) and d.id = r.id and d.attempt_started_at = r."startedAt";
    end if;

    -- failingSince: set it if unset (a failure), or clear it (a success); disable: why.
    update public.webhook_subscriptions s
    set failing_since = case when c.healthy then null else coalesce(s.failing_since, c."failingSince") end,
        enabled = case when c.disable is not null then false else s.enabled end,
        disabled_reason = case when c.disable is not null and s.enabled then c.disable else s.disabled_reason end
    from jsonb_to_recordset(coalesce(tenant.subscriptions, '[]')) as c(
      id uuid, healthy boolean, "failingSince" timestamptz, disable text)
    where s.tenant_id = (select private.request_tenant_id()) and s.id = c.id;
  end loop;
  perform set_config('role', caller_role, true);
end
$function$;
