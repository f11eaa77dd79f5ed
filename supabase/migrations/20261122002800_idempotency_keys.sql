-- An integration that retries a POST with the same Idempotency-Key gets the first
-- answer again instead of a second write. Keys belong to the API key that sent
-- them and are honoured for 24 hours. Only a completed request leaves its answer
-- here: one that failed rolled back its claim with everything else, so a retry runs again.
create table public.idempotency_keys (
  tenant_id uuid not null default private.request_tenant_id() references public.tenants (id) on delete cascade,
  api_key_id uuid not null default private.request_api_key_id(),
  key text not null check (length(key) between 1 and 255),
  -- SHA-256 of the operation and its parsed input: a different request under a used key is refused.
  request_hash bytea not null check (length(request_hash) = 32),
  response_status integer check (response_status between 200 and 299),
  response_headers jsonb not null default '{}',
  response_body text,
  created_at timestamptz not null default now(),
  primary key (tenant_id, api_key_id, key),
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

-- Expired keys are only ignored by the API; this clears them out.
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
