-- A webhook claim across many tenants costs what one tenant's does. A claim of 50 jobs
-- holds deliveries of many tenants, and each tenant's context and load were statements of
-- their own, pipelined: twice as many statements as tenants for Postgres to parse and plan,
-- for the pooler to relay and for the worker to build and read, which made a run of many
-- tenants' deliveries cost the worker three times the CPU of one tenant's. And the
-- settlement's updates, once per tenant, found their rows by id alone, which the keys
-- (tenant_id, id) do not serve: each scanned the table.
--
-- private.load_webhook_claim reads one tenant's deliveries under RLS, with each one's event
-- and subscription, and takes the lease on each it may post (as the worker's statement did:
-- pending, and no other attempt holding it); its plan is kept for the connection.
-- private.load_webhook_claims calls it for each tenant of the claim as background_worker in
-- that tenant's context.

create function private.load_webhook_claim(delivery_ids uuid[], lease_seconds integer)
returns table (
  id uuid, status text, attempts integer, subscription_id uuid,
  attempt_started_at timestamptz, attempt_fresh boolean,
  event_id uuid, type text, data jsonb, occurred_at timestamptz,
  url text, enabled boolean, secret text, previous_secret text, previous_secret_expires_at timestamptz,
  failing_since timestamptz, earlier_pending_until timestamptz
)
language plpgsql
set search_path = ''
set plan_cache_mode = force_generic_plan
set enable_seqscan = off
as $$
declare
  leased uuid[];
  lease_start timestamptz := now();
begin
  with taken as (
    update public.webhook_deliveries d
    set attempt_started_at = lease_start
    from unnest(delivery_ids) as wanted (id)
    where d.tenant_id = (select private.request_tenant_id()) and d.id = wanted.id
      and d.status = 'pending'
      and (d.attempt_started_at is null or d.attempt_started_at < lease_start - make_interval(secs => lease_seconds))
    returning d.id
  )
  select coalesce(array_agg(taken.id), '{}') into leased from taken;

  return query
    select d.id, d.status, d.attempts, d.subscription_id,
           d.attempt_started_at, d.id = any(leased),
           e.id, e.type, e.data, e.occurred_at,
           s.url, s.enabled, s.secret, s.previous_secret, s.previous_secret_expires_at, s.failing_since,
           -- The latest next attempt among the same stay's earlier deliveries to the same
           -- subscription that have not ended (one without a next attempt counts as due
           -- now): this one waits until then. Null: none is pending.
           (select max(coalesce(p.next_attempt_at, now())) from public.webhook_deliveries p
            where p.tenant_id = d.tenant_id and p.subscription_id = d.subscription_id
              and p.reservation_id = d.reservation_id and p.status = 'pending' and p.sequence < d.sequence)
    from unnest(delivery_ids) as wanted (id)
    join public.webhook_deliveries d on d.tenant_id = (select private.request_tenant_id()) and d.id = wanted.id
    join public.webhook_events e on e.tenant_id = d.tenant_id and e.id = d.event_id
    join public.webhook_subscriptions s on s.tenant_id = d.tenant_id and s.id = d.subscription_id;
end
$$;
revoke all on function private.load_webhook_claim(uuid[], integer) from public;
grant execute on function private.load_webhook_claim(uuid[], integer) to background_worker;

-- The whole claim in one call, each tenant's part as background_worker in that tenant's
-- context; tenant_ids and delivery_ids pair up by position. The caller's role is back when
-- it returns.
create function private.load_webhook_claims(tenant_ids uuid[], delivery_ids uuid[], lease_seconds integer)
returns table (
  tenant_id uuid,
  id uuid, status text, attempts integer, subscription_id uuid,
  attempt_started_at timestamptz, attempt_fresh boolean,
  event_id uuid, type text, data jsonb, occurred_at timestamptz,
  url text, enabled boolean, secret text, previous_secret text, previous_secret_expires_at timestamptz,
  failing_since timestamptz, earlier_pending_until timestamptz
)
language plpgsql
set search_path = ''
as $$
declare
  caller_role text := current_setting('role');
  tenant uuid;
begin
  if cardinality(tenant_ids) is distinct from cardinality(delivery_ids) then
    raise exception 'a claim pairs each delivery with its tenant: % tenants for % deliveries',
      cardinality(tenant_ids), cardinality(delivery_ids) using errcode = '22023';
  end if;
  if lease_seconds is null or lease_seconds < 1 then
    raise exception 'a lease lasts a whole number of seconds from 1' using errcode = '22023';
  end if;
  perform set_config('role', 'background_worker', true);
  for tenant in select distinct t from unnest(tenant_ids) as t loop
    perform set_config('app.tenant_id', tenant::text, true);
    return query
      select tenant, l.*
      from private.load_webhook_claim(array(
        select x.delivery_id from unnest(tenant_ids, delivery_ids) as x (tenant_id, delivery_id)
        where x.tenant_id = tenant), lease_seconds) l;
  end loop;
  perform set_config('role', caller_role, true);
end
$$;
revoke all on function private.load_webhook_claims(uuid[], uuid[], integer) from public;

-- As before, each row found by its key: the tenant's context and its id; and the caller's
-- role is back when it returns, as an operator calling it from the SQL editor expects.
create or replace function private.settle_webhook_claim(claim jsonb)
returns void
language plpgsql
set search_path = ''
set plan_cache_mode = force_generic_plan
set enable_seqscan = off
as $$
declare
  caller_role text := current_setting('role');
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
$$;
