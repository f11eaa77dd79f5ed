-- The benchmark's tenants: the bench owner (a Supabase Auth user bench/run.ts makes
-- through Auth's admin API) with an owner membership in each, and tenants :first..:last, each with one property, 20 units, 100 guests and
-- 1,000 reservations. Run by psql as postgres with -v first=N -v last=M; rows that are
-- there already are kept, so a second run adds only what is missing.
--
-- Ids are derived from the tenant's number, so the load generators can name any row
-- without asking the database: tenant n is b1e00000-0000-4000-8000-<n, 12 digits>,
-- its reservation r (1..1000) b5e<r, 5 digits>-0000-4000-8000-<n, 12 digits>.
--
-- Set-based and without triggers (session_replication_role = replica skips user and
-- foreign-key triggers; checks, unique and exclusion constraints still hold): the rows
-- are written as the triggers would have left them (confirmation codes, stamps of the
-- lifecycle, currencies), which a row-by-row walk through the lifecycle would take
-- minutes to reach for a million reservations.
\set ON_ERROR_STOP on
set session_replication_role = replica;
-- The commit is synchronous: VACUUM marks a page all-visible, so that a count can read an
-- index alone, only once the commit of every row on it is flushed.

begin;

create temporary table bench_new_tenants on commit drop as
select n, ('b1e00000-0000-4000-8000-' || lpad(n::text, 12, '0'))::uuid as tenant_id
from generate_series(:first::int, :last::int) n
where not exists (
  select from public.tenants t where t.id = ('b1e00000-0000-4000-8000-' || lpad(n::text, 12, '0'))::uuid);

insert into public.tenants (id, name, created_by)
select tenant_id, 'pms-bench tenant ' || lpad(n::text, 4, '0'), 'b0e00000-0000-4000-8000-000000000001'
from bench_new_tenants;

insert into public.tenant_memberships (tenant_id, user_id, role, created_by)
select tenant_id, 'b0e00000-0000-4000-8000-000000000001', 'owner', 'b0e00000-0000-4000-8000-000000000001'
from bench_new_tenants;

insert into public.properties (tenant_id, id, name, timezone, currency, city, email, created_by)
select tenant_id, ('b2e00000-0000-4000-8000-' || lpad(n::text, 12, '0'))::uuid,
       'Bench House ' || n, 'Europe/Lisbon', 'EUR', 'Lisbon', 'house' || n || '@bench.pms.test',
       'b0e00000-0000-4000-8000-000000000001'
from bench_new_tenants;

-- One room type a property, the one its units would join without one (ROOM-4).
insert into public.room_types (tenant_id, id, property_id, code, name, standard_occupancy, max_occupancy, created_by)
select tenant_id, ('b7e00000-0000-4000-8000-' || lpad(n::text, 12, '0'))::uuid,
       ('b2e00000-0000-4000-8000-' || lpad(n::text, 12, '0'))::uuid, 'ROOM-4', 'Room for 4', 2, 4,
       'b0e00000-0000-4000-8000-000000000001'
from bench_new_tenants;

insert into public.units (tenant_id, id, property_id, room_type_id, name, capacity, created_by)
select t.tenant_id, ('b3e' || lpad(u::text, 5, '0') || '-0000-4000-8000-' || lpad(t.n::text, 12, '0'))::uuid,
       ('b2e00000-0000-4000-8000-' || lpad(t.n::text, 12, '0'))::uuid,
       ('b7e00000-0000-4000-8000-' || lpad(t.n::text, 12, '0'))::uuid, 'Room ' || u, 4,
       'b0e00000-0000-4000-8000-000000000001'
from bench_new_tenants t, generate_series(1, 20) u;

insert into public.guests (tenant_id, id, first_name, last_name, email, locale, created_by)
select t.tenant_id, ('b4e' || lpad(g::text, 5, '0') || '-0000-4000-8000-' || lpad(t.n::text, 12, '0'))::uuid,
       'Guest', 'Number ' || g, 'guest' || g || '.t' || t.n || '@bench.pms.test', 'en',
       'b0e00000-0000-4000-8000-000000000001'
from bench_new_tenants t, generate_series(1, 100) g;

-- Reservation r sits on unit 1 + (r - 1) % 20, in that unit's slot (r - 1) / 20 of 50:
-- stays of 3 nights, 4 days apart, so no two overlap. Slots 0-29 are past stays
-- (checked out), 30-49 are confirmed: 400 a tenant for the check-in benchmark.
insert into public.reservations (
  tenant_id, id, property_id, room_type_id, unit_id, guest_id, confirmation_code, check_in, check_out, adults, status,
  total_amount, currency, source, confirmed_at, checked_in_at, checked_out_at, created_by)
select t.tenant_id,
       ('b5e' || lpad(r::text, 5, '0') || '-0000-4000-8000-' || lpad(t.n::text, 12, '0'))::uuid,
       ('b2e00000-0000-4000-8000-' || lpad(t.n::text, 12, '0'))::uuid,
       ('b7e00000-0000-4000-8000-' || lpad(t.n::text, 12, '0'))::uuid,
       ('b3e' || lpad((1 + (r - 1) % 20)::text, 5, '0') || '-0000-4000-8000-' || lpad(t.n::text, 12, '0'))::uuid,
       ('b4e' || lpad((1 + (r - 1) % 100)::text, 5, '0') || '-0000-4000-8000-' || lpad(t.n::text, 12, '0'))::uuid,
       'B' || upper(lpad(to_hex(r), 7, '0')),
       stay.check_in, stay.check_in + 3, 2,
       case when (r - 1) / 20 < 30 then 'checked_out' else 'confirmed' end,
       36000, 'EUR', 'direct',
       stay.check_in - 30,
       case when (r - 1) / 20 < 30 then stay.check_in + time '15:00' end,
       case when (r - 1) / 20 < 30 then stay.check_in + 3 + time '11:00' end,
       'b0e00000-0000-4000-8000-000000000001'
from bench_new_tenants t, generate_series(1, 1000) r,
     lateral (select date '2026-01-01' + ((r - 1) / 20) * 4 as check_in) stay;

-- The status tallies the reservation trigger would have written, one row a status.
insert into public.reservation_status_tallies (tenant_id, property_id, status, reservations)
select r.tenant_id, r.property_id, r.status, count(*)::integer
from public.reservations r join bench_new_tenants t on t.tenant_id = r.tenant_id
group by r.tenant_id, r.property_id, r.status;

commit;
