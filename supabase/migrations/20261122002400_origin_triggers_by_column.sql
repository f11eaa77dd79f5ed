-- The origin and consent triggers only judge a few columns, so they only fire when
-- an update names one of them, instead of turning every row of every update into
-- jsonb. An update that does not name a column cannot change it, and the foreign
-- key clearing created_by names it too, so nothing they refused gets through.
drop trigger forbid_origin_change on public.tenants;
create trigger forbid_origin_change before update of created_at, created_by on public.tenants
  for each row execute function private.forbid_tenant_change();
drop trigger forbid_origin_change on public.tenant_memberships;
create trigger forbid_origin_change before update of tenant_id, created_at, created_by on public.tenant_memberships
  for each row execute function private.forbid_tenant_change();

do $$
declare
  tbl text;
begin
  foreach tbl in array array['properties', 'units', 'rate_plans', 'guests', 'reservations', 'payment_links',
                             'payments', 'tasks', 'access_codes'] loop
    execute format('drop trigger forbid_tenant_change on public.%I', tbl);
    execute format('create trigger forbid_tenant_change before update of tenant_id, created_at, created_by on public.%I
                      for each row execute function private.forbid_tenant_change()', tbl);
  end loop;
  -- These two have no created_by.
  foreach tbl in array array['notifications', 'notification_preferences'] loop
    execute format('drop trigger forbid_tenant_change on public.%I', tbl);
    execute format('create trigger forbid_tenant_change before update of tenant_id, created_at on public.%I
                      for each row execute function private.forbid_tenant_change()', tbl);
  end loop;
end
$$;

drop trigger stamp_marketing_consent on public.guests;
create trigger stamp_marketing_consent before insert or update of marketing_consent, marketing_consent_at on public.guests
  for each row execute function private.stamp_marketing_consent();
