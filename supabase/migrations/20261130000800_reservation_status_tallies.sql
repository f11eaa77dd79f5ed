-- The reservation list's exact total without counting rows, where its filters allow:
-- by status, by property, both, or none. Counting a large tenant's 29,542 confirmed stays
-- read every one of their index entries on each request, most of the statement's time.
--
-- The reservation triggers keep a tally per tenant, property and status as rows of signed
-- changes (+1 where a stay enters a status or property, -1 where it leaves one), inserted
-- and never updated, so that concurrent writes to one property never wait for each other
-- on a counter's row. A total is the sum of its rows, read in the list's own statement and
-- snapshot, so it is as exact as a count. Every minute pg_cron folds each key's rows into
-- one, which keeps the sums short; a database without pg_cron keeps them correct, only
-- longer.
create table public.reservation_status_tallies (
  tenant_id uuid not null
    constraint reservation_status_tallies_tenant_id_fkey references public.tenants (id) on delete cascade,
  property_id uuid not null,
  status text not null
    constraint reservation_status_tallies_status_check
      check (status in ('pending', 'confirmed', 'checked_in', 'checked_out', 'cancelled', 'no_show')),
  reservations integer not null,
  -- A property that still has reservations cannot be deleted, so the tally rows it takes
  -- with it sum to nothing.
  constraint reservation_status_tallies_tenant_id_property_id_fkey
    foreign key (tenant_id, property_id) references public.properties (tenant_id, id) on delete cascade
);
-- The total reads the tenant's rows for its statuses, the property among them, and the
-- counts themselves from the index.
create index reservation_status_tallies_tenant_status_property_idx
  on public.reservation_status_tallies (tenant_id, status, property_id) include (reservations);
create index reservation_status_tallies_tenant_property_idx
  on public.reservation_status_tallies (tenant_id, property_id);

alter table public.reservation_status_tallies enable row level security;
revoke all on public.reservation_status_tallies from anon, authenticated, api_integration;
grant select on public.reservation_status_tallies to authenticated, api_integration;

-- Whoever reads a tenant's or a property's reservations reads their tallies, and no one
-- writes them but the trigger.
create policy "members read their tenant's reservation tallies" on public.reservation_status_tallies
  for select to authenticated
  using (tenant_id = (select private.request_tenant_id()) and (select private.request_is_member()));
create policy "integrations read their property's reservation tallies" on public.reservation_status_tallies
  for select to api_integration
  using (tenant_id = (select private.request_tenant_id()) and property_id = (select private.request_property_id()));

-- A stay's move between statuses or properties, its arrival and its removal, as tally rows.
-- A reservation removed with its tenant (the tenant's cascade) writes nothing: its
-- tenant's tallies go with the tenant.
create or replace function private.tally_reservation_status()
returns trigger
language plpgsql security definer
set search_path = ''
as $$
begin
  if tg_op = 'DELETE' then
    if exists (select from public.tenants t where t.id = old.tenant_id) then
      insert into public.reservation_status_tallies (tenant_id, property_id, status, reservations)
      values (old.tenant_id, old.property_id, old.status, -1);
    end if;
  elsif tg_op = 'UPDATE' then
    insert into public.reservation_status_tallies (tenant_id, property_id, status, reservations)
    values (old.tenant_id, old.property_id, old.status, -1), (new.tenant_id, new.property_id, new.status, 1);
  else
    insert into public.reservation_status_tallies (tenant_id, property_id, status, reservations)
    values (new.tenant_id, new.property_id, new.status, 1);
  end if;
  return null;
end
$$;
revoke all on function private.tally_reservation_status() from public;

create trigger tally_reservation_status_on_insert_or_delete
  after insert or delete on public.reservations
  for each row execute function private.tally_reservation_status();
create trigger tally_reservation_status_on_move
  after update of status, property_id on public.reservations
  for each row
  when (old.status is distinct from new.status or old.property_id is distinct from new.property_id)
  execute function private.tally_reservation_status();

-- The reservations there are now, written under the trigger's lock on the table: no write
-- lands between this count and the trigger.
insert into public.reservation_status_tallies (tenant_id, property_id, status, reservations)
select tenant_id, property_id, status, count(*)::integer
from public.reservations
group by tenant_id, property_id, status;

-- Each key's rows folded into one, and keys that sum to nothing dropped. Rows written
-- while it runs are not in its snapshot and stay as they are; a reader sees the rows
-- before the fold or after it, which sum alike. Returns how many rows it removed.
create or replace function private.fold_reservation_status_tallies()
returns integer
language plpgsql security definer
set search_path = ''
as $$
declare
  removed integer;
begin
  with folded_keys as (
    select tenant_id, property_id, status
    from public.reservation_status_tallies
    group by tenant_id, property_id, status
    having count(*) > 1 or sum(reservations) = 0
  ),
  taken as (
    delete from public.reservation_status_tallies t
    using folded_keys k
    where t.tenant_id = k.tenant_id and t.property_id = k.property_id and t.status = k.status
    returning t.tenant_id, t.property_id, t.status, t.reservations
  ),
  kept as (
    insert into public.reservation_status_tallies (tenant_id, property_id, status, reservations)
    select tenant_id, property_id, status, sum(reservations)::integer
    from taken
    group by tenant_id, property_id, status
    having sum(reservations) <> 0
    returning 1
  )
  select (select count(*) from taken) - (select count(*) from kept) into removed;
  return removed;
end
$$;
revoke all on function private.fold_reservation_status_tallies() from public;

-- A database without pg_cron applies this as a no-op, as the schedules migration does.
do $$
begin
  if not exists (select 1 from pg_available_extensions where name = 'pg_cron') then
    raise notice 'pg_cron is missing: reservation status tallies are not folded on a schedule here';
    return;
  end if;
  create extension if not exists pg_cron;
  perform cron.unschedule(jobid) from cron.job where jobname = 'fold-reservation-status-tallies';
  perform cron.schedule('fold-reservation-status-tallies', '* * * * *',
    'select private.fold_reservation_status_tallies()');
end
$$;
