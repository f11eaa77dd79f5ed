-- At scale, a tenant's reads go through indexes that lead with tenant_id: 1,000
-- tenants with 1,000 reservations each, read as a member through RLS.
begin;
\ir ../helpers/setup.psql
select plan(8);

select tests.create_user('scale_staff') as staff_id \gset

-- Bulk load as the operator without triggers: the rows are built consistent here,
-- and the point is the planner's view of a full table, not the triggers.
set local session_replication_role = replica;
create temp table scale_tenants as
  select ('00000000-0000-4000-8000-' || lpad(t::text, 12, '0'))::uuid as id from generate_series(1, 1000) t;
insert into public.tenants (id, name) select id, 'Tenant ' || id from scale_tenants;
insert into public.properties (tenant_id, id, name, timezone, currency)
  select id, id, 'Main house', 'Europe/Berlin', 'EUR' from scale_tenants;
insert into public.room_types (tenant_id, id, property_id, code, name)
  select id, id, id, 'DBL', 'Double' from scale_tenants;
insert into public.units (tenant_id, id, property_id, room_type_id, name)
  select t.id, gen_random_uuid(), t.id, t.id, 'Room ' || u from scale_tenants t, generate_series(1, 10) u;
insert into public.guests (tenant_id, id, first_name, last_name)
  select id, id, 'Guest', 'One' from scale_tenants;
-- Each unit has 100 two-night stays; like a real book, most are in the past.
insert into public.reservations (tenant_id, id, property_id, unit_id, guest_id, confirmation_code, check_in, check_out,
                                 status, total_amount, currency)
  select u.tenant_id, gen_random_uuid(), u.tenant_id, u.id, u.tenant_id,
         upper(lpad(to_hex(n * 16 + u.room), 8, '0')),
         date '2024-01-01' + 3 * n, date '2024-01-01' + 3 * n + 2,
         case when n >= 90 then 'confirmed' else 'checked_out' end, 20000, 'EUR'
  from (select tenant_id, id, row_number() over (partition by tenant_id order by name) - 1 as room
        from public.units where tenant_id in (select id from scale_tenants)) u,
       generate_series(0, 99) n
  order by u.tenant_id, n;
set local session_replication_role = origin;
insert into public.tenant_memberships (tenant_id, user_id, role)
  values ('00000000-0000-4000-8000-000000000500', :'staff_id', 'staff');
analyze public.tenants, public.tenant_memberships, public.properties, public.units, public.guests, public.reservations;

-- Counted by tenant: other sessions may be writing reservations meanwhile.
select is((select count(*) from public.reservations where tenant_id in (select id from scale_tenants)), 1000000::bigint,
  '1,000 tenants hold 1,000 reservations each');
select id as some_reservation from public.reservations
  where tenant_id = '00000000-0000-4000-8000-000000000500' offset 400 limit 1 \gset

-- The scans a plan makes on reservations, the index each reads and whether it leads
-- with tenant_id. A bitmap heap scan names no index itself: its bitmap index scans
-- below it do, so it gets a row for each of them.
create function tests.reservation_scans(query text)
returns table (node text, index_name text, leads_with_tenant boolean)
language plpgsql as $$
declare
  plan jsonb;
begin
  execute 'explain (format json) ' || query into plan;
  return query
    select n ->> 'Node Type', ix.name,
           (select a.attname = 'tenant_id' from pg_index i
              join pg_attribute a on a.attrelid = i.indrelid and a.attnum = i.indkey[0]
            where i.indexrelid = ix.name::regclass)
    from jsonb_path_query(plan, 'strict $.**') n
    left join lateral (
      select n ->> 'Index Name' as name where n ? 'Index Name'
      union all
      select b ->> 'Index Name' from jsonb_path_query(n, 'strict $.Plans.**') b
      where n ->> 'Node Type' = 'Bitmap Heap Scan' and b ->> 'Node Type' = 'Bitmap Index Scan'
    ) ix on true
    where jsonb_typeof(n) = 'object' and n ->> 'Relation Name' = 'reservations';
end
$$;

select tests.act_as('scale_staff', '00000000-0000-4000-8000-000000000500');
select is((select count(*) from public.reservations), 1000::bigint, 'the member sees their tenant''s 1,000');

select is_empty($$select * from tests.reservation_scans('select * from public.reservations order by check_in desc limit 50')
                  where node like '%Seq Scan%'$$, 'the reservation list does not scan the table sequentially');
select results_eq($$select distinct leads_with_tenant from tests.reservation_scans('select * from public.reservations order by check_in desc limit 50')$$,
  array[true], 'the reservation list reads an index that leads with tenant_id');
select format('select * from public.reservations where id = %L', :'some_reservation') as by_id \gset
select is_empty(format('select * from tests.reservation_scans(%L) where node like ''%%Seq Scan%%''', :'by_id'),
  'a reservation by id is not a sequential scan');
select results_eq(format('select node, leads_with_tenant from tests.reservation_scans(%L)', :'by_id'),
  $$values ('Index Scan', true)$$, 'a reservation by id is one probe of a unique (tenant_id, id, ...) index');
select is_empty($$select * from tests.reservation_scans('select * from public.reservations where check_in >= ''2024-03-01'' and status = ''confirmed'' order by check_in limit 50')
                  where node like '%Seq Scan%' or leads_with_tenant is not true$$,
  'arrivals from a date read a tenant-leading index');
select is((select count(*) from public.reservations where id = :'some_reservation'), 1::bigint, 'and the row is found');

select * from finish();
rollback;
