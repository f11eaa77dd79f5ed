-- The Data API door. The project keeps Supabase's Data API (PostgREST) off, but an operator
-- can turn it on again from the dashboard, and then it serves the schemas in
-- tests.data_api_schemas() to anyone holding the anon key or a user's access token, beside
-- the api function. This file plays PostgREST exactly as it serves a request (its
-- transaction-scoped settings: the role, request.jwt.claims, request.method, request.path,
-- request.headers and request.cookies, the search path and the role's own settings; never
-- app.tenant_id, which only the api function sets after checking the session), against
-- every table, view and function in those schemas, enumerated from the catalog:
-- - as anon, with the anon key's claims;
-- - as authenticated, with the claims of the owner of a tenant whose session is active;
-- - as authenticated, with the claims of a member who signed out (the session's row is gone
--   from auth.sessions, as Auth's sign-out leaves it) and of one whose session expired
--   (not_after passed): the api function answers both 401.
-- It shows that nothing is read (no row, or permission denied) and nothing written (refused,
-- or no row affected) that the api function would refuse, and that every function anon or
-- authenticated may execute there fails or returns and writes nothing without the api
-- function's context, but for the two the api function itself serves without a tenant
-- (create_tenant, list_my_tenants), which act only for an active session's own user.
-- docs/security.md explains the decision.
begin;
\ir ../helpers/setup.psql
\ir ../helpers/security.psql
select * from no_plan();

-- A tenant with a row in every table: make_tenant's, and the four it leaves empty (the
-- access code's notification, sent, takes a delivery event).
select tests.use_fixture(tests.make_tenant('Alpha')) is not null as fixture \gset
insert into public.api_keys (tenant_id, name, key_id, secret_hash, last_four)
values (tests.fx('tenants'), 'Channel manager', 'abcdefghijklmnop', decode(repeat('ab', 32), 'hex'), 'wxyz');
insert into public.api_key_properties (tenant_id, api_key_id, property_id)
select k.tenant_id, k.id, tests.fx('properties') from public.api_keys k where k.tenant_id = tests.fx('tenants');
insert into public.idempotency_keys (tenant_id, api_key_id, key, request_hash)
select k.tenant_id, k.id, 'retry-1', decode(repeat('cd', 32), 'hex') from public.api_keys k where k.tenant_id = tests.fx('tenants');
insert into public.notification_preferences (tenant_id, template_key, channel, enabled)
values (tests.fx('tenants'), 'checkin_reminder', 'email', false);
update public.notifications set status = 'sent', sent_at = now(), provider_message_id = 'M-1'
where tenant_id = tests.fx('tenants') and template_key = 'access_code_delivery';
insert into public.notification_events (tenant_id, notification_id, provider, provider_event_id, event, delivery_state, occurred_at)
select n.tenant_id, n.id, 'sendgrid', 'ev-1', 'delivered', 'delivered', now()
from public.notifications n where n.tenant_id = tests.fx('tenants') and n.template_key = 'access_code_delivery';

-- The sessions: the owner's is active; the admin signed out; the staff member's expired.
select tests.session_of(tests.fx('owner')) is not null as owner_session \gset
select tests.session_of(tests.fx('admin')) is not null as admin_session \gset
select tests.session_of(tests.fx('staff')) is not null as staff_session \gset
delete from auth.sessions where id = (select session_id from tests.sessions where user_id = tests.fx('admin'));
update auth.sessions set not_after = now() - interval '1 minute'
where id = (select session_id from tests.sessions where user_id = tests.fx('staff'));

-- The claims PostgREST puts in request.jwt.claims: the verified token's payload, as
-- Supabase Auth signs a user's access token, and as the anon key is signed.
create function tests.user_claims(uid uuid) returns jsonb
language sql stable as $$
  select jsonb_build_object(
    'aud', 'authenticated', 'iss', 'http://127.0.0.1:54321/auth/v1',
    'iat', extract(epoch from now())::bigint, 'exp', extract(epoch from now())::bigint + 3600,
    'sub', uid, 'email', (select email from auth.users where id = uid), 'phone', '',
    'app_metadata', jsonb_build_object('provider', 'email', 'providers', jsonb_build_array('email')),
    'user_metadata', '{}'::jsonb, 'role', 'authenticated', 'aal', 'aal1',
    'amr', jsonb_build_array(jsonb_build_object('method', 'password', 'timestamp', extract(epoch from now())::bigint)),
    'session_id', (select session_id from tests.sessions where user_id = uid), 'is_anonymous', false)
$$;

create table tests.callers (name text primary key, role name not null, claims jsonb not null, user_id uuid);
grant select on tests.callers to public;
insert into tests.callers values
  ('anon', 'anon', jsonb_build_object('iss', 'supabase-demo', 'role', 'anon', 'iat', 1700000000, 'exp', 2100000000), null),
  ('the owner, session active', 'authenticated', tests.user_claims(tests.fx('owner')), tests.fx('owner')),
  ('a member, signed out', 'authenticated', tests.user_claims(tests.fx('admin')), tests.fx('admin')),
  ('a member, session expired', 'authenticated', tests.user_claims(tests.fx('staff')), tests.fx('staff'));

-- PostgREST's transaction-scoped settings for one request, then the role's own settings (a
-- statement_timeout), as it applies them. The headers are what a client sends, with the
-- tenant's id in x-tenant-id: PostgREST only files it under request.headers. api_context
-- adds what the api function sets after its checks (app.tenant_id), for the controls.
create function tests.as_postgrest(caller text, method text, path text, api_context boolean default false)
returns void
language plpgsql as $$
declare
  c tests.callers := (select x from tests.callers x where x.name = caller);
  setting text;
begin
  perform set_config('role', 'postgres', true);
  -- A connection PostgREST serves from has never had the api function's settings.
  perform set_config('app.tenant_id', case when api_context then tests.fx('tenants')::text else '' end, true);
  perform set_config('app.property_ids', '', true);
  perform set_config('app.all_properties', '', true);
  perform set_config('app.api_scopes', '', true);
  perform set_config('app.api_key_id', '', true);
  perform set_config('search_path', 'public, extensions', true);
  perform set_config('role', c.role, true);
  perform set_config('request.jwt.claims', c.claims::text, true);
  perform set_config('request.method', method, true);
  perform set_config('request.path', path, true);
  perform set_config('request.headers', jsonb_build_object(
    'host', '127.0.0.1:54321', 'accept', 'application/json', 'user-agent', 'pgtap',
    'apikey', 'anon-key', 'authorization', 'Bearer user-token', 'x-tenant-id', tests.fx('tenants'),
    'prefer', 'return=minimal')::text, true);
  perform set_config('request.cookies', '{}', true);
  for setting in
    select unnest(s.setconfig) from pg_catalog.pg_db_role_setting s
    where s.setrole = (select oid from pg_catalog.pg_roles where rolname = c.role) and s.setdatabase = 0
  loop
    perform set_config(split_part(setting, '=', 1), substr(setting, strpos(setting, '=') + 1), true);
  end loop;
end
$$;

-- Rows written in this transaction so far (inserted, updated or deleted, in any table).
create function tests.rows_written() returns bigint
language sql as $$
  select coalesce(sum(n_tup_ins + n_tup_upd + n_tup_del), 0)::bigint from pg_catalog.pg_stat_xact_all_tables
$$;

-- One request: the statement as PostgREST's caller, in a subtransaction that is always
-- rolled back. code is the SQLSTATE it failed with (null when it ran), n the rows it
-- returned (a query that selects a count) or affected, written the rows it wrote.
-- triggerless runs it with triggers off (session_replication_role = replica), so that only
-- the grants and the policies can refuse it.
create function tests.probe(caller text, method text, path text, statement text, returns_count boolean,
                            triggerless boolean default false, api_context boolean default false,
                            out code text, out n bigint, out written bigint)
language plpgsql as $$
declare
  before bigint := tests.rows_written();
  detail text;
begin
  begin
    if triggerless then
      perform set_config('session_replication_role', 'replica', true);
    end if;
    perform tests.as_postgrest(caller, method, path, api_context);
    if returns_count then
      execute statement into n;
    else
      execute statement;
      get diagnostics n = row_count;
    end if;
    perform set_config('role', 'postgres', true);
    raise exception using errcode = 'PX000', message = 'probe done',
      detail = jsonb_build_object('n', n, 'written', tests.rows_written() - before)::text;
  exception
    when sqlstate 'PX000' then
      get stacked diagnostics detail = pg_exception_detail;
      code := null;
      n := (detail::jsonb ->> 'n')::bigint;
      written := (detail::jsonb ->> 'written')::bigint;
    when others then
      code := sqlstate;
      n := 0;
      written := 0;
  end;
end
$$;

-- An insert of a copy of one of Alpha's rows (any row where the table has no tenant key),
-- with a fresh id: a row that is valid but for where it comes from. A table without rows
-- gets an insert of its defaults.
create function tests.copy_of_a_row(rel regclass) returns text
language plpgsql as $$
declare
  cols text;
  source jsonb;
  key name := tests.tenant_key(rel);
begin
  execute format('select to_jsonb(x) from %s x %s limit 1', rel,
                 case when key is not null then format('where %I = %L', key, tests.fx('tenants')) else '' end)
    into source;
  if source is null then
    return format('insert into %s default values', rel);
  end if;
  if source ? 'id' and (select atttypid from pg_catalog.pg_attribute where attrelid = rel and attname = 'id') = 'uuid'::regtype then
    source := source || jsonb_build_object('id', gen_random_uuid());
  end if;
  -- A column Postgres always generates (an identity GENERATED ALWAYS) takes no value.
  select string_agg(quote_ident(attname), ', ' order by attnum) into cols
  from pg_catalog.pg_attribute
  where attrelid = rel and attnum > 0 and not attisdropped and attgenerated = '' and attidentity <> 'a';
  return format('insert into %1$s (%2$s) select %2$s from jsonb_populate_record(null::%1$s, %3$L::jsonb)', rel, cols, source);
end
$$;

-- The column an update sets to itself: one the role may update, or else the first.
create function tests.update_column(rel regclass, role name) returns name
language sql stable as $$
  select coalesce(
    (select attname from pg_catalog.pg_attribute
     where attrelid = rel and attnum > 0 and not attisdropped and attgenerated = ''
       and pg_catalog.has_column_privilege(role, rel, attname, 'UPDATE') order by attnum limit 1),
    (select attname from pg_catalog.pg_attribute
     where attrelid = rel and attnum > 0 and not attisdropped and attgenerated = '' order by attnum limit 1))
$$;

select diag('schemas the Data API would serve: ' || array_to_string(tests.data_api_schemas(), ', '));

-- Every table, view, materialized view and foreign table the Data API would serve, as
-- each caller: GET, POST (as sent, and again with triggers off so that only the grants and
-- the policies refuse it), PATCH and DELETE of every row.
create function tests.relation_probes() returns setof text
language plpgsql as $$
declare
  r record;
  who tests.callers;
  path text;
  p record;
  insert_statement text;
  alpha_rows bigint;
  alpha_key name;
begin
  for r in select * from tests.reachable_relations(array['r', 'p', 'v', 'm', 'f']::"char"[])
           where schema_name = any (tests.data_api_schemas()) loop
    path := '/' || (select relname from pg_catalog.pg_class where oid = r.rel);
    insert_statement := tests.copy_of_a_row(r.rel);
    alpha_key := tests.tenant_key(r.rel);
    execute format('select count(*) from %s %s', r.rel,
                   case when alpha_key is not null then format('where %I = %L', alpha_key, tests.fx('tenants')) else '' end)
      into alpha_rows;
    if alpha_rows = 0 then
      perform diag(format('%s holds no row of the tenant here: reading nothing proves little; its policies are checked in catalog.test.sql', r.rel));
    end if;

    for who in select * from tests.callers order by name loop
      p := tests.probe(who.name, 'GET', path, format('select count(*) from %s', r.rel), true);
      return next ok(p.code = '42501' or (p.code is null and p.n = 0),
        format('%s as %s: GET reads nothing (%s)', r.rel, who.name, coalesce('refused ' || p.code, p.n || ' rows')));

      p := tests.probe(who.name, 'POST', path, insert_statement, false);
      return next ok(p.code is not null and p.written = 0,
        format('%s as %s: POST of a copy of the tenant''s row is refused (%s)', r.rel, who.name, coalesce(p.code, p.n || ' rows')));
      p := tests.probe(who.name, 'POST', path, insert_statement, false, triggerless => true);
      return next is(p.code, '42501',
        format('%s as %s: the same POST with triggers off is refused by the grants or the policies', r.rel, who.name));

      p := tests.probe(who.name, 'PATCH', path,
        format('update %s set %2$I = %2$I', r.rel, tests.update_column(r.rel, who.role)), false);
      return next ok(p.code = '42501' or (p.code is null and p.n = 0 and p.written = 0),
        format('%s as %s: PATCH of every row changes nothing (%s)', r.rel, who.name, coalesce('refused ' || p.code, p.n || ' rows')));

      p := tests.probe(who.name, 'DELETE', path, format('delete from %s', r.rel), false);
      return next ok(p.code = '42501' or (p.code is null and p.n = 0 and p.written = 0),
        format('%s as %s: DELETE of every row deletes nothing (%s)', r.rel, who.name, coalesce('refused ' || p.code, p.n || ' rows')));
    end loop;

    -- The control: with the api function's context (the tenant it checked the owner into)
    -- the same caller reads every row the tenant has here, so the probe's nothing above
    -- comes from the missing context, not from a probe that cannot see.
    if pg_catalog.has_table_privilege('authenticated', r.rel, 'SELECT') then
      p := tests.probe('the owner, session active', 'GET', path, format('select count(*) from %s', r.rel), true,
                       api_context => true);
      return next is(p.n, alpha_rows,
        format('%s: the owner reads the tenant''s %s rows in the api function''s context (the control)', r.rel, alpha_rows));
    end if;
  end loop;
end
$$;
select * from tests.relation_probes();

-- The functions a client could call as RPCs (POST /rpc/<name>): every function in those
-- schemas that anon or authenticated may execute. Functions an extension installs
-- (pg_graphql's graphql_public.graphql on a hosted project) are left out: pg_graphql runs
-- the query it is given as the caller, under the same grants and policies probed above.
create function tests.rpc_functions() returns table (fn regprocedure, name name, returns_void boolean, is_procedure boolean)
language sql stable as $$
  select p.oid::regprocedure, p.proname, p.prorettype = 'void'::regtype, p.prokind = 'p'
  from pg_catalog.pg_proc p
  join pg_catalog.pg_namespace n on n.oid = p.pronamespace
  where n.nspname = any (tests.data_api_schemas()) and p.prokind in ('f', 'p')
    and p.prorettype not in ('trigger'::regtype, 'event_trigger'::regtype)
    and (pg_catalog.has_function_privilege('anon', p.oid, 'EXECUTE')
         or pg_catalog.has_function_privilege('authenticated', p.oid, 'EXECUTE'))
    and not exists (select 1 from pg_catalog.pg_depend d
                    where d.classid = 'pg_catalog.pg_proc'::regclass and d.objid = p.oid and d.deptype = 'e')
  order by 1::text
$$;

-- The two functions the api function serves without a tenant in context: GET and POST
-- /v1/tenants. For an active session they do what those routes do; for anyone else nothing.
create function tests.served_without_tenant() returns regprocedure[]
language sql stable as $$
  select array_remove(array[to_regprocedure('public.create_tenant(text)'), to_regprocedure('public.list_my_tenants()')], null)
$$;

select diag('functions anon or authenticated may execute there: ' ||
            coalesce((select string_agg(fn::text, ', ') from tests.rpc_functions()), 'none'));

select is_empty(
  $$select p.oid::regprocedure::text from pg_catalog.pg_proc p join pg_catalog.pg_namespace n on n.oid = p.pronamespace
    where n.nspname = any (tests.data_api_schemas())
      and pg_catalog.has_function_privilege('anon', p.oid, 'EXECUTE')
      and not exists (select 1 from pg_catalog.pg_depend d
                      where d.classid = 'pg_catalog.pg_proc'::regclass and d.objid = p.oid and d.deptype = 'e')$$,
  'anon may execute no function the Data API would serve');

-- Calls of each function with arguments a caller would try: for a uuid, another member's
-- id, the tenant's id, a reservation's id; for text, another member's email; for a
-- tenant_role, owner; null for anything else. One call per candidate.
create function tests.rpc_calls(fn regprocedure) returns setof text
language plpgsql stable as $$
declare
  types oid[] := (select string_to_array(nullif(proargtypes::text, ''), ' ')::oid[] from pg_catalog.pg_proc where oid = fn);
  arguments text[];
  t oid;
begin
  for i in 1..3 loop
    arguments := '{}';
    foreach t in array coalesce(types, '{}') loop
      arguments := arguments || case
        when t = 'uuid'::regtype then quote_literal((array[tests.fx('staff'), tests.fx('tenants'), tests.fx('reservations')])[i]) || '::uuid'
        when t = 'text'::regtype then quote_literal((select email from auth.users where id = tests.fx('staff'))) || '::text'
        when t = to_regtype('public.tenant_role') then '''owner''::public.tenant_role'
        else format('null::%s', t::regtype) end;
    end loop;
    return next format('%I.%I(%s)', (select nspname from pg_catalog.pg_namespace n join pg_catalog.pg_proc p on p.pronamespace = n.oid where p.oid = fn),
                       (select proname from pg_catalog.pg_proc where oid = fn), array_to_string(arguments, ', '));
    -- Only a uuid has more than one candidate.
    exit when not ('uuid'::regtype = any (coalesce(types, '{}')));
  end loop;
end
$$;

create function tests.rpc_probes() returns setof text
language plpgsql as $$
declare
  f record;
  who tests.callers;
  call text;
  p record;
begin
  for f in select * from tests.rpc_functions() loop
    for who in select * from tests.callers order by name loop
      for call in select * from tests.rpc_calls(f.fn) loop
        -- A void function or a procedure returns nothing to count: what it wrote tells.
        p := tests.probe(who.name, 'POST', '/rpc/' || f.name,
          case when f.is_procedure then 'call ' || call
               when f.returns_void then 'select ' || call
               else format('select count(*) from %s as r where not (r is null)', call) end,
          not (f.is_procedure or f.returns_void));
        if f.is_procedure or f.returns_void then
          p.n := 0;
        end if;
        if who.name = 'the owner, session active' and f.fn = any (tests.served_without_tenant()) then
          continue; -- what it does for an active session is checked below
        end if;
        return next ok(p.code is not null or (p.n = 0 and p.written = 0),
          format('RPC %s as %s fails or returns and writes nothing (%s)', call, who.name,
                 coalesce('refused ' || p.code, p.n || ' rows, ' || p.written || ' written')));
      end loop;
    end loop;
  end loop;
end
$$;
select * from tests.rpc_probes();

-- What the two tenant-free functions do for an active session, as PostgREST's caller: only
-- what GET and POST /v1/tenants do for that user.
select tests.as_postgrest('the owner, session active', 'POST', '/rpc/list_my_tenants');
select results_eq('select tenant_id, role::text from public.list_my_tenants()',
  format('values (%L::uuid, ''owner'')', tests.fx('tenants')),
  'list_my_tenants for an active session: the caller''s own tenant and role, as GET /v1/tenants');
select tests.as_postgrest('the owner, session active', 'POST', '/rpc/create_tenant');
select (public.create_tenant('Made through the Data API')).id as made \gset
select tests.as_postgrest('the owner, session active', 'GET', '/tenant_memberships');
select is_empty('select 1 from public.tenant_memberships', 'the new tenant''s rows are still out of reach without the api function''s context');
select tests.act_as_operator();
select results_eq(format('select user_id, role::text from public.tenant_memberships where tenant_id = %L', :'made'),
  format('values (%L::uuid, ''owner'')', tests.fx('owner')),
  'create_tenant for an active session makes a tenant with the caller as its only member, as POST /v1/tenants');

-- The same two for a session that has ended: the refusal says so.
select tests.as_postgrest('a member, signed out', 'POST', '/rpc/create_tenant');
select throws_ok('select public.create_tenant(''Ghost Inn'')', '42501', 'the session has ended; sign in again',
  'create_tenant refuses a signed-out session');
select is_empty('select 1 from public.list_my_tenants()', 'list_my_tenants shows a signed-out session nothing');
select tests.as_postgrest('a member, session expired', 'POST', '/rpc/create_tenant');
select throws_ok('select public.create_tenant(''Ghost Inn'')', '42501', 'the session has ended; sign in again',
  'create_tenant refuses an expired session');
select tests.as_postgrest('anon', 'POST', '/rpc/create_tenant');
select throws_ok('select public.create_tenant(''Anon Inn'')', '42501', null, 'anon cannot even call create_tenant');

select * from finish();
rollback;
