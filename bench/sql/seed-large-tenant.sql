-- One large tenant beside the 1,000 small ones (bench/sql/seed.sql): tenant :n, owned by
-- the bench owner, with :properties properties sharing :units units, :guests guests and
-- :units x :stays_per_unit reservations spread over almost four years in every status.
-- Run by psql as postgres with -v n=.. -v properties=.. -v units=.. -v guests=..
-- -v stays_per_unit=.. (bench/fixtures.ts's LARGE_TENANT); a tenant that is there
-- already is kept as it is.
--
-- Ids follow seed.sql's patterns for tenant :n (its property p is b2e<p, 5 digits>), but
-- for the reservations: b7<r, 6 digits>-0000-4000-8000-<n, 12 digits>, r = 1..100,000.
--
-- Set-based and without triggers, as seed.sql is and for the same reason, the rows as the
-- triggers would have left them: a stamp for each step of the lifecycle the stay went
-- through, confirmation codes, currencies. Like seed.sql, it writes only the tenant's own
-- rows: not the cleaning tasks, notifications or webhook events the lifecycle's triggers
-- would have added elsewhere, which no read measured here looks at.
\set ON_ERROR_STOP on
set session_replication_role = replica;
-- The commit is synchronous: VACUUM marks a page all-visible, so that a count can read an
-- index alone, only once the commit of every row on it is flushed.

begin;

create temporary table bench_large_tenant on commit drop as
select :n::int as n, ('b1e00000-0000-4000-8000-' || lpad(:n::text, 12, '0'))::uuid as tenant_id,
       lpad(:n::text, 12, '0') as digits
where not exists (
  select from public.tenants t where t.id = ('b1e00000-0000-4000-8000-' || lpad(:n::text, 12, '0'))::uuid);

insert into public.tenants (id, name, created_by)
select tenant_id, 'pms-bench large tenant ' || n, 'b0e00000-0000-4000-8000-000000000001'
from bench_large_tenant;

insert into public.tenant_memberships (tenant_id, user_id, role, created_by)
select tenant_id, 'b0e00000-0000-4000-8000-000000000001', 'owner', 'b0e00000-0000-4000-8000-000000000001'
from bench_large_tenant;

insert into public.properties (tenant_id, id, name, timezone, currency, city, email, created_by)
select t.tenant_id, ('b2e' || lpad(p::text, 5, '0') || '-0000-4000-8000-' || t.digits)::uuid,
       'Bench Resort ' || p, 'Europe/Lisbon', 'EUR', 'Lisbon', 'resort' || p || '.t' || t.n || '@bench.pms.test',
       'b0e00000-0000-4000-8000-000000000001'
from bench_large_tenant t, generate_series(1, :properties) p;

-- Ten room types a property, k = 1..10 (ROOM-1 .. ROOM-10, each for two with up to four):
-- the shape of a hotel the availability part asks about (bench/selling.ts).
insert into public.room_types (tenant_id, id, property_id, code, name, standard_occupancy, max_occupancy, created_by)
select t.tenant_id, ('b8e' || lpad(((p - 1) * 10 + k)::text, 5, '0') || '-0000-4000-8000-' || t.digits)::uuid,
       ('b2e' || lpad(p::text, 5, '0') || '-0000-4000-8000-' || t.digits)::uuid, 'ROOM-' || k, 'Room type ' || k, 2, 4,
       'b0e00000-0000-4000-8000-000000000001'
from bench_large_tenant t, generate_series(1, :properties) p, generate_series(1, 10) k;

-- Five rate plans a property, j = 1..5: BAR for every type, NREF ten percent off BAR,
-- BB and LONG (seven nights at least) for every type, SUITE for room type 10 alone.
-- Each plan but the derived one has its own days for 2026 and 2027: Fridays and
-- Saturdays dearer, BB closed to arrival on Sundays.
insert into public.rate_plans (tenant_id, id, property_id, name, code, currency, nightly_price, min_stay, room_type_id,
                               extra_adult_price, extra_child_price, derived_from_id, derived_percent, created_by)
select t.tenant_id, ('b9e' || lpad(((p - 1) * 5 + j)::text, 5, '0') || '-0000-4000-8000-' || t.digits)::uuid,
       ('b2e' || lpad(p::text, 5, '0') || '-0000-4000-8000-' || t.digits)::uuid,
       (array['Best available', 'Non-refundable', 'Bed and breakfast', 'Long stay', 'Suite'])[j],
       (array['BAR', 'NREF', 'BB', 'LONG', 'SUITE'])[j], 'EUR',
       (array[12000, 12000, 15000, 10000, 30000])[j], case when j = 4 then 7 else 1 end,
       case when j = 5 then ('b8e' || lpad(((p - 1) * 10 + 10)::text, 5, '0') || '-0000-4000-8000-' || t.digits)::uuid end,
       2500, 1500,
       case when j = 2 then ('b9e' || lpad(((p - 1) * 5 + 1)::text, 5, '0') || '-0000-4000-8000-' || t.digits)::uuid end,
       case when j = 2 then -10 end,
       'b0e00000-0000-4000-8000-000000000001'
from bench_large_tenant t, generate_series(1, :properties) p, generate_series(1, 5) j;

insert into public.rate_plan_days (tenant_id, rate_plan_id, day, price, closed_to_arrival)
select t.tenant_id, ('b9e' || lpad(((p - 1) * 5 + j)::text, 5, '0') || '-0000-4000-8000-' || t.digits)::uuid, d::date,
       case when extract(isodow from d) in (5, 6) then (array[18000, null, 21000, 14000, 40000])[j] end,
       case when j = 3 and extract(isodow from d) = 7 then true end
from bench_large_tenant t, generate_series(1, :properties) p, unnest(array[1, 3, 4, 5]) j,
     generate_series(date '2026-01-01', date '2027-12-31', interval '1 day') d;

-- Unit u belongs to property p = 1 + (u - 1) % :properties and to its room type
-- k = 1 + ((u - 1) / :properties) % 10.
insert into public.units (tenant_id, id, property_id, room_type_id, name, capacity, created_by)
select t.tenant_id, ('b3e' || lpad(u::text, 5, '0') || '-0000-4000-8000-' || t.digits)::uuid,
       ('b2e' || lpad((1 + (u - 1) % :properties)::text, 5, '0') || '-0000-4000-8000-' || t.digits)::uuid,
       ('b8e' || lpad(((u - 1) % :properties * 10 + 1 + ((u - 1) / :properties) % 10)::text, 5, '0')
        || '-0000-4000-8000-' || t.digits)::uuid,
       'Room ' || u, 4, 'b0e00000-0000-4000-8000-000000000001'
from bench_large_tenant t, generate_series(1, :units) u;

-- Named as seed.sql names its guests, so that one search asks the same of both tenants.
insert into public.guests (tenant_id, id, first_name, last_name, email, locale, created_by)
select t.tenant_id, ('b4e' || lpad(g::text, 5, '0') || '-0000-4000-8000-' || t.digits)::uuid,
       'Guest', 'Number ' || g, 'guest' || g || '.t' || t.n || '@bench.pms.test', 'en',
       'b0e00000-0000-4000-8000-000000000001'
from bench_large_tenant t, generate_series(1, :guests) g;

-- Unit u's stay s (0..:stays_per_unit - 1) arrives in week s from 2024-01-01, on weekday
-- (u - 1) % 7, so that arrivals spread over every day, and stays 1 to 6 nights: never
-- into the unit's next stay, so the exclusion constraint holds for any status. It is
-- reservation r = s * :units + u, on guest 1 + (r - 1) % :guests (five stays each).
-- Its status follows its dates against 2026-06-01, the data's "today", and a spread
-- derived from r: a past stay checked out (91 %), cancelled (6 %) or a no-show (3 %);
-- a stay under way checked in (95 %) or cancelled; a stay to come confirmed (80 %),
-- pending (12 %) or cancelled (8 %).
insert into public.reservations (
  tenant_id, id, property_id, room_type_id, unit_id, guest_id, confirmation_code, check_in, check_out, adults, status,
  total_amount, currency, source, cancellation_reason, confirmed_at, checked_in_at, checked_out_at, cancelled_at,
  no_show_at, created_by, created_at, updated_at)
select t.tenant_id,
       ('b7' || lpad(stay.r::text, 6, '0') || '-0000-4000-8000-' || t.digits)::uuid,
       ('b2e' || lpad((1 + (stay.u - 1) % :properties)::text, 5, '0') || '-0000-4000-8000-' || t.digits)::uuid,
       ('b8e' || lpad(((stay.u - 1) % :properties * 10 + 1 + ((stay.u - 1) / :properties) % 10)::text, 5, '0')
        || '-0000-4000-8000-' || t.digits)::uuid,
       ('b3e' || lpad(stay.u::text, 5, '0') || '-0000-4000-8000-' || t.digits)::uuid,
       ('b4e' || lpad((1 + (stay.r - 1) % :guests)::text, 5, '0') || '-0000-4000-8000-' || t.digits)::uuid,
       'B' || upper(lpad(to_hex(stay.r), 7, '0')),
       stay.check_in, stay.check_out, 2, stay.status,
       12000 * (stay.check_out - stay.check_in), 'EUR',
       (array['direct', 'website', 'ota', 'phone', 'channel_manager'])[1 + stay.r % 5],
       case when stay.status = 'cancelled' then 'plans changed' end,
       case when stay.status <> 'pending' and not (stay.status = 'cancelled' and stay.spread % 2 = 0)
            then stay.check_in - 30 + time '10:00' end,
       case when stay.status in ('checked_in', 'checked_out') then stay.check_in + time '15:00' end,
       case when stay.status = 'checked_out' then stay.check_out + time '11:00' end,
       case when stay.status = 'cancelled' then stay.check_in - 10 + time '09:00' end,
       case when stay.status = 'no_show' then stay.check_in + 1 + time '00:30' end,
       'b0e00000-0000-4000-8000-000000000001',
       stay.check_in - 45 + time '10:00',
       case stay.status
         when 'checked_out' then stay.check_out + time '11:00'
         when 'checked_in' then stay.check_in + time '15:00'
         when 'cancelled' then stay.check_in - 10 + time '09:00'
         when 'no_show' then stay.check_in + 1 + time '00:30'
         when 'confirmed' then stay.check_in - 30 + time '10:00'
         else stay.check_in - 45 + time '10:00'
       end
from bench_large_tenant t,
     generate_series(0, :stays_per_unit - 1) s,
     generate_series(1, :units) u,
     lateral (select s * :units + u as r,
                     date '2024-01-01' + s * 7 + (u - 1) % 7 as check_in,
                     date '2024-01-01' + s * 7 + (u - 1) % 7 + 1 + (u * 31 + s * 17) % 6 as check_out,
                     ((s * :units + u) * 37) % 100 as spread) dates,
     lateral (select dates.r, u, dates.check_in, dates.check_out, dates.spread,
                     case
                       when dates.check_out <= date '2026-06-01' then
                         case when dates.spread < 6 then 'cancelled' when dates.spread < 9 then 'no_show' else 'checked_out' end
                       when dates.check_in <= date '2026-06-01' then
                         case when dates.spread < 5 then 'cancelled' else 'checked_in' end
                       else
                         case when dates.spread < 8 then 'cancelled' when dates.spread < 20 then 'pending' else 'confirmed' end
                     end as status) stay;

-- The status tallies the reservation trigger would have written, one row a property and status.
insert into public.reservation_status_tallies (tenant_id, property_id, status, reservations)
select r.tenant_id, r.property_id, r.status, count(*)::integer
from public.reservations r join bench_large_tenant t on t.tenant_id = r.tenant_id
group by r.tenant_id, r.property_id, r.status;

commit;
