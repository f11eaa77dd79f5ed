-- When and by whom a row was created, and when a guest gave marketing consent, are
-- evidence: an update may not rewrite them, through the API, PostgREST or the
-- dashboard alike. The one exception is the foreign key itself clearing created_by
-- when that user is deleted.
create or replace function private.forbid_tenant_change()
returns trigger
language plpgsql
set search_path = ''
as $$
declare
  before jsonb := to_jsonb(old);
  after jsonb := to_jsonb(new);
begin
  -- Read through jsonb so that the tenants and memberships tables, whose keys are
  -- not (tenant_id, id), can use the same trigger for their origin.
  if after -> 'tenant_id' is distinct from before -> 'tenant_id' then
    raise exception 'tenant_id cannot change'
      using errcode = '42501', detail = format('%s %s belongs to tenant %s', tg_table_name, before ->> 'id', before ->> 'tenant_id');
  end if;
  if after -> 'created_at' is distinct from before -> 'created_at' then
    raise exception '%.created_at cannot change', tg_table_name using errcode = '42501';
  end if;
  if after -> 'created_by' is distinct from before -> 'created_by'
     and not (pg_trigger_depth() > 1 and after -> 'created_by' = 'null'::jsonb) then
    raise exception '%.created_by cannot change', tg_table_name using errcode = '42501';
  end if;
  return new;
end
$$;

create trigger forbid_origin_change before update on public.tenants
  for each row execute function private.forbid_tenant_change();
create trigger forbid_origin_change before update on public.tenant_memberships
  for each row execute function private.forbid_tenant_change();

-- Consent is only worth something with the time it was given: the stamp follows the
-- consent and is never written on its own.
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

drop trigger stamp_marketing_consent on public.guests;
create trigger stamp_marketing_consent before insert or update on public.guests
  for each row execute function private.stamp_marketing_consent();
