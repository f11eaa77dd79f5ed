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
  raise exception 'no such member' using errcode = 'PT404';
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
