-- Web Push subscriptions. A browser (or installed web app) of a member that asked its push
-- service for an endpoint (the Push API's PushSubscription): where to post, and the keys
-- that encrypt for it (RFC 8291). A subscription belongs to the member in one tenant: the
-- alerts of that tenant go to it, and it goes when the membership does. One endpoint is
-- one browser profile, so it is unique in the tenant; registering it again moves it to
-- whoever registers it.
create table public.push_subscriptions (
  tenant_id uuid not null default private.request_tenant_id(),
  id uuid not null default gen_random_uuid(),
  user_id uuid not null,
  endpoint text not null
    constraint push_subscriptions_endpoint_check check (length(endpoint) <= 2048 and endpoint ~ '^https?://[^\s]+$'),
  -- The browser's P-256 public key (65 bytes) and authentication secret (16 bytes), base64url.
  p256dh text not null constraint push_subscriptions_p256dh_check check (p256dh ~ '^[A-Za-z0-9_-]{87}=?$'),
  auth text not null constraint push_subscriptions_auth_check check (auth ~ '^[A-Za-z0-9_-]{22}(==)?$'),
  -- When the push service will end it, if it said (PushSubscription.expirationTime).
  expires_at timestamptz,
  user_agent text constraint push_subscriptions_user_agent_check check (length(user_agent) <= 500),
  -- The last push its service accepted.
  last_accepted_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint push_subscriptions_pkey primary key (tenant_id, id),
  constraint push_subscriptions_tenant_id_endpoint_key unique (tenant_id, endpoint),
  constraint push_subscriptions_tenant_id_user_id_fkey foreign key (tenant_id, user_id)
    references public.tenant_memberships (tenant_id, user_id) on delete cascade
);

create index push_subscriptions_tenant_user_idx on public.push_subscriptions (tenant_id, user_id);

create trigger forbid_tenant_change before update of tenant_id, created_at on public.push_subscriptions
  for each row execute function private.forbid_tenant_change();
create trigger touch_updated_at before update on public.push_subscriptions
  for each row execute function private.touch_updated_at();

alter table public.push_subscriptions enable row level security;
revoke all on public.push_subscriptions from anon, authenticated;
grant select, delete on public.push_subscriptions to authenticated;

create policy "members read their own push subscriptions" on public.push_subscriptions
  for select to authenticated
  using (tenant_id = (select private.request_tenant_id()) and user_id = (select auth.uid())
         and (select private.request_is_member()));
create policy "members remove their own push subscriptions" on public.push_subscriptions
  for delete to authenticated
  using (tenant_id = (select private.request_tenant_id()) and user_id = (select auth.uid())
         and (select private.request_is_member()));

-- Registers the caller's browser in the request's tenant, or refreshes it: an endpoint
-- already registered (by the caller or by whoever used the browser before) becomes the
-- caller's with the keys given now. Runs as owner because the row may be another member's.
create or replace function private.register_push_subscription(
  endpoint text, p256dh text, auth text, expires_at timestamptz, user_agent text
) returns public.push_subscriptions
language plpgsql security definer
set search_path = ''
as $$
declare
  tenant uuid := private.request_tenant_id();
  member uuid := auth.uid();
  registered public.push_subscriptions;
begin
  if tenant is null or member is null or not private.request_is_member() then
    raise exception 'only a member of the tenant registers a push subscription in it' using errcode = '42501';
  end if;
  insert into public.push_subscriptions as s (tenant_id, user_id, endpoint, p256dh, auth, expires_at, user_agent)
  values (tenant, member, register_push_subscription.endpoint, register_push_subscription.p256dh,
          register_push_subscription.auth, register_push_subscription.expires_at, register_push_subscription.user_agent)
  on conflict on constraint push_subscriptions_tenant_id_endpoint_key do update
    set user_id = excluded.user_id, p256dh = excluded.p256dh, auth = excluded.auth,
        expires_at = excluded.expires_at, user_agent = excluded.user_agent
  returning s.* into registered;
  return registered;
end
$$;
revoke all on function private.register_push_subscription(text, text, text, timestamptz, text) from public;
grant execute on function private.register_push_subscription(text, text, text, timestamptz, text) to authenticated;

-- The notifications worker reads the members' subscriptions in the job's tenant, stamps a
-- subscription's last acceptance, and removes one its push service says is gone.
grant select, delete on public.push_subscriptions to background_worker;
grant update (last_accepted_at) on public.push_subscriptions to background_worker;
create policy "background jobs read the job's push subscriptions" on public.push_subscriptions
  for select to background_worker using (tenant_id = (select private.request_tenant_id()));
create policy "background jobs record push acceptances" on public.push_subscriptions
  for update to background_worker
  using (tenant_id = (select private.request_tenant_id()))
  with check (tenant_id = (select private.request_tenant_id()));
create policy "background jobs remove gone push subscriptions" on public.push_subscriptions
  for delete to background_worker using (tenant_id = (select private.request_tenant_id()));
