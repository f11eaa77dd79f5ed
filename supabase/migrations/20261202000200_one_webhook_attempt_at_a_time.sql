-- No two attempts of one webhook delivery are ever in flight together. A claim whose run
-- was slowed or stopped can outlive its jobs' visibility, and a manual redelivery puts a
-- second job beside the first: either could have a delivery posted twice at once, and an
-- endpoint that handles each post as it comes would take the same event twice at once.
--
-- A claim takes each delivery it will post with a lease: the instant its attempt starts,
-- written when the claim is loaded if no other attempt holds the delivery (none started,
-- or the last one started longer ago than an attempt can last: the post's 10 s timeout
-- and a margin). A delivery held by another attempt waits until that one has ended. The
-- claim's settlement gives its leases back, each only if it is still the one it took.

alter table public.webhook_deliveries add column attempt_started_at timestamptz;

comment on column public.webhook_deliveries.attempt_started_at is
  'When the attempt that may be in flight started: a claim holds the delivery from then until it settles, '
  'or until an attempt could no longer be under way. Null when no attempt is.';

grant update (attempt_started_at) on public.webhook_deliveries to background_worker;

-- As before, and: `released` in a tenant's entry lists the leases the claim took,
-- [{id, startedAt}], each cleared if the delivery still carries that one.
create or replace function private.settle_webhook_claim(claim jsonb)
returns void
language plpgsql
set search_path = ''
as $$
declare
  tenant record;
begin
  perform pgmq.delete('webhooks', array(select m::bigint from jsonb_array_elements_text(claim -> 'finished') as f(m)));
  perform pgmq.set_vt('webhooks', p."msgId", p."delaySeconds")
  from jsonb_to_recordset(claim -> 'postponed') as p("msgId" bigint, "delaySeconds" integer);

  perform set_config('role', 'background_worker', true);
  for tenant in
    select * from jsonb_to_recordset(claim -> 'tenants')
      as t("tenantId" uuid, attempts jsonb, deliveries jsonb, subscriptions jsonb, released jsonb)
  loop
    perform set_config('app.tenant_id', tenant."tenantId"::text, true);

    insert into public.webhook_attempts (tenant_id, delivery_id, attempt, started_at, duration_ms, status_code, outcome,
                                         error, response_snippet, next_attempt_at)
    select private.request_tenant_id(), a."deliveryId", a.attempt, a."startedAt", a."durationMs", a."statusCode", a.outcome,
           a.error, a."responseSnippet", a."nextAttemptAt"
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
    where d.id = c.id and d.status = 'pending';

    if jsonb_array_length(coalesce(tenant.released, '[]')) > 0 then
      update public.webhook_deliveries d
      set attempt_started_at = null
      from jsonb_to_recordset(tenant.released) as r(id uuid, "startedAt" timestamptz)
      where d.id = r.id and d.attempt_started_at = r."startedAt";
    end if;

    -- failingSince: set it if unset (a failure), or clear it (a success); disable: why.
    update public.webhook_subscriptions s
    set failing_since = case when c.healthy then null else coalesce(s.failing_since, c."failingSince") end,
        enabled = case when c.disable is not null then false else s.enabled end,
        disabled_reason = case when c.disable is not null and s.enabled then c.disable else s.disabled_reason end
    from jsonb_to_recordset(coalesce(tenant.subscriptions, '[]')) as c(
      id uuid, healthy boolean, "failingSince" timestamptz, disable text)
    where s.id = c.id;
  end loop;
end
$$;
