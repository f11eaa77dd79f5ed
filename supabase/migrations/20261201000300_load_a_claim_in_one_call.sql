-- The notifications worker loads a claim in one call, where it made two statements per
-- tenant of the claim: the tenant's worker context and its load. A claim of 100 jobs
-- holds some 50 tenants' notifications, so that was 100 statements, each parsed, planned
-- and relayed by the pooler, for what is now one. The function still reads each tenant's
-- notifications as background_worker in that tenant's context, through
-- private.load_notification_claim, so RLS applies to every read as before.
--
-- tenant_ids and notification_ids pair up: the notification at each position is looked
-- for in the tenant at the same position. Each row says which tenant it was read in. The
-- caller's role is back when it returns.
create or replace function private.load_notification_claims(tenant_ids uuid[], notification_ids uuid[])
returns table (
  tenant_id uuid,
  id uuid, template_key text, channel text, status text, enabled boolean, recipient_id uuid, recipient_type text,
  recipient_address text, context jsonb, created_at timestamptz, reservation_id uuid, checked_in_at timestamptz,
  guest_id uuid, first_name text, last_name text, email text, phone text, locale text,
  email_undeliverable_at timestamptz, email_undeliverable_reason text,
  property_name text, timezone text, address_line1 text, city text, property_phone text, property_email text,
  check_in_time time, check_out_time time,
  unit_name text,
  confirmation_code text, check_in date, check_out date, adults integer, children integer, total_amount bigint,
  amount_paid bigint, balance bigint, currency text, cancellation_reason text,
  code text, valid_from timestamptz, valid_until timestamptz, code_status text,
  member_role text, manager_ids uuid[], push_subscriptions jsonb
)
language plpgsql
set search_path = ''
as $$
declare
  caller_role text := current_setting('role');
  tenant uuid;
begin
  if cardinality(tenant_ids) is distinct from cardinality(notification_ids) then
    raise exception 'a claim pairs each notification with its tenant: % tenants for % notifications',
      cardinality(tenant_ids), cardinality(notification_ids) using errcode = '22023';
  end if;
  perform set_config('role', 'background_worker', true);
  for tenant in select distinct t from unnest(tenant_ids) as t loop
    perform set_config('app.tenant_id', tenant::text, true);
    return query
      select tenant, l.*
      from private.load_notification_claim(array(
        select x.notification_id from unnest(tenant_ids, notification_ids) as x (tenant_id, notification_id)
        where x.tenant_id = tenant)) l;
  end loop;
  perform set_config('role', caller_role, true);
end
$$;
revoke all on function private.load_notification_claims(uuid[], uuid[]) from public;
