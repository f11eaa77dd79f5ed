-- The rules every table, policy and function must follow, checked on everything the catalog
-- holds in the schemas a request can reach (tests.reachable_schemas: the Data API's schemas
-- and every schema a request role of tests.request_roles may use), so a new table, view,
-- policy or function is covered without editing this file. Why these rules: docs/security.md.
begin;
\ir ../helpers/setup.psql
\ir ../helpers/security.psql
select * from no_plan();

select diag('schemas a request can reach: ' || array_to_string(tests.reachable_schemas(), ', '));
select diag('of them served by the Data API when it is on: ' || array_to_string(tests.data_api_schemas(), ', '));

select ok('public' = any (tests.reachable_schemas()), 'public is among the schemas checked');
select ok(not ('private' = any (tests.data_api_schemas())), 'private, where the helpers live, is not served by the Data API');
select ok(not pg_catalog.has_schema_privilege('anon', 'private', 'USAGE'), 'anon cannot use the private schema');

-- No request role escapes row-level security.
select is_empty(
  $$select rolname from pg_catalog.pg_roles
    where rolname = any (tests.request_roles()) and (rolsuper or rolbypassrls)$$,
  'no request role is a superuser or bypasses row-level security');
select is(array_length(tests.request_roles(), 1), 5, 'the five request roles exist');

create function tests.relation_checks() returns setof text
language plpgsql as $$
declare
  r record;
  granted text[];
  holders text[];
  options text[];
begin
  for r in select * from tests.reachable_relations() loop
    -- The request roles that hold any privilege on it.
    select coalesce(array_agg(role order by role), '{}') into holders
    from unnest(tests.request_roles()) role
    where tests.privileges_of(role, r.rel) <> '{}';

    -- Supabase's own services' tables: what they grant is theirs to decide, but a table a
    -- request role can touch must have row-level security (Auth's tables grant nothing).
    if r.platform then
      if r.kind in ('r', 'p') then
        return next ok(holders = '{}' or (select relrowsecurity from pg_catalog.pg_class where oid = r.rel),
          format('%s (the platform''s): row-level security is enabled or no request role holds a privilege', r.rel));
      end if;
      continue;
    end if;

    -- anon holds nothing of the project's: what anon may read or call is nothing at all.
    granted := tests.privileges_of('anon', r.rel);
    return next is(granted, '{}'::text[], format('%s: anon holds no privilege', r.rel));

    continue when r.kind = 'S';

    if r.kind in ('r', 'p') then
      -- Every table the Data API would serve has RLS on, whatever its grants; elsewhere,
      -- every table a request role holds a privilege on. (Supabase Auth's own tables in
      -- auth, on which no request role holds anything, are the ones this leaves out.)
      if r.schema_name = any (tests.data_api_schemas()) or holders <> '{}' then
        return next ok((select relrowsecurity from pg_catalog.pg_class where oid = r.rel),
          format('%s: row-level security is enabled (roles holding privileges: %s)', r.rel, holders));
      end if;
      -- A table's owner bypasses its policies unless RLS is forced. The project's tables
      -- belong to postgres, whose definer helpers read them as owner on purpose, so RLS is
      -- not forced; what must never happen is a request role owning one.
      return next ok(
        not (pg_catalog.pg_get_userbyid((select relowner from pg_catalog.pg_class where oid = r.rel)) = any (tests.request_roles()))
        or (select relforcerowsecurity from pg_catalog.pg_class where oid = r.rel),
        format('%s: no request role owns it (or its RLS is forced)', r.rel));
      -- TRUNCATE ignores row-level security; REFERENCES and TRIGGER serve no request.
      return next is(
        (select coalesce(array_agg(format('%s:%s', role, p) order by role, p), '{}')
         from unnest(tests.request_roles()) role,
              unnest(array['TRUNCATE', 'REFERENCES', 'TRIGGER']) p
         where p = any (tests.privileges_of(role, r.rel))),
        '{}'::text[],
        format('%s: no request role may truncate it, reference it or put a trigger on it', r.rel));
    elsif r.kind = 'v' then
      -- A view reads its tables as the view's owner, past their policies, unless it runs
      -- as the caller (security_invoker).
      select c.reloptions into options from pg_catalog.pg_class c where c.oid = r.rel;
      return next ok(holders = '{}' or coalesce('security_invoker=true' = any (options), false)
                                   or coalesce('security_invoker=on' = any (options), false),
        format('%s: a view request roles can use runs as the caller (security_invoker)', r.rel));
    else
      -- A materialized view or a foreign table has no row-level security at all.
      return next is(holders, '{}'::text[],
        format('%s: no request role holds a privilege on this relation without row-level security', r.rel));
    end if;
  end loop;
end
$$;
select * from tests.relation_checks();

-- Every policy on a relation a request can reach names its roles and is scoped to the
-- request's tenant: each of its expressions has, as a conjunct of its top level, the row's
-- tenant key (tenant_id, or id on the tenants table) equal to private.request_tenant_id(),
-- so nothing it admits can lie outside the tenant the api function checked the caller into.
-- There is no exception today; one would be argued for in docs/security.md and tested here.
create function tests.policy_checks() returns setof text
language plpgsql as $$
declare
  p record;
  key name;
begin
  for p in
    select pol.polname, pol.polrelid::regclass as rel, pol.polcmd, pol.polroles,
           pg_catalog.pg_get_expr(pol.polqual, pol.polrelid) as qual,
           pg_catalog.pg_get_expr(pol.polwithcheck, pol.polrelid) as with_check
    from pg_catalog.pg_policy pol
    where pol.polrelid in (select rel from tests.reachable_relations())
    order by pol.polrelid::regclass::text, pol.polname
  loop
    key := tests.tenant_key(p.rel);
    return next ok(not (0::oid = any (p.polroles)) and not ('anon'::regrole::oid = any (p.polroles)),
      format('%s, policy "%s": names its roles, neither PUBLIC nor anon', p.rel, p.polname));
    return next ok(key is not null, format('%s, policy "%s": the table has a tenant key', p.rel, p.polname));
    if p.polcmd <> 'a' then -- every command but INSERT filters the rows it sees
      return next ok(tests.scoped_by_tenant(p.qual, key),
        format('%s, policy "%s": USING is scoped to the request''s tenant: %s', p.rel, p.polname,
               regexp_replace(coalesce(p.qual, '(none)'), '\s+', ' ', 'g')));
    end if;
    if p.with_check is not null or p.polcmd = 'a' then
      return next ok(tests.scoped_by_tenant(p.with_check, key),
        format('%s, policy "%s": WITH CHECK is scoped to the request''s tenant: %s', p.rel, p.polname,
               regexp_replace(coalesce(p.with_check, '(none)'), '\s+', ' ', 'g')));
    end if;
  end loop;
end
$$;
select * from tests.policy_checks();

-- The check itself tells a scoped expression from unscoped ones.
select ok(tests.scoped_by_tenant('((tenant_id = ( SELECT private.request_tenant_id() AS request_tenant_id)) AND (a = 1))', 'tenant_id'),
  'the policy check takes a tenant conjunct beside others');
select ok(not tests.scoped_by_tenant('((tenant_id = ( SELECT private.request_tenant_id() AS request_tenant_id)) OR true)', 'tenant_id'),
  'the policy check refuses a tenant comparison under OR');
select ok(not tests.scoped_by_tenant('(NOT (tenant_id = ( SELECT private.request_tenant_id() AS request_tenant_id)))', 'tenant_id'),
  'the policy check refuses a negated tenant comparison');
select ok(not tests.scoped_by_tenant('(property_id = ( SELECT private.request_tenant_id() AS request_tenant_id))', 'tenant_id'),
  'the policy check refuses a comparison of another column');
select ok(not tests.scoped_by_tenant('(note = ''x AND tenant_id = ( SELECT private.request_tenant_id() AS request_tenant_id)'')', 'tenant_id'),
  'the policy check is not fooled by a quoted literal');

-- A security definer function runs with its owner's rights: a search_path it does not fix
-- is the caller's, who could put their own objects ahead of the ones it means. Every such
-- function in a schema outside Postgres's own fixes it, to schemas no request role or
-- PUBLIC can create objects in. Left out: functions of an extension and the platform's
-- own (owned by its supabase_* roles), which the project cannot alter.
create function tests.definer_checks() returns setof text
language plpgsql as $$
declare
  f record;
  path text;
  writable text[];
begin
  for f in
    select p.oid::regprocedure as fn, p.proconfig
    from pg_catalog.pg_proc p
    join pg_catalog.pg_namespace n on n.oid = p.pronamespace
    where p.prosecdef
      and n.nspname not in ('pg_catalog', 'information_schema') and n.nspname not like 'pg\_toast%'
      and not exists (select 1 from pg_catalog.pg_depend d
                      where d.classid = 'pg_catalog.pg_proc'::regclass and d.objid = p.oid and d.deptype = 'e')
      and pg_catalog.pg_get_userbyid(p.proowner) not like 'supabase%'
    order by p.oid::regprocedure::text
  loop
    path := (select substr(c, length('search_path=') + 1) from unnest(f.proconfig) c where c like 'search_path=%');
    return next ok(path is not null, format('%s: security definer with a fixed search_path (%s)', f.fn, coalesce(path, 'none')));
    select coalesce(array_agg(s), '{}') into writable
    from unnest(coalesce(string_to_array(path, ','), '{}')) as entry,
         lateral (select btrim(btrim(entry), '"') as s) x
    where s <> '' and s not in ('pg_catalog', 'pg_temp')
      and exists (select 1 from pg_catalog.pg_namespace n where n.nspname = s
                  and (pg_catalog.has_schema_privilege('public', n.oid, 'CREATE')
                       or exists (select 1 from unnest(tests.request_roles()) r
                                  where pg_catalog.has_schema_privilege(r, n.oid, 'CREATE'))));
    return next is(writable, '{}'::text[], format('%s: its search_path names no schema a request role can create objects in', f.fn));
  end loop;
end
$$;
select * from tests.definer_checks();

-- What new objects get: the default privileges of postgres, the role the migrations run as
-- (the platform's own roles' defaults are not the project's to change), grant anon nothing
-- in the schemas a request can reach nor anywhere by default, and no request role
-- TRUNCATE, REFERENCES or TRIGGER on new tables.
select is_empty(
  $$select format('%s %s %s: %s', coalesce(n.nspname, '(every schema)'), d.defaclobjtype,
                  pg_catalog.pg_get_userbyid(a.grantee), a.privilege_type)
    from pg_catalog.pg_default_acl d
    left join pg_catalog.pg_namespace n on n.oid = d.defaclnamespace
    cross join lateral aclexplode(d.defaclacl) a
    where d.defaclrole = 'postgres'::regrole
      and (d.defaclnamespace = 0 or n.nspname = any (tests.reachable_schemas()))
      and (a.grantee = 'anon'::regrole
           or (d.defaclobjtype = 'r' and a.privilege_type in ('TRUNCATE', 'REFERENCES', 'TRIGGER')
               and pg_catalog.pg_get_userbyid(a.grantee) = any (tests.request_roles())))$$,
  'default privileges give anon nothing new, and no request role TRUNCATE, REFERENCES or TRIGGER on new tables');

select * from finish();
rollback;
