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

revoke all on function public.list_tenant_members() from public, anon;
grant execute on function public.list_tenant_members() to authenticated, service_role;
