-- Background jobs (the notification worker) switch to this role and set
-- app.tenant_id from the job, so they read one tenant's rows and no other's.
do $$
begin
  if not exists (select from pg_roles where rolname = 'background_worker') then
    create role background_worker nologin noinherit;
  end if;
end
$$;
grant background_worker to postgres;

grant usage on schema private, extensions to background_worker;
grant execute on function private.request_tenant_id() to background_worker;
grant select on public.tenants, public.properties, public.units, public.rate_plans, public.guests,
  public.reservations, public.payments, public.payment_links, public.tasks, public.access_codes
  to background_worker;

create policy "background jobs read the job's tenant" on public.tenants
  for select to background_worker using (id = (select private.request_tenant_id()));
create policy "background jobs read the job's properties" on public.properties
  for select to background_worker using (tenant_id = (select private.request_tenant_id()));
create policy "background jobs read the job's units" on public.units
  for select to background_worker using (tenant_id = (select private.request_tenant_id()));
create policy "background jobs read the job's rate plans" on public.rate_plans
  for select to background_worker using (tenant_id = (select private.request_tenant_id()));
create policy "background jobs read the job's guests" on public.guests
  for select to background_worker using (tenant_id = (select private.request_tenant_id()));
create policy "background jobs read the job's reservations" on public.reservations
  for select to background_worker using (tenant_id = (select private.request_tenant_id()));
create policy "background jobs read the job's payments" on public.payments
  for select to background_worker using (tenant_id = (select private.request_tenant_id()));
create policy "background jobs read the job's payment links" on public.payment_links
  for select to background_worker using (tenant_id = (select private.request_tenant_id()));
create policy "background jobs read the job's tasks" on public.tasks
  for select to background_worker using (tenant_id = (select private.request_tenant_id()));
create policy "background jobs read the job's access codes" on public.access_codes
  for select to background_worker using (tenant_id = (select private.request_tenant_id()));
