-- Demo data for a fresh local stack (`npm run stack:reset`, `supabase db reset`):
-- one tenant with an owner and a staff member, a property, its units and rate
-- plans, guests, and reservations at each stage of their lifecycle around today.
-- The ids are fixed so the data can be referred to.
--
-- The two people are Supabase Auth users (owner@demo.test and staff@demo.test, ids
-- d0000000-...-01 and -02): scripts/stack.sh creates them through Auth's admin API
-- before loading this file. Where they do not exist yet (a `supabase db reset`), the
-- tenant and its data still load, without members; create the users and load this
-- file again to give them their places (it changes nothing that is already there).
begin;

insert into public.tenants (id, name, sender_email, sender_name, payment_page_base_url, created_by)
values ('d1000000-0000-4000-8000-000000000001', 'Harbour View Hotels', 'stay@harbourview.example', 'Harbour View',
        'https://pay.harbourview.example/p',
        (select id from auth.users where id = 'd0000000-0000-4000-8000-000000000001'))
on conflict (id) do nothing;

insert into public.tenant_memberships (tenant_id, user_id, role)
select 'd1000000-0000-4000-8000-000000000001', member.user_id, member.role::public.tenant_role
from (values ('d0000000-0000-4000-8000-000000000001'::uuid, 'owner'),
             ('d0000000-0000-4000-8000-000000000002'::uuid, 'staff')) as member (user_id, role)
where exists (select from auth.users u where u.id = member.user_id)
on conflict do nothing;

-- Everything below belongs to the demo tenant, as a request in its context would.
select set_config('app.tenant_id', 'd1000000-0000-4000-8000-000000000001', true);

insert into public.properties (id, name, timezone, currency, address_line1, city, postal_code, country_code, email, phone)
values ('d2000000-0000-4000-8000-000000000001', 'Harbour View Lisbon', 'Europe/Lisbon', 'EUR',
        'Rua do Cais 12', 'Lisboa', '1200-109', 'PT', 'lisbon@harbourview.example', '+351210000000')
on conflict do nothing;

insert into public.units (id, property_id, name, type, capacity, floor)
values ('d3000000-0000-4000-8000-000000000001', 'd2000000-0000-4000-8000-000000000001', '101', 'room', 2, '1'),
       ('d3000000-0000-4000-8000-000000000002', 'd2000000-0000-4000-8000-000000000001', '102', 'room', 2, '1'),
       ('d3000000-0000-4000-8000-000000000003', 'd2000000-0000-4000-8000-000000000001', '201', 'suite', 4, '2'),
       ('d3000000-0000-4000-8000-000000000004', 'd2000000-0000-4000-8000-000000000001', 'Loft', 'apartment', 5, '3')
on conflict do nothing;

insert into public.rate_plans (id, property_id, name, code, currency, nightly_price, min_stay, cancellation_policy,
                               free_cancellation_hours)
values ('d4000000-0000-4000-8000-000000000001', 'd2000000-0000-4000-8000-000000000001', 'Best available rate', 'BAR',
        'EUR', 14500, 1, 'flexible', 48),
       ('d4000000-0000-4000-8000-000000000002', 'd2000000-0000-4000-8000-000000000001', 'Non-refundable', 'NREF',
        'EUR', 12500, 2, 'non_refundable', null)
on conflict do nothing;

insert into public.guests (id, first_name, last_name, email, phone, locale, country_code, marketing_consent)
values ('d5000000-0000-4000-8000-000000000001', 'Ana', 'Ferreira', 'ana.ferreira@example.com', '+351912345678', 'pt-PT', 'PT', true),
       ('d5000000-0000-4000-8000-000000000002', 'James', 'Okafor', 'james.okafor@example.com', '+447700900123', 'en-GB', 'GB', false),
       ('d5000000-0000-4000-8000-000000000003', 'Mei', 'Tanaka', 'mei.tanaka@example.com', null, 'ja', 'JP', false)
on conflict do nothing;

insert into public.reservations (id, property_id, unit_id, guest_id, rate_plan_id, check_in, check_out, adults, children,
                                 status, total_amount, source)
values ('d6000000-0000-4000-8000-000000000001', 'd2000000-0000-4000-8000-000000000001', 'd3000000-0000-4000-8000-000000000001',
        'd5000000-0000-4000-8000-000000000001', 'd4000000-0000-4000-8000-000000000001', current_date - 1, current_date + 2,
        2, 0, 'confirmed', 43500, 'direct'),
       ('d6000000-0000-4000-8000-000000000002', 'd2000000-0000-4000-8000-000000000001', 'd3000000-0000-4000-8000-000000000003',
        'd5000000-0000-4000-8000-000000000002', 'd4000000-0000-4000-8000-000000000002', current_date + 3, current_date + 6,
        2, 1, 'confirmed', 37500, 'channel_manager'),
       ('d6000000-0000-4000-8000-000000000003', 'd2000000-0000-4000-8000-000000000001', 'd3000000-0000-4000-8000-000000000002',
        'd5000000-0000-4000-8000-000000000003', 'd4000000-0000-4000-8000-000000000001', current_date + 10, current_date + 12,
        1, 0, 'pending', 29000, 'website')
on conflict do nothing;

-- Ana is in the house; James has paid a deposit and has a link for the rest.
update public.reservations set status = 'checked_in'
where id = 'd6000000-0000-4000-8000-000000000001' and status = 'confirmed';

insert into public.payments (id, reservation_id, amount, method, source)
values ('d7000000-0000-4000-8000-000000000001', 'd6000000-0000-4000-8000-000000000002', 10000, 'card', 'manual')
on conflict do nothing;

insert into public.payment_links (id, reservation_id, amount, description)
values ('d8000000-0000-4000-8000-000000000001', 'd6000000-0000-4000-8000-000000000002', 27500, 'Balance for your stay')
on conflict do nothing;

insert into public.access_codes (id, reservation_id)
values ('d9000000-0000-4000-8000-000000000001', 'd6000000-0000-4000-8000-000000000001')
on conflict do nothing;

insert into public.tasks (id, property_id, unit_id, type, title, priority, assignee_id, due_at)
values ('da000000-0000-4000-8000-000000000001', 'd2000000-0000-4000-8000-000000000001', 'd3000000-0000-4000-8000-000000000004',
        'maintenance', 'Replace the shower head in the Loft', 'high',
        (select user_id from public.tenant_memberships
         where tenant_id = 'd1000000-0000-4000-8000-000000000001' and user_id = 'd0000000-0000-4000-8000-000000000002'),
        now() + interval '1 day')
on conflict do nothing;

commit;
