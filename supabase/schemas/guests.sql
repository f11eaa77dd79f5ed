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
  -- The guest's email address that the provider says cannot receive mail: when (the
  -- provider's time of the report) and why. The worker skips email to a marked address.
  -- The mark goes when the address changes (the reports were about the old one) or when a
  -- manager clears it (DELETE /v1/guests/{id}/email-undeliverable), which stamps
  -- email_undeliverable_cleared_at: a report of something that happened before then does
  -- not mark the address again, since the manager judged the address after it. Only the
  -- providers' delivery reports set the mark (private.guard_email_undeliverable,
  -- delivery-reports.sql).
  email_undeliverable_at timestamptz,
  email_undeliverable_reason text
    constraint guests_email_undeliverable_reason_check check (length(email_undeliverable_reason) between 1 and 2000),
  email_undeliverable_cleared_at timestamptz,
  constraint guests_pkey primary key (tenant_id, id),
  constraint guests_email_undeliverable_with_reason
    check ((email_undeliverable_at is null) = (email_undeliverable_reason is null))
);
create index guests_tenant_email_idx on public.guests (tenant_id, lower(email));
create index guests_tenant_name_idx on public.guests (tenant_id, lower(last_name), lower(first_name));
-- The guest search: a substring anywhere in a first name, last name or email, with the
-- tenant's uuid in the same GIN index as the trigrams (guest_search_page below).
create index guests_tenant_search_idx on public.guests using gin (
  tenant_id, first_name extensions.gin_trgm_ops, last_name extensions.gin_trgm_ops, email extensions.gin_trgm_ops);

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

-- The guest search, a page at a time: the request tenant's guests whose first name, last
-- name or email is ILIKE `pattern`, sorted as the list sorts them, the page's ids in order
-- with the count of all matches; the list then reads those few rows under RLS.
--
-- Under RLS the trigram index is never used: the planner puts a policy's quals before any
-- qual whose operator is not leakproof, and ILIKE is not, so such a qual could only filter
-- the rows the tenant's own index found (docs/data-model.md). Marking it leakproof takes a
-- superuser, which a hosted project does not have. So the search runs as the table's
-- owner, and keeps to what the members' read policy lets a caller see: the request's
-- tenant, to a member of it. The total is what that policy would let the caller count.
-- PL/pgSQL, as every helper a request calls is, so each connection keeps its plans; the
-- per-request helpers are in sub-selects, evaluated once rather than for every candidate
-- row the index returns.
--
-- The matches are materialized before they are sorted: asked for the first rows in the
-- list's order, the planner would otherwise walk guests_tenant_name_idx through the
-- whole tenant looking for them.
create or replace function private.guest_search_page(pattern text, page_limit integer, page_offset integer)
returns table (ids uuid[], total bigint)
language plpgsql stable security definer
set search_path = ''
rows 1
as $$
begin
  return query
    with matching as materialized (
      select g.id, g.last_name, g.first_name
      from public.guests g
      where g.tenant_id = (select private.request_tenant_id())
        and (select private.request_is_member())
        and (g.first_name ilike pattern or g.last_name ilike pattern or g.email ilike pattern)
    )
    select array(
             select m.id from matching m
             order by lower(m.last_name), lower(m.first_name), m.id
             limit page_limit offset page_offset),
           (select count(*) from matching);
end
$$;

revoke all on function private.guest_search_page(text, integer, integer) from public;
grant execute on function private.guest_search_page(text, integer, integer) to authenticated;
