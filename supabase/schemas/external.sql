-- The integration API (/v1/external/*): a request carries an API key (api-keys.sql) and
-- runs as the role api_integration (baseline.sql), in the tenant of its key, for the
-- properties it acts for and as far as its scopes go: it sees those properties'
-- reservations and their payments, records payments on them, and nothing else. Here:
-- the request's context, the key's authentication, the rate limits that every instance
-- of the api function shares, and the idempotency keys that make an integration's
-- retries safe.

-- ---------------------------------------------------------------- the request's context

-- The properties the request's key acts for; null when it acts for all of its tenant's.
create or replace function private.request_property_ids()
returns uuid[]
language plpgsql stable
set search_path = ''
as $$
begin
  return nullif(pg_catalog.current_setting('app.property_ids', true), '')::uuid[];
end
$$;

-- Whether the request's key acts for every property of its tenant.
create or replace function private.request_all_properties()
returns boolean
language plpgsql stable
set search_path = ''
as $$
begin
  return coalesce(nullif(pg_catalog.current_setting('app.all_properties', true), '')::boolean, false);
end
$$;

-- Whether the request's key holds one of `wanted` scopes.
create or replace function private.request_has_scope(wanted text[])
returns boolean
language plpgsql stable
set search_path = ''
as $$
begin
  return coalesce(nullif(pg_catalog.current_setting('app.api_scopes', true), '')::text[] && wanted, false);
end
$$;

create or replace function private.request_api_key_id()
returns uuid
language plpgsql stable
set search_path = ''
as $$
begin
  return nullif(pg_catalog.current_setting('app.api_key_id', true), '')::uuid;
end
$$;

grant execute on function private.request_property_ids(), private.request_all_properties(),
  private.request_has_scope(text[]), private.request_api_key_id() to api_integration;

grant select on public.reservations to api_integration;
grant select, insert on public.payments to api_integration;

-- A key that acts on reservations in any way sees its properties' reservations: reading
-- them, writing them, or recording payments on them. Which routes a scope opens is the
-- API's to say (src/external); what the key can reach at all is said here.
create policy "integrations read their properties' reservations" on public.reservations
  for select to api_integration
  using (
    tenant_id = (select private.request_tenant_id())
    and (select private.request_has_scope('{reservations:read,reservations:write,payments:write}'))
    and ((select private.request_all_properties()) or property_id = any ((select private.request_property_ids())::uuid[]))
  );

-- An integration reads its properties' reservation tallies (reservations.sql), as it
-- reads their reservations.
create policy "integrations read their properties' reservation tallies" on public.reservation_status_tallies
  for select to api_integration
  using (
    tenant_id = (select private.request_tenant_id())
    and (select private.request_has_scope('{reservations:read,reservations:write,payments:write}'))
    and ((select private.request_all_properties()) or property_id = any ((select private.request_property_ids())::uuid[]))
  );

-- Payments on the reservations the key sees (the reservations' own policy above).
create policy "integrations read their properties' payments" on public.payments
  for select to api_integration
  using (
    tenant_id = (select private.request_tenant_id())
    and exists (select 1 from public.reservations r where r.tenant_id = payments.tenant_id and r.id = payments.reservation_id)
  );
create policy "integrations record payments on their properties' reservations" on public.payments
  for insert to api_integration
  with check (
    tenant_id = (select private.request_tenant_id())
    and (select private.request_has_scope('{payments:write}'))
    and source = 'external' and payment_link_id is null and created_by is null
    and exists (select 1 from public.reservations r where r.tenant_id = payments.tenant_id and r.id = payments.reservation_id)
  );

-- ---------------------------------------------------------------- the key

-- The key a key id and a secret's hash name, or null: an unknown key id and a wrong secret
-- alike. The hashes are compared over all their bits whatever differs (the bits of their
-- XOR are counted), so timing says nothing about how close a guess was.
create or replace function private.api_key_matching(key_id text, secret_hash bytea)
returns public.api_keys
language plpgsql stable
set search_path = ''
as $$
declare
  key public.api_keys;
begin
  select * into key from public.api_keys k where k.key_id = api_key_matching.key_id;
  if found and length(api_key_matching.secret_hash) = 32
     and pg_catalog.bit_count(('x' || pg_catalog.encode(key.secret_hash, 'hex'))::bit(256)
                              # ('x' || pg_catalog.encode(api_key_matching.secret_hash, 'hex'))::bit(256)) = 0 then
    return key;
  end if;
  return null;
end
$$;

-- The key's outcome, for the request's answer: 'active' keys give their tenant, their
-- properties (null for all of the tenant's) and their scopes, a revoked or expired one
-- only says so, and an unknown key id or a wrong secret returns no row. Last use is
-- stamped at most once a minute, and never by waiting for another request's lock. The
-- key is found by private.api_key_matching, which the rate limiter shares.
create or replace function private.authenticate_api_key(key_id text, secret_hash bytea)
returns table (state text, tenant_id uuid, property_ids uuid[], all_properties boolean, scopes text[], api_key_id uuid)
language plpgsql security definer
set search_path = ''
as $$
declare
  key public.api_keys := private.api_key_matching(authenticate_api_key.key_id, authenticate_api_key.secret_hash);
begin
  if key.id is null then
    return;
  end if;
  if key.revoked_at is not null then
    return query select 'revoked'::text, null::uuid, null::uuid[], null::boolean, null::text[], null::uuid;
    return;
  end if;
  if key.expires_at is not null and key.expires_at <= now() then
    return query select 'expired'::text, null::uuid, null::uuid[], null::boolean, null::text[], null::uuid;
    return;
  end if;
  perform from public.api_keys k
  where k.tenant_id = key.tenant_id and k.id = key.id
    and (k.last_used_at is null or k.last_used_at < now() - interval '1 minute')
  for update skip locked;
  if found then
    update public.api_keys k set last_used_at = now() where k.tenant_id = key.tenant_id and k.id = key.id;
  end if;
  return query
    select 'active'::text, key.tenant_id,
           case when key.all_properties then null
                else array(select p.property_id from public.api_key_properties p
                           where p.tenant_id = key.tenant_id and p.api_key_id = key.id order by p.property_id) end,
           key.all_properties, key.scopes, key.id;
end
$$;

-- ---------------------------------------------------------------- rate limits

-- Rate limits of the external API, counted here so that every instance of the api
-- function shares one count:
--
-- - Each API key may make `rate_limit` requests per `rate_limit_window_seconds` (600 per
--   60 s unless an operator sets otherwise for a key). A fixed window per key: it starts
--   with the key's first request after the last window ended, so keys do not all reset at
--   the same moment. Every request with a valid, active key counts, whatever its answer,
--   except one refused for the limit itself.
-- - A client address (the first X-Forwarded-For value, which the gateway sets) that sent
--   `app.failed_api_key_limit` unknown keys or wrong secrets (20 unless set) within
--   `app.failed_api_key_window_seconds` (60 unless set) is refused until that window ends,
--   before its key is even looked at. An operator changes either setting for the database:
--     alter database postgres set app.failed_api_key_limit = '50';
--
-- The API asks private.admit_api_key_request in a statement of its own, ahead of the
-- request's transaction and in the same write to the connection (src/external/
-- integration-scope.ts), so it costs no round trip: the counter's row lock lasts that one
-- statement, never a whole request, and a request that fails later still counted. The
-- counters are UNLOGGED tables: a count lives for a minute, writing it to the WAL (and
-- waiting for the disk at every request's commit) would buy nothing, and after a crash
-- every key simply starts a fresh window.

-- One row per key that has made a request: its current window and the requests counted in
-- it. A request updates the row in place (a HOT update: no indexed column changes, and the
-- fill factor leaves room on the page), so the table holds one live row per key whatever
-- the traffic. A deleted key's row goes with it.
create unlogged table public.api_key_request_windows (
  tenant_id uuid not null
    constraint api_key_request_windows_tenant_id_fkey references public.tenants (id) on delete cascade,
  api_key_id uuid not null,
  window_start timestamptz not null,
  requests integer not null constraint api_key_request_windows_requests_check check (requests >= 1),
  constraint api_key_request_windows_pkey primary key (tenant_id, api_key_id),
  constraint api_key_request_windows_tenant_id_api_key_id_fkey
    foreign key (tenant_id, api_key_id) references public.api_keys (tenant_id, id) on delete cascade
) with (fillfactor = 50);

alter table public.api_key_request_windows enable row level security;
revoke all on public.api_key_request_windows from anon, authenticated;
grant select on public.api_key_request_windows to authenticated;

-- Managers may see how much of its limit each of their keys is using; only the counting
-- function, as the table's owner, writes.
create policy "managers read their keys' request windows" on public.api_key_request_windows
  for select to authenticated
  using (tenant_id = (select private.request_tenant_id()) and (select private.request_is_manager()));

-- Unknown keys and wrong secrets per client address. A key that does not exist has no
-- tenant, so neither has this table: it lives in the private schema, which the Data API
-- does not expose, with row-level security on and no policy, so only its owner (the
-- functions below) reads or writes it. Rows of ended windows are purged every ten minutes.
create unlogged table private.failed_api_key_attempts (
  client_address text not null
    constraint failed_api_key_attempts_client_address_check check (length(client_address) between 1 and 100),
  window_start timestamptz not null,
  failures integer not null constraint failed_api_key_attempts_failures_check check (failures >= 1),
  constraint failed_api_key_attempts_pkey primary key (client_address)
) with (fillfactor = 50);

alter table private.failed_api_key_attempts enable row level security;
revoke all on private.failed_api_key_attempts from public, anon, authenticated, api_integration;

-- The policy for failed keys per client address: its quota and window, from the database's
-- settings where an operator set them to a whole number in range, else 20 per 60 s.
-- private.admit_api_key_request reads them the same way in place, as every request needs them.
create or replace function private.failed_api_key_policy(out quota integer, out window_seconds integer)
language plpgsql stable
set search_path = ''
as $$
begin
  quota := coalesce(substring(pg_catalog.current_setting('app.failed_api_key_limit', true)
                              from '^\s*([1-9][0-9]{0,5})\s*$')::integer, 20);
  window_seconds := least(coalesce(substring(pg_catalog.current_setting('app.failed_api_key_window_seconds', true)
                                             from '^\s*([1-9][0-9]{0,4})\s*$')::integer, 60), 86400);
end
$$;

-- Admits a request to /v1/external/* or refuses it, counting it where it counts. One row:
--   outcome        'admitted'  the key is valid and active, and within its limit: counted
--                  'limited'   the key is valid and active, and its limit is spent
--                  'throttled' the client address sent too many unknown keys or wrong
--                              secrets in its window; the key was not looked at
--                  'invalid'   an unknown key id or a wrong secret: counted for the address
--                  'inactive'  a revoked or expired key: not counted anywhere
--   policy         'api-key' or 'failed-keys', the policy the numbers below are of (null
--                  for 'inactive', and for 'invalid' without a client address)
--   quota, window_seconds   the policy: quota requests (or failures) per window
--   remaining      what is left of the quota in the current window, after this request
--   reset_seconds  whole seconds until the current window ends, at least 1
-- It answers and never raises: a refused request is an answer, and an error would also
-- be written to the server's log at every refused request.
-- The count is exact however many requests race: each upsert locks the key's (or the
-- address's) row and counts on its latest version. Only the address check that comes
-- first reads without a lock, so requests racing with failed keys from one address can
-- pass its limit by as many as race; each of them still fails and is counted.
-- Every request runs this, so it makes as few statements as it can: the address's row,
-- the key's row, and one upsert, last, so that the key's row stays locked only until the
-- commit that follows at once; the rest is PL/pgSQL expressions.
create or replace function private.admit_api_key_request(key_id text, secret_hash bytea, client_address text)
returns table (outcome text, policy text, quota integer, window_seconds integer, remaining integer, reset_seconds integer)
language plpgsql security definer
set search_path = ''
as $$
declare
  address text := nullif(left(admit_api_key_request.client_address, 100), '');
  key public.api_keys;
  span interval;
  since timestamptz;
  used integer;
begin
  if address is not null then
    -- private.failed_api_key_policy, in place.
    policy := 'failed-keys';
    quota := coalesce(substring(pg_catalog.current_setting('app.failed_api_key_limit', true)
                                from '^\s*([1-9][0-9]{0,5})\s*$')::integer, 20);
    window_seconds := least(coalesce(substring(pg_catalog.current_setting('app.failed_api_key_window_seconds', true)
                                               from '^\s*([1-9][0-9]{0,4})\s*$')::integer, 60), 86400);
    span := make_interval(secs => window_seconds);
    select f.window_start, f.failures into since, used
    from private.failed_api_key_attempts f where f.client_address = address;
    if found and used >= quota and since > now() - span then
      outcome := 'throttled';
      remaining := 0;
      reset_seconds := greatest(1, ceil(extract(epoch from since + span - now())))::integer;
      return next;
      return;
    end if;
  end if;

  key := private.api_key_matching(admit_api_key_request.key_id, admit_api_key_request.secret_hash);
  if key.id is null then
    outcome := 'invalid';
    if address is null then
      return next;
      return;
    end if;
    insert into private.failed_api_key_attempts as f (client_address, window_start, failures)
    values (address, now(), 1)
    on conflict on constraint failed_api_key_attempts_pkey do update
      set window_start = case when f.window_start <= now() - span then now() else f.window_start end,
          failures = case when f.window_start <= now() - span then 1 else f.failures + 1 end
    returning f.window_start, f.failures into since, used;
    remaining := greatest(quota - used, 0);
    reset_seconds := greatest(1, ceil(extract(epoch from since + span - now())))::integer;
    return next;
    return;
  end if;

  if key.revoked_at is not null or (key.expires_at is not null and key.expires_at <= now()) then
    outcome := 'inactive';
    policy := null;
    quota := null;
    window_seconds := null;
    return next;
    return;
  end if;

  -- A window that has ended starts again with this request; within the window, the count
  -- goes up only while it is under the limit, so a refused request changes nothing.
  policy := 'api-key';
  quota := key.rate_limit;
  window_seconds := key.rate_limit_window_seconds;
  span := make_interval(secs => window_seconds);
  insert into public.api_key_request_windows as w (tenant_id, api_key_id, window_start, requests)
  values (key.tenant_id, key.id, now(), 1)
  on conflict on constraint api_key_request_windows_pkey do update
    set window_start = case when w.window_start <= now() - span then now() else w.window_start end,
        requests = case when w.window_start <= now() - span then 1 else w.requests + 1 end
    where w.window_start <= now() - span or w.requests < key.rate_limit
  returning w.window_start, w.requests into since, used;
  if found then
    outcome := 'admitted';
    remaining := quota - used;
  else
    select w.window_start into since
    from public.api_key_request_windows w where w.tenant_id = key.tenant_id and w.api_key_id = key.id;
    outcome := 'limited';
    remaining := 0;
  end if;
  reset_seconds := greatest(1, ceil(extract(epoch from since + span - now())))::integer;
  return next;
end
$$;

-- Addresses whose window has ended hold nothing the limiter reads again; cleared every
-- ten minutes on the schedule below.
create or replace function private.purge_failed_api_key_attempts()
returns integer
language plpgsql security definer
set search_path = ''
as $$
declare
  purged integer;
begin
  delete from private.failed_api_key_attempts f
  where f.window_start <= now() - make_interval(secs => (private.failed_api_key_policy()).window_seconds);
  get diagnostics purged = row_count;
  return purged;
end
$$;

revoke all on function private.request_property_ids(), private.request_all_properties(),
  private.request_has_scope(text[]), private.request_api_key_id(),
  private.api_key_matching(text, bytea), private.authenticate_api_key(text, bytea), private.failed_api_key_policy(),
  private.admit_api_key_request(text, bytea, text), private.purge_failed_api_key_attempts() from public;

-- ---------------------------------------------------------------- idempotency keys

-- An integration that retries a POST with the same Idempotency-Key gets the first
-- answer again instead of a second write. Keys belong to the API key that sent
-- them and are honoured for 24 hours. Only a completed request leaves its answer
-- here: one that failed rolled back its claim with everything else, so a retry runs again.
create table public.idempotency_keys (
  tenant_id uuid not null default private.request_tenant_id()
    constraint idempotency_keys_tenant_id_fkey references public.tenants (id) on delete cascade,
  api_key_id uuid not null default private.request_api_key_id(),
  key text not null constraint idempotency_keys_key_check check (length(key) between 1 and 255),
  -- SHA-256 of the operation and its parsed input: a different request under a used key is refused.
  request_hash bytea not null constraint idempotency_keys_request_hash_check check (length(request_hash) = 32),
  response_status integer constraint idempotency_keys_response_status_check check (response_status between 200 and 299),
  response_headers jsonb not null default '{}',
  response_body text,
  created_at timestamptz not null default now(),
  constraint idempotency_keys_pkey primary key (tenant_id, api_key_id, key),
  constraint idempotency_keys_tenant_id_api_key_id_fkey
    foreign key (tenant_id, api_key_id) references public.api_keys (tenant_id, id) on delete cascade
);
create index idempotency_keys_tenant_created_idx on public.idempotency_keys (tenant_id, created_at);

alter table public.idempotency_keys enable row level security;
revoke all on public.idempotency_keys from anon, authenticated;
grant select, insert, update on public.idempotency_keys to api_integration;

create policy "integrations use their own key's idempotency keys" on public.idempotency_keys
  for all to api_integration
  using (tenant_id = (select private.request_tenant_id()) and api_key_id = (select private.request_api_key_id()))
  with check (tenant_id = (select private.request_tenant_id()) and api_key_id = (select private.request_api_key_id()));

-- Expired keys are only ignored by the API; this clears them out, every hour on the
-- schedule below.
create or replace function private.purge_expired_idempotency_keys()
returns integer
language sql security definer
set search_path = ''
as $$
  with purged as (
    delete from public.idempotency_keys where created_at < now() - interval '24 hours' returning 1
  )
  select count(*)::integer from purged
$$;
revoke all on function private.purge_expired_idempotency_keys() from public;

-- ---------------------------------------------------------------- not in a schema diff
-- A schema diff writes none of what follows: pg_cron's jobs are rows of cron.job. A
-- migration that changes them says so by hand (docs/architecture.md, Migrations).
-- Schedules are data in cron.job, so each job is unscheduled by name before it is
-- scheduled again, and running these twice leaves one row per job. A database without
-- pg_cron applies them as no-ops.

-- Expired idempotency keys, cleared every hour.
do $$
begin
  if not exists (select 1 from pg_available_extensions where name = 'pg_cron') then
    raise notice 'pg_cron is missing: expired idempotency keys are not purged on a schedule here';
    return;
  end if;
  create extension if not exists pg_cron;
  perform cron.unschedule(jobid) from cron.job where jobname = 'purge-idempotency-keys';
  perform cron.schedule('purge-idempotency-keys', '17 * * * *', 'select private.purge_expired_idempotency_keys()');
end
$$;

-- Failed API key attempts of ended windows, cleared every ten minutes.
do $$
begin
  if not exists (select 1 from pg_available_extensions where name = 'pg_cron') then
    raise notice 'pg_cron is missing: failed API key attempts are not purged on a schedule here';
    return;
  end if;
  create extension if not exists pg_cron;
  perform cron.unschedule(jobid) from cron.job where jobname = 'purge-failed-api-key-attempts';
  perform cron.schedule('purge-failed-api-key-attempts', '*/10 * * * *', 'select private.purge_failed_api_key_attempts()');
end
$$;
