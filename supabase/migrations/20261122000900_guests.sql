-- The people who stay. Staff keep their records; deleting one (an erasure
-- request) is for owners and admins.
create table public.guests (
  tenant_id uuid not null default private.request_tenant_id() references public.tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  first_name text not null check (length(btrim(first_name)) between 1 and 100),
  last_name text not null check (length(btrim(last_name)) between 1 and 100),
  email text check (email ~ '^[^@\s]+@[^@\s]+\.[^@\s]+$' and length(email) <= 320),
  phone text check (phone ~ '^\+[1-9][0-9]{6,14}$'),
  -- BCP 47, e.g. "en", "pt-BR"; picks the language of the guest's emails.
  locale text not null default 'en' check (locale ~ '^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$'),
  country_code text check (country_code ~ '^[A-Z]{2}$'),
  marketing_consent boolean not null default false,
  marketing_consent_at timestamptz,
  notes text check (length(notes) <= 4000),
  created_by uuid default auth.uid() references auth.users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (tenant_id, id)
);
create index guests_tenant_email_idx on public.guests (tenant_id, lower(email));
create index guests_tenant_name_idx on public.guests (tenant_id, lower(last_name), lower(first_name));

-- Consent is only worth something with the time it was given.
create or replace function private.stamp_marketing_consent()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  if new.marketing_consent and (tg_op = 'INSERT' or not old.marketing_consent) then
    new.marketing_consent_at := now();
  elsif not new.marketing_consent then
    new.marketing_consent_at := null;
  end if;
  return new;
end
$$;

create trigger stamp_marketing_consent before insert or update of marketing_consent on public.guests
  for each row execute function private.stamp_marketing_consent();
create trigger forbid_tenant_change before update on public.guests
  for each row execute function private.forbid_tenant_change();
create trigger touch_updated_at before update on public.guests
  for each row execute function private.touch_updated_at();

alter table public.guests enable row level security;
revoke all on public.guests from anon;

create policy "members read guests" on public.guests
  for select to authenticated
  using (tenant_id = (select private.request_tenant_id()) and (select private.request_is_member()));
create policy "members create guests" on public.guests
  for insert to authenticated
  with check (
    tenant_id = (select private.request_tenant_id()) and (select private.request_is_member())
    and created_by is not distinct from (select auth.uid())
  );
create policy "members update guests" on public.guests
  for update to authenticated
  using (tenant_id = (select private.request_tenant_id()) and (select private.request_is_member()))
  with check (tenant_id = (select private.request_tenant_id()) and (select private.request_is_member()));
create policy "managers delete guests" on public.guests
  for delete to authenticated
  using (tenant_id = (select private.request_tenant_id()) and (select private.request_is_manager()));
