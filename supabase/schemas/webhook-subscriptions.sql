-- Outbound webhooks, the subscriptions: a tenant's owners and admins subscribe HTTPS
-- endpoints to domain events. A subscription holds its endpoint, the event types and
-- properties it wants (empty: all), whether it is enabled and why not, and its signing
-- secret (with the previous one during a rotation's overlap). The secret is never readable
-- through RLS'd selects: the API shows it once, at creation and at rotation. What happens
-- to each event (its deliveries, their attempts, the worker) is webhook-delivery.sql;
-- docs/webhooks.md describes the whole.

-- ---------------------------------------------------------------- event types

-- The event types, versioned with the payload's `version` (docs/webhooks.md). The SQL
-- helpers of outbound webhooks have no SET clause, so that Postgres inlines them or keeps
-- their plans (a schema test holds every private SQL function to it): every name in them
-- is qualified.
create or replace function private.webhook_event_types()
returns text[]
language sql immutable
as $$
  select array['reservation.created', 'reservation.updated', 'reservation.checked_in', 'reservation.checked_out',
               'reservation.cancelled', 'payment.recorded', 'access_code.created', 'access_code.revoked',
               'task.status_changed', 'guest.updated', 'availability.changed', 'rates.changed', 'webhook.test']
$$;

-- ---------------------------------------------------------------- subscriptions

create table public.webhook_subscriptions (
  tenant_id uuid not null default private.request_tenant_id()
    constraint webhook_subscriptions_tenant_id_fkey references public.tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  -- Checked again at delivery, after DNS resolution (src/webhook-delivery/endpoint.ts).
  url text not null constraint webhook_subscriptions_url_check
    check (length(url) <= 2000 and url ~ '^https?://[^/?#@[:space:]]+'),
  description text constraint webhook_subscriptions_description_check check (length(description) <= 500),
  -- Empty: every event type (webhook.test only ever goes to the subscription it tests).
  event_types text[] not null default '{}' constraint webhook_subscriptions_event_types_check
    check (event_types <@ private.webhook_event_types() and not ('webhook.test' = any (event_types))
           and cardinality(event_types) <= 20),
  -- Empty: every property. A guest event reaches a subscription limited to properties when
  -- the guest has a stay at one of them.
  property_ids uuid[] not null default '{}'
    constraint webhook_subscriptions_property_ids_check check (cardinality(property_ids) <= 100),
  enabled boolean not null default true,
  -- Why it is disabled: by a manager, because the endpoint answered 410 Gone, or because
  -- every delivery failed for a day.
  disabled_reason text constraint webhook_subscriptions_disabled_reason_check
    check (disabled_reason in ('manual', 'gone', 'failing')),
  disabled_at timestamptz,
  -- When the deliveries started failing without a success since; null while healthy.
  failing_since timestamptz,
  -- whsec_ and the base64 of 32 random bytes, as Standard Webhooks secrets are written.
  secret text not null default 'whsec_' || encode(extensions.gen_random_bytes(32), 'base64')
    constraint webhook_subscriptions_secret_check check (secret ~ '^whsec_[A-Za-z0-9+/]{43}=$'),
  -- The secret a rotation replaced, still signing beside the new one until it expires.
  previous_secret text constraint webhook_subscriptions_previous_secret_check
    check (previous_secret ~ '^whsec_[A-Za-z0-9+/]{43}=$'),
  previous_secret_expires_at timestamptz,
  created_by uuid default auth.uid()
    constraint webhook_subscriptions_created_by_fkey references auth.users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint webhook_subscriptions_pkey primary key (tenant_id, id),
  constraint webhook_subscriptions_disabled_with_reason_and_time
    check (enabled = (disabled_reason is null) and enabled = (disabled_at is null)),
  constraint webhook_subscriptions_previous_secret_with_expiry
    check ((previous_secret is null) = (previous_secret_expires_at is null))
);

-- What an event matches: the tenant's enabled subscriptions.
create index webhook_subscriptions_tenant_enabled_idx on public.webhook_subscriptions (tenant_id) where enabled;
create index webhook_subscriptions_tenant_created_idx on public.webhook_subscriptions (tenant_id, created_at, id);

-- A subscription's properties are the tenant's; its secrets change only by rotation
-- (private.rotate_webhook_secret) and are never set by hand; disabling stamps the time.
create or replace function private.webhook_subscription_before_write()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  if exists (select from unnest(new.property_ids) as p(id)
             where not exists (select from public.properties pr where pr.tenant_id = new.tenant_id and pr.id = p.id)) then
    raise exception 'a webhook subscription names a property the tenant does not have'
      using errcode = '23503', constraint = 'webhook_subscriptions_property_ids_fkey';
  end if;
  if tg_op = 'UPDATE' then
    if new.enabled and not old.enabled then
      new.disabled_reason := null;
      new.disabled_at := null;
      new.failing_since := null;
    elsif not new.enabled and old.enabled then
      new.disabled_reason := coalesce(new.disabled_reason, 'manual');
      new.disabled_at := coalesce(new.disabled_at, now());
    end if;
  elsif not new.enabled then
    new.disabled_reason := coalesce(new.disabled_reason, 'manual');
    new.disabled_at := coalesce(new.disabled_at, now());
  end if;
  return new;
end
$$;

create trigger webhook_subscription_before_write before insert or update on public.webhook_subscriptions
  for each row execute function private.webhook_subscription_before_write();
create trigger forbid_tenant_change before update of tenant_id, created_at, created_by on public.webhook_subscriptions
  for each row execute function private.forbid_tenant_change();
create trigger touch_updated_at before update on public.webhook_subscriptions
  for each row execute function private.touch_updated_at();

alter table public.webhook_subscriptions enable row level security;
revoke all on public.webhook_subscriptions from anon, authenticated;
-- Every column but the secrets; those only through the definer functions below.
grant select (tenant_id, id, url, description, event_types, property_ids, enabled, disabled_reason, disabled_at,
              failing_since, previous_secret_expires_at, created_by, created_at, updated_at)
  on public.webhook_subscriptions to authenticated;
grant insert (url, description, event_types, property_ids, enabled) on public.webhook_subscriptions to authenticated;
grant update (url, description, event_types, property_ids, enabled) on public.webhook_subscriptions to authenticated;
grant delete on public.webhook_subscriptions to authenticated;

create policy "managers read webhook subscriptions" on public.webhook_subscriptions
  for select to authenticated
  using (tenant_id = (select private.request_tenant_id()) and (select private.request_is_manager()));
create policy "managers create webhook subscriptions" on public.webhook_subscriptions
  for insert to authenticated
  with check (tenant_id = (select private.request_tenant_id()) and (select private.request_is_manager()));
create policy "managers update webhook subscriptions" on public.webhook_subscriptions
  for update to authenticated
  using (tenant_id = (select private.request_tenant_id()) and (select private.request_is_manager()))
  with check (tenant_id = (select private.request_tenant_id()));
create policy "managers delete webhook subscriptions" on public.webhook_subscriptions
  for delete to authenticated
  using (tenant_id = (select private.request_tenant_id()) and (select private.request_is_manager()));

-- The secret of a subscription the manager can see: what creation and rotation answer.
create or replace function private.webhook_subscription_secret(subscription uuid)
returns text
language plpgsql stable security definer
set search_path = ''
as $$
declare
  found text;
begin
  if not coalesce(private.request_is_manager(), false) then
    raise exception 'only an owner or admin reads a webhook secret' using errcode = '42501';
  end if;
  select s.secret into found from public.webhook_subscriptions s
  where s.tenant_id = private.request_tenant_id() and s.id = subscription;
  return found;
end
$$;
revoke all on function private.webhook_subscription_secret(uuid) from public;
grant execute on function private.webhook_subscription_secret(uuid) to authenticated;

-- A new secret; the one it replaces keeps signing beside it for `overlap` (at most a
-- week), so a receiver can switch without missing a delivery. Returns the new secret, or
-- null when the manager cannot see the subscription.
create or replace function private.rotate_webhook_secret(subscription uuid, overlap interval default interval '24 hours')
returns text
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  rotated text;
begin
  if not coalesce(private.request_is_manager(), false) then
    raise exception 'only an owner or admin rotates a webhook secret' using errcode = '42501';
  end if;
  if overlap < interval '0' or overlap > interval '7 days' then
    raise exception 'a rotation''s overlap is between 0 and 7 days' using errcode = '22023';
  end if;
  update public.webhook_subscriptions s
  set previous_secret = case when overlap > interval '0' then s.secret end,
      previous_secret_expires_at = case when overlap > interval '0' then now() + overlap end,
      secret = 'whsec_' || encode(extensions.gen_random_bytes(32), 'base64')
  where s.tenant_id = private.request_tenant_id() and s.id = subscription
  returning s.secret into rotated;
  return rotated;
end
$$;
revoke all on function private.rotate_webhook_secret(uuid, interval) from public;
grant execute on function private.rotate_webhook_secret(uuid, interval) to authenticated;
