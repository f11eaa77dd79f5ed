-- The notifications worker's two calls per claim, the load and the settlement, keep one
-- plan per connection, and one that reaches each row by its key.
--
-- Left to choose, Postgres planned the load afresh for nearly every call (about 1.2 ms of
-- planning a seven-table join for 0.2 ms of work), and when it kept a plan, for the load
-- or for the settlement's update of a tenant's notifications, it kept the one the tables'
-- statistics favoured when it was made. On a notifications table that was small then,
-- that is a scan of all the tenant's notifications, or of the whole table, and it grows
-- with the table until an ANALYZE replaces the plan: in a drain of 10,000 notifications
-- the load took 1 ms a call and the update as much, five times their work.
--
-- Now each function's plans are made once per connection (plan_cache_mode), the load's
-- ids drive it through the notifications' primary key, and neither reads a table whole
-- (enable_seqscan, for these two functions only: every row they read or write is reached
-- by an index on its tenant and key or its message id, so a scan of a whole table is
-- never the better plan once the table holds more than a few pages).
create or replace function private.load_notification_claim(notification_ids uuid[])
returns table (
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
language plpgsql stable
set search_path = ''
set plan_cache_mode = force_generic_plan
set enable_seqscan = off
as $$
begin
  return query
    select n.id, n.template_key, n.channel, n.status, np.enabled, n.recipient_id, n.recipient_type,
           n.recipient_address, n.context, n.created_at, r.id, r.checked_in_at,
           g.id, g.first_name, g.last_name, g.email, g.phone, g.locale,
           g.email_undeliverable_at, g.email_undeliverable_reason,
           p.name, p.timezone, p.address_line1, p.city, p.phone, p.email,
           p.check_in_time, p.check_out_time,
           u.name,
           r.confirmation_code, r.check_in, r.check_out, r.adults, r.children, r.total_amount,
           r.amount_paid, r.balance, r.currency, r.cancellation_reason,
           c.code, c.valid_from, c.valid_until, c.status,
           -- Whether a member it is for still is one; who a system notice reaches; a member's browsers.
           (select m.role::text from public.tenant_memberships m
            where m.tenant_id = n.tenant_id and m.user_id = n.recipient_id),
           case when n.recipient_type = 'system' then array(
             select m.user_id from public.tenant_memberships m
             where m.tenant_id = n.tenant_id and m.role in ('owner', 'admin') order by m.user_id) end,
           case when n.channel = 'push' then (
             select coalesce(jsonb_agg(jsonb_build_object('id', s.id, 'endpoint', s.endpoint, 'p256dh', s.p256dh, 'auth', s.auth)
                                       order by s.created_at, s.id), '[]'::jsonb)
             from public.push_subscriptions s where s.tenant_id = n.tenant_id and s.user_id = n.recipient_id) end
    from unnest(notification_ids) as wanted (id)
    join public.notifications n on n.tenant_id = (select private.request_tenant_id()) and n.id = wanted.id
    left join public.notification_preferences np
      on np.tenant_id = n.tenant_id and np.template_key = n.template_key and np.channel = n.channel
    left join public.reservations r on r.tenant_id = n.tenant_id and r.id = n.reservation_id
    left join public.guests g on g.tenant_id = r.tenant_id and g.id = r.guest_id
    left join public.properties p on p.tenant_id = r.tenant_id and p.id = r.property_id
    left join public.units u on u.tenant_id = r.tenant_id and u.id = r.unit_id
    left join public.access_codes c on c.tenant_id = n.tenant_id and c.id = n.access_code_id;
end
$$;

alter function private.settle_notification_claim(jsonb)
  set plan_cache_mode = force_generic_plan
  set enable_seqscan = off;
