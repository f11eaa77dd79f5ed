-- The people who stay. Staff keep their records; deleting one (an erasure
-- request) is for owners and admins.
create table public.guests (
  tenant_id uuid not null default private.request_tenant_id()
    constraint guests_tenant_id_fkey references public.tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  first_name text not null constraint guests_first_name_check check (length(btrim(first_name)) between 1 and 100),
  last_name text not null constraint guests_last_name_check check (length(btrim(last_name)) between 1 and 100),
  email text constraint guests_email_check check (email ~ '^[^@\s]+@[^@\s]+\.[^@\s]+$' and length(email) <= 320),
  phone text constraint guests_phone_check check (phone ~ '^\+[1-9][0-9]{6,14}$'),
  -- BCP 47, e.g. "en", "pt-BR"; picks the language of the guest's emails.
  locale text not null default 'en' constraint guests_locale_check check (locale ~ '^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$'),
  country_code text constraint guests_country_code_check check (country_code ~ '^[A-Z]{2}$'),
  marketing_consent boolean not null default false,
  marketing_consent_at timestamptz,
  notes text constraint guests_notes_check check (length(notes) <= 4000),
  created_by uuid default auth.uid() constraint guests_created_by_fkey references auth.users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint guests_pkey primary key (tenant_id, id)
);
create index guests_tenant_email_idx on public.guests (tenant_id, lower(email));
create index guests_tenant_name_idx on public.guests (tenant_id, lower(last_name), lower(first_name));

-- Consent is only worth something with the time it was given: the stamp follows the
-- consent and is never written on its own, so an update may not rewrite it.
create or replace function private.stamp_marketing_consent()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  if tg_op = 'UPDATE' and new.marketing_consent = old.marketing_consent then
    if new.marketing_consent_at is distinct from old.marketing_consent_at then
      raise exception 'marketing_consent_at is stamped when consent is given and cannot be set'
        using errcode = '42501';
    end if;
    return new;
  end if;
  new.marketing_consent_at := case when new.marketing_consent then now() end;
  return new;
end
$$;

-- It fires only on updates that name one of its two columns.
create trigger stamp_marketing_consent before insert or update of marketing_consent, marketing_consent_at on public.guests
  for each row execute function private.stamp_marketing_consent();
create trigger forbid_tenant_change before update of tenant_id, created_at, created_by on public.guests
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
