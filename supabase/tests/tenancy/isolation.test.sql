-- Tenant isolation for every domain table, checked the same way on each: two
-- tenants, Alpha and Beta, with a row in every table and an owner, an admin
-- and a staff member each.
begin;
\ir ../helpers/setup.psql
select plan(260);

create temp table fixture as
  select tests.make_tenant('Alpha') as a, tests.make_tenant('Beta') as b;
grant select on fixture to public;

-- An insert of a copy of a row of `tbl`, with `changes` applied, a fresh id and
-- the acting user as creator, so only the tenant or the parent can be at fault.
-- Generated columns are left to the database.
create function tests.copy_insert(tbl text, source jsonb, changes jsonb) returns text
language plpgsql as $$
declare cols text;
begin
  select string_agg(quote_ident(attname), ', ' order by attnum) into cols
  from pg_attribute
  where attrelid = format('public.%I', tbl)::regclass and attnum > 0 and not attisdropped and attgenerated = '';
  return format('insert into public.%1$I (%2$s) select %2$s from jsonb_populate_record(null::public.%1$I, %3$L::jsonb)',
                tbl, cols, source || jsonb_build_object('created_by', auth.uid()) || changes || jsonb_build_object('id', gen_random_uuid()));
end
$$;

create function tests.row_json(tbl text, id uuid, key_column text default 'id') returns jsonb
language plpgsql as $$
declare r jsonb;
begin
  execute format('select to_jsonb(x) from public.%I x where %I = $1', tbl, key_column) into r using id;
  return r;
end
$$;

-- parent_change: columns to point at Beta's rows, as {"column": "beta:<fixture key>"}.
-- insert_refusal: the SQLSTATE a cross-tenant insert meets first: 42501 from RLS, or
-- 23503 where a trigger looks up the parent (as the caller, under RLS) before RLS checks the row.
-- key_column: the column the fixture's id is found by, for a table whose key is not an id.
create function tests.isolation_checks(tbl text, parent_change jsonb, staff_writes boolean,
                                       insert_refusal text default '42501', key_column text default 'id') returns setof text
language plpgsql as $$
declare
  a jsonb := (select fixture.a from fixture);
  b jsonb := (select fixture.b from fixture);
  ta uuid := (a ->> 'tenants')::uuid;
  tb uuid := (b ->> 'tenants')::uuid;
  a_id uuid := (a ->> tbl)::uuid;
  b_id uuid := (b ->> tbl)::uuid;
  a_row jsonb;
  b_row jsonb;
  code text;
begin
  perform tests.act_as_operator();
  a_row := tests.row_json(tbl, a_id, key_column);
  b_row := tests.row_json(tbl, b_id, key_column);

  return next ok((select relrowsecurity from pg_class where oid = format('public.%I', tbl)::regclass),
    tbl || ': row-level security is enabled');

  -- A member of Alpha, Alpha in the header.
  perform tests.act_as('Alpha_staff', ta);
  return next results_eq(format('select distinct tenant_id from public.%I', tbl), array[ta],
    tbl || ': an Alpha member sees Alpha''s rows and no others');
  return next is(tests.rows_changed(format('update public.%I set updated_at = now() where %I = %L', tbl, key_column, b_id)), 0::bigint,
    tbl || ': an Alpha member cannot update Beta''s row by id');

  perform tests.act_as('Alpha_admin', ta);
  code := tests.error_of(tests.copy_insert(tbl, a_row, jsonb_build_object('tenant_id', tb)));
  return next is(code, insert_refusal, tbl || ': an Alpha admin cannot insert a row into Beta');
  return next throws_ok(format('update public.%I set tenant_id = %L where %I = %L', tbl, tb, key_column, a_id), '42501',
    'tenant_id cannot change', tbl || ': an Alpha admin cannot move an Alpha row to Beta');
  if parent_change is not null then
    code := tests.error_of(tests.copy_insert(tbl, a_row, (
      select jsonb_object_agg(key, case when value #>> '{}' like 'beta:%'
                                      then b -> substr(value #>> '{}', 6) else value end)
      from jsonb_each(parent_change))));
    return next is(code, '23503', tbl || ': an Alpha row cannot reference a Beta parent row');
  end if;

  -- A member of Alpha who puts Beta in the header.
  perform tests.act_as('Alpha_owner', tb);
  return next is_empty(format('select 1 from public.%I', tbl),
    tbl || ': Beta in the header without membership sees nothing');
  return next is(tests.rows_changed(format('update public.%I set updated_at = now() where %I = %L', tbl, key_column, b_id)), 0::bigint,
    tbl || ': Beta in the header without membership updates nothing');
  return next is(tests.rows_changed(format('delete from public.%I where %I = %L', tbl, key_column, b_id)), 0::bigint,
    tbl || ': Beta in the header without membership deletes nothing');
  code := tests.error_of(tests.copy_insert(tbl, b_row, '{}'));
  return next is(code, insert_refusal, tbl || ': Beta in the header without membership inserts nothing');

  -- No tenant in the header at all.
  perform tests.act_as('Alpha_owner', null);
  return next is_empty(format('select 1 from public.%I', tbl), tbl || ': no tenant in context sees nothing');

  perform tests.act_as_anon();
  return next throws_ok(format('select 1 from public.%I', tbl), '42501', format('permission denied for table %s', tbl),
    tbl || ': anon reaches no tenant data');

  perform tests.act_as_worker(ta);
  return next results_eq(format('select distinct tenant_id from public.%I', tbl), array[ta],
    tbl || ': the background worker sees only the job''s tenant');
  return next throws_ok(format('delete from public.%I', tbl), '42501', null,
    tbl || ': the background worker cannot write');
  perform tests.act_as_worker(null);
  return next is_empty(format('select 1 from public.%I', tbl), tbl || ': the background worker without a job''s tenant sees nothing');

  -- Staff against managers.
  perform tests.act_as('Alpha_staff', ta);
  return next is(tests.rows_changed(format('delete from public.%I where %I = %L', tbl, key_column, a_id)), 0::bigint,
    tbl || ': staff cannot delete');
  if staff_writes then
    return next is(tests.rows_changed(format('update public.%I set updated_at = now() where %I = %L', tbl, key_column, a_id)), 1::bigint,
      tbl || ': staff can update');
  else
    return next is(tests.rows_changed(format('update public.%I set updated_at = now() where %I = %L', tbl, key_column, a_id)), 0::bigint,
      tbl || ': staff cannot update');
    return next throws_ok(tests.copy_insert(tbl, a_row, '{"name": "Staff made this", "code": "STAFF"}'), '42501', null,
      tbl || ': staff cannot create');
  end if;
  perform tests.act_as('Alpha_admin', ta);
  return next is(tests.rows_changed(format('update public.%I set updated_at = now() where %I = %L', tbl, key_column, a_id)), 1::bigint,
    tbl || ': an admin can update');

  -- Whatever happened above, Beta's row is as it was and Alpha's stayed in Alpha.
  perform tests.act_as_operator();
  return next is(tests.row_json(tbl, b_id, key_column), b_row, tbl || ': Beta''s row is untouched');
  return next is(tests.row_json(tbl, a_id, key_column) ->> 'tenant_id', ta::text, tbl || ': Alpha''s row is still Alpha''s');
  return;
end
$$;

select tests.isolation_checks('properties', null, false);
select tests.isolation_checks('room_types', '{"property_id": "beta:properties"}', false);
select tests.isolation_checks('units', '{"property_id": "beta:properties"}', false);
select tests.isolation_checks('unit_blocks', '{"unit_id": "beta:units"}', true, '23503');
select tests.isolation_checks('rate_plans', '{"property_id": "beta:properties"}', false);
select tests.isolation_checks('rate_plan_days', '{"rate_plan_id": "beta:rate_plans"}', false, key_column => 'rate_plan_id');
select tests.isolation_checks('guests', null, true);
select tests.isolation_checks('reservations',
  '{"guest_id": "beta:guests", "check_in": "2031-01-01", "check_out": "2031-01-03"}', true, '23503');
select tests.isolation_checks('payment_links', '{"reservation_id": "beta:reservations"}', true);
select tests.isolation_checks('payments', '{"reservation_id": "beta:reservations"}', true);
select tests.isolation_checks('tasks', '{"unit_id": "beta:units"}', true);
select tests.isolation_checks('access_codes', '{"reservation_id": "beta:reservations"}', true, '23503');

-- The tenant rows themselves and the membership lists.
select tests.act_as_operator();
select fixture.a ->> 'tenants' as ta, fixture.b ->> 'tenants' as tb from fixture \gset

select ok((select relrowsecurity from pg_class where oid = 'public.tenants'::regclass), 'tenants: row-level security is enabled');
select ok((select relrowsecurity from pg_class where oid = 'public.tenant_memberships'::regclass),
  'tenant_memberships: row-level security is enabled');

select tests.act_as('Alpha_staff', :'ta');
select results_eq('select id from public.tenants', array[:'ta'::uuid], 'tenants: a member sees only the tenant in context');
select results_eq('select distinct tenant_id from public.tenant_memberships', array[:'ta'::uuid],
  'tenant_memberships: a member sees only the members of the tenant in context');
select is(tests.rows_changed('update public.tenants set name = ''Staff renamed'''), 0::bigint, 'tenants: staff cannot change settings');
select throws_ok(format('insert into public.tenants (id, name) values (%L, ''Forged'')', gen_random_uuid()), '42501', null,
  'tenants: nobody inserts a tenant directly');

select tests.act_as('Alpha_owner', :'tb');
select is_empty('select 1 from public.tenants', 'tenants: Beta in the header without membership sees nothing');
select is_empty('select 1 from public.tenant_memberships', 'tenant_memberships: Beta in the header without membership sees nothing');
select is(tests.rows_changed('update public.tenants set name = ''Taken'''), 0::bigint,
  'tenants: Beta in the header without membership changes nothing');
select is(tests.rows_changed('delete from public.tenant_memberships'), 0::bigint,
  'tenant_memberships: Beta in the header without membership removes nothing');
select throws_ok(format('insert into public.tenant_memberships (tenant_id, user_id, role) values (%L, %L, ''owner'')',
  :'tb', tests.user_id('Alpha_owner')), '42501', null,
  'tenant_memberships: nobody makes themselves a member of another tenant');

select tests.act_as('Alpha_owner', null);
select is_empty('select 1 from public.tenants', 'tenants: no tenant in context sees nothing');

select tests.act_as_anon();
select throws_ok('select 1 from public.tenants', '42501', null, 'tenants: anon reaches nothing');
select throws_ok('select 1 from public.tenant_memberships', '42501', null, 'tenant_memberships: anon reaches nothing');

select tests.act_as_operator();
select is((select name from public.tenants where id = :'tb'), 'Beta Hotels', 'tenants: Beta''s name is untouched');
select is((select count(*) from public.tenant_memberships where tenant_id = :'tb'), 3::bigint,
  'tenant_memberships: Beta''s members are untouched');

-- Every table in public is tenant data under RLS; a new table without it fails here.
select is_empty($$
  select c.relname from pg_class c
  where c.relnamespace = 'public'::regnamespace and c.relkind in ('r', 'p') and not c.relrowsecurity
$$, 'every table in public has row-level security enabled');

select * from finish();
rollback;
