-- Tenants, their members and the role each member holds. Who may do what is
-- decided here and in the policies that call the helpers below.
create type public.tenant_role as enum ('owner', 'admin', 'staff');

create table public.tenants (
  id uuid constraint tenants_pkey primary key default gen_random_uuid(),
  name text not null constraint tenants_name_check check (length(btrim(name)) between 1 and 200),
  -- Tenant settings, managed by owners and admins.
  sender_email text constraint tenants_sender_email_check check (sender_email ~ '^[^@\s]+@[^@\s]+\.[^@\s]+$'),
  sender_name text constraint tenants_sender_name_check check (length(sender_name) <= 200),
  payment_page_base_url text
    constraint tenants_payment_page_base_url_check check (payment_page_base_url ~ '^https?://[^\s]+$'),
  created_by uuid constraint tenants_created_by_fkey references auth.users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

create table public.tenant_memberships (
  tenant_id uuid not null constraint tenant_memberships_tenant_id_fkey references public.tenants (id) on delete cascade,
  user_id uuid not null constraint tenant_memberships_user_id_fkey references auth.users (id) on delete cascade,
  role public.tenant_role not null default 'staff',
  created_by uuid constraint tenant_memberships_created_by_fkey references auth.users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint tenant_memberships_pkey primary key (tenant_id, user_id)
);
-- "Which tenants am I in" runs without a tenant in context.
create index tenant_memberships_user_id_idx on public.tenant_memberships (user_id);

-- Policy helpers. They read tenant_memberships as its owner, so a policy on
-- tenant_memberships can call them without recursing into itself.
-- The tenant and the user are read once, before the lookup: as calls inside its WHERE
-- they would be evaluated for every row a scan of tenant_memberships visits.
create or replace function private.request_member_role()
returns public.tenant_role
language plpgsql stable security definer
set search_path = ''
as $$
declare
  tenant uuid := private.request_tenant_id();
  member uuid := auth.uid();
begin
  return (select m.role from public.tenant_memberships m where m.tenant_id = tenant and m.user_id = member);
end
$$;

create or replace function private.request_is_member()
returns boolean
language plpgsql stable security definer
set search_path = ''
as $$
begin
  return private.request_member_role() is not null;
end
$$;

create or replace function private.request_is_manager()
returns boolean
language plpgsql stable security definer
set search_path = ''
as $$
begin
  return coalesce(private.request_member_role() in ('owner', 'admin'), false);
end
$$;

create or replace function private.request_is_owner()
returns boolean
language plpgsql stable security definer
set search_path = ''
as $$
begin
  return coalesce(private.request_member_role() = 'owner', false);
end
$$;

revoke all on function private.request_member_role(), private.request_is_member(),
  private.request_is_manager(), private.request_is_owner() from public;
grant execute on function private.request_member_role(), private.request_is_member(),
  private.request_is_manager(), private.request_is_owner() to authenticated, service_role;

alter table public.tenants enable row level security;
alter table public.tenant_memberships enable row level security;
revoke all on public.tenants, public.tenant_memberships from anon;

create policy "members read their tenant" on public.tenants
  for select to authenticated
  using (id = (select private.request_tenant_id()) and (select private.request_is_member()));
create policy "managers update their tenant" on public.tenants
  for update to authenticated
  using (id = (select private.request_tenant_id()) and (select private.request_is_manager()))
  with check (id = (select private.request_tenant_id()) and (select private.request_is_manager()));
create policy "owners delete their tenant" on public.tenants
  for delete to authenticated
  using (id = (select private.request_tenant_id()) and (select private.request_is_owner()));
-- No insert policy: public.create_tenant is the only way in, because the first
-- owner cannot pass a membership check before the tenant exists.

create policy "members read the tenant's members" on public.tenant_memberships
  for select to authenticated
  using (tenant_id = (select private.request_tenant_id()) and (select private.request_is_member()));
create policy "managers add members" on public.tenant_memberships
  for insert to authenticated
  with check (
    tenant_id = (select private.request_tenant_id()) and (select private.request_is_manager())
    and created_by is not distinct from (select auth.uid())
  );
create policy "managers change roles" on public.tenant_memberships
  for update to authenticated
  using (tenant_id = (select private.request_tenant_id()) and (select private.request_is_manager()))
  with check (tenant_id = (select private.request_tenant_id()) and (select private.request_is_manager()));
create policy "managers remove members and members leave" on public.tenant_memberships
  for delete to authenticated
  using (
    tenant_id = (select private.request_tenant_id())
    and ((select private.request_is_manager()) or user_id = (select auth.uid()))
  );

-- Owner rules that RLS cannot express: only owners grant or take the owner role,
-- and a tenant always keeps one owner. Runs as owner so it sees every membership.
-- The rules only concern changes that grant, take or remove the owner role, so only
-- those lock the tenant row, and with FOR NO KEY UPDATE: that still serialises two
-- owner changes of one tenant, where FOR UPDATE would also block every foreign key
-- check (FOR KEY SHARE) on the tenant's rows for as long as any membership change
-- was open.
create or replace function private.guard_membership_change()
returns trigger
language plpgsql security definer
set search_path = ''
as $$
declare
  caller uuid := auth.uid();
  caller_role public.tenant_role;
  touches_owner boolean;
begin
  -- The tenant half is refused by forbid_origin_change, which fires before this
  -- trigger (triggers fire in name order).
  if tg_op = 'UPDATE' and new.user_id is distinct from old.user_id then
    raise exception 'a membership''s tenant and user cannot change' using errcode = '42501';
  end if;

  touches_owner := case tg_op
    when 'INSERT' then new.role = 'owner'
    when 'UPDATE' then (new.role = 'owner') <> (old.role = 'owner')
    else old.role = 'owner'
  end;
  if not touches_owner then
    return coalesce(new, old);
  end if;

  -- Serialises owner changes per tenant, so two concurrent demotions cannot
  -- both see the other owner still in place.
  perform 1 from public.tenants t where t.id = coalesce(new.tenant_id, old.tenant_id) for no key update;
  if not found then
    return coalesce(new, old); -- the tenant itself is being deleted
  end if;

  if caller is not null then
    select m.role into caller_role
    from public.tenant_memberships m
    where m.tenant_id = coalesce(new.tenant_id, old.tenant_id) and m.user_id = caller;

    -- The first member of a new tenant is its creator, made owner by create_tenant.
    if caller_role is distinct from 'owner'
       and not (tg_op = 'INSERT' and not exists (
         select 1 from public.tenant_memberships m where m.tenant_id = new.tenant_id)) then
      raise exception 'only an owner can grant or remove the owner role' using errcode = '42501';
    end if;
  end if;

  if tg_op <> 'INSERT' and old.role = 'owner' and (tg_op = 'DELETE' or new.role <> 'owner') then
    if not exists (
      select 1 from public.tenant_memberships m
      where m.tenant_id = old.tenant_id and m.role = 'owner' and m.user_id <> old.user_id
    ) then
      raise exception 'a tenant must keep at least one owner'
        using errcode = 'PT409', constraint = 'tenant_members_keep_an_owner', hint = 'Make another member owner first.';
    end if;
  end if;

  return coalesce(new, old);
end
$$;

-- Same-event triggers fire in name order, and on tenant_memberships that order
-- matters: forbid_origin_change refuses a membership moving to another tenant before
-- guard_membership_change, which leaves the tenant half to it, looks at the change;
-- touch_updated_at comes last. Renaming any of the three must keep that order.
create trigger forbid_origin_change before update of created_at, created_by on public.tenants
  for each row execute function private.forbid_tenant_change();
create trigger touch_updated_at before update on public.tenants
  for each row execute function private.touch_updated_at();
create trigger forbid_origin_change before update of tenant_id, created_at, created_by on public.tenant_memberships
  for each row execute function private.forbid_tenant_change();
create trigger guard_membership_change
  before insert or update or delete on public.tenant_memberships
  for each row execute function private.guard_membership_change();
create trigger touch_updated_at before update on public.tenant_memberships
  for each row execute function private.touch_updated_at();

-- Creates a tenant and makes the caller its owner, in one statement; only for a signed-in
-- user whose session is still active.
create or replace function public.create_tenant(name text)
returns public.tenants
language plpgsql security definer
set search_path = ''
as $$
declare
  caller uuid := auth.uid();
  tenant public.tenants;
begin
  if caller is null then
    raise exception 'sign in to create a tenant' using errcode = '42501';
  end if;
  if not private.request_session_is_active() then
    raise exception 'the session has ended; sign in again' using errcode = '42501';
  end if;
  insert into public.tenants (name, created_by)
  values (create_tenant.name, caller)
  returning * into tenant;
  insert into public.tenant_memberships (tenant_id, user_id, role, created_by)
  values (tenant.id, caller, 'owner', caller);
  return tenant;
end
$$;

-- Returns the user's id only to a manager of the request's tenant, so the
-- function cannot be used to probe which emails have accounts.
create or replace function private.user_id_for_invite(email text)
returns uuid
language plpgsql stable security definer
set search_path = ''
as $$
declare
  found_id uuid;
begin
  if not private.request_is_manager() then
    raise exception 'only owners and admins add members' using errcode = '42501';
  end if;
  select u.id into found_id from auth.users u where lower(u.email) = lower(btrim(user_id_for_invite.email));
  if found_id is null then
    raise exception 'no user has the email %', user_id_for_invite.email
      using errcode = 'PT404', constraint = 'tenant_members_no_such_user';
  end if;
  return found_id;
end
$$;

revoke all on function private.user_id_for_invite(text) from public;
grant execute on function private.user_id_for_invite(text) to authenticated, service_role;

-- A member the caller can see but may not change or remove (staff acting on someone,
-- or on their own role) is a refusal, not a disappearance: 42501, the API's 403,
-- rather than the 404 of a member who is not there.
-- Invoker's rights on purpose: "can see" must mean what the caller's policies show.
create or replace function private.refuse_member_change(member uuid, verb text)
returns void
language plpgsql
set search_path = ''
as $$
begin
  if exists (select 1 from public.tenant_memberships m
             where m.tenant_id = private.request_tenant_id() and m.user_id = member) then
    raise exception 'only owners and admins may % another member''s membership', verb using errcode = '42501';
  end if;
  raise exception 'no such member' using errcode = 'PT404', constraint = 'tenant_members_no_such_member';
end
$$;

-- The rest run as the caller, so the policies above decide.
create or replace function public.add_tenant_member(email text, role public.tenant_role default 'staff')
returns public.tenant_memberships
language plpgsql
set search_path = ''
as $$
declare
  membership public.tenant_memberships;
begin
  insert into public.tenant_memberships (tenant_id, user_id, role, created_by)
  values (private.request_tenant_id(), private.user_id_for_invite(add_tenant_member.email),
          add_tenant_member.role, auth.uid())
  returning * into membership;
  return membership;
exception when unique_violation then
  raise exception '% is already a member', add_tenant_member.email
    using errcode = 'PT409', constraint = 'tenant_members_already_a_member';
end
$$;

create or replace function public.change_tenant_member_role(user_id uuid, role public.tenant_role)
returns public.tenant_memberships
language plpgsql
set search_path = ''
as $$
declare
  membership public.tenant_memberships;
begin
  update public.tenant_memberships m
  set role = change_tenant_member_role.role
  where m.tenant_id = private.request_tenant_id() and m.user_id = change_tenant_member_role.user_id
  returning * into membership;
  if membership is null then
    perform private.refuse_member_change(change_tenant_member_role.user_id, 'change');
  end if;
  return membership;
end
$$;

create or replace function public.remove_tenant_member(user_id uuid)
returns void
language plpgsql
set search_path = ''
as $$
begin
  delete from public.tenant_memberships m
  where m.tenant_id = private.request_tenant_id() and m.user_id = remove_tenant_member.user_id;
  if not found then
    perform private.refuse_member_change(remove_tenant_member.user_id, 'remove');
  end if;
end
$$;

-- The tenant picker: a signed-in user's tenants, needed before any tenant is in context;
-- nothing once the session has ended.
create or replace function public.list_my_tenants()
returns table (tenant_id uuid, name text, role public.tenant_role)
language sql stable security definer
set search_path = ''
as $$
  select t.id, t.name, m.role
  from public.tenant_memberships m
  join public.tenants t on t.id = m.tenant_id
  where m.user_id = auth.uid()
    and private.request_session_is_active()
  order by t.name
$$;

-- Members see who else works in their tenant: the email and name live in auth.users,
-- which the authenticated role cannot read, so a definer function hands out exactly
-- those two fields for the request's tenant and nothing for a non-member.
create or replace function public.list_tenant_members()
returns table (user_id uuid, email text, full_name text, role public.tenant_role, created_at timestamptz, updated_at timestamptz)
language sql stable security definer
set search_path = ''
as $$
  select m.user_id, u.email::text, u.raw_user_meta_data ->> 'full_name', m.role, m.created_at, m.updated_at
  from public.tenant_memberships m
  join auth.users u on u.id = m.user_id
  where m.tenant_id = private.request_tenant_id()
    and private.request_is_member()
$$;

revoke all on function public.create_tenant(text), public.add_tenant_member(text, public.tenant_role),
  public.change_tenant_member_role(uuid, public.tenant_role), public.remove_tenant_member(uuid),
  public.list_my_tenants(), public.list_tenant_members() from public, anon;
grant execute on function public.create_tenant(text), public.add_tenant_member(text, public.tenant_role),
  public.change_tenant_member_role(uuid, public.tenant_role), public.remove_tenant_member(uuid),
  public.list_my_tenants(), public.list_tenant_members() to authenticated, service_role;
