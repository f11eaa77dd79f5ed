-- The request's tenant travels in a transaction-local setting that the API sets
-- from the x-tenant-id header (set_config('app.tenant_id', ..., true)) and a
-- background job sets from its message. Every tenant table defaults to it and
-- its policies compare against it.
create or replace function private.request_tenant_id()
returns uuid
language sql stable
set search_path = ''
as $$
  select nullif(current_setting('app.tenant_id', true), '')::uuid
$$;

revoke all on function private.request_tenant_id() from public;
grant execute on function private.request_tenant_id() to authenticated, service_role;

create or replace function private.touch_updated_at()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  new.updated_at := now();
  return new;
end
$$;

-- RLS would reject the move for a member, but the owner roles that operators
-- use in the dashboard bypass RLS; a row must never change tenant under anyone.
create or replace function private.forbid_tenant_change()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  if new.tenant_id is distinct from old.tenant_id then
    raise exception 'tenant_id cannot change'
      using errcode = '42501', detail = format('%s %s belongs to tenant %s', tg_table_name, old.id, old.tenant_id);
  end if;
  return new;
end
$$;
