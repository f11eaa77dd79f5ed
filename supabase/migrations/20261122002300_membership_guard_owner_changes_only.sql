-- The owner rules only concern changes that grant, take or remove the owner role,
-- so only those lock the tenant row. FOR UPDATE there blocked every foreign key
-- check (FOR KEY SHARE) on the tenant's rows for as long as any membership change
-- was open; FOR NO KEY UPDATE still serialises two owner changes of one tenant
-- without getting in the way of writes that merely reference the tenant.
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
        using errcode = 'PT409', hint = 'Make another member owner first.';
    end if;
  end if;

  return coalesce(new, old);
end
$$;
