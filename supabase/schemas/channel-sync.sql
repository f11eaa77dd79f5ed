-- What a channel manager keeps in step with, as a log of changes: a room type's
-- availability over a range of nights, a rate plan's prices and restrictions over a range
-- of days, and a reservation. Every writer's change lands here through triggers, whoever
-- writes (the API, an integration, the dashboard), in the writer's transaction, and one
-- transaction's changes to one room type, plan or reservation are one row, their days
-- widened to cover them all: a bulk calendar update of 365 days is one change per plan.
--
-- An integration reads the log after a cursor (GET /v1/external/changes) to catch up after
-- an outage or when it starts. Rows are kept 7 days.
--
-- The order is the writing transactions' (transaction_id, then id), and a reader sees only
-- changes of transactions older than every transaction still running
-- (pg_snapshot_xmin of its snapshot): those are all settled, so no change can ever appear
-- before a cursor already handed out. A change shows once its own transaction and every
-- older one have ended.
create table public.ari_changes (
  tenant_id uuid not null constraint ari_changes_tenant_id_fkey references public.tenants (id) on delete cascade,
  id bigint generated always as identity,
  transaction_id xid8 not null default pg_catalog.pg_current_xact_id(),
  property_id uuid not null,
  kind text not null constraint ari_changes_kind_check check (kind in ('availability', 'rates', 'reservation')),
  -- The room type (availability), the rate plan (rates) or the reservation.
  subject_id uuid not null,
  -- The days it changed, both included; both null for every day (a default changed, or a
  -- unit joined or left the type).
  first_day date,
  last_day date,
  changed_at timestamptz not null default now(),
  constraint ari_changes_pkey primary key (tenant_id, id),
  constraint ari_changes_tenant_id_property_id_fkey foreign key (tenant_id, property_id)
    references public.properties (tenant_id, id) on delete cascade,
  constraint ari_changes_days_in_order
    check ((first_day is null) = (last_day is null) and (first_day is null or first_day <= last_day))
);
-- One row per transaction and subject, for the triggers' upsert.
create unique index ari_changes_tenant_transaction_subject_key
  on public.ari_changes (tenant_id, transaction_id, kind, subject_id);
-- The reader's order.
create index ari_changes_tenant_order_idx on public.ari_changes (tenant_id, transaction_id, id);
create index ari_changes_tenant_changed_idx on public.ari_changes (tenant_id, changed_at);

alter table public.ari_changes enable row level security;
revoke all on public.ari_changes from anon, authenticated;
grant select on public.ari_changes to api_integration;

-- An integration reads its properties' changes, each kind as far as its scopes go:
-- availability and rates with ari:read, reservations with a scope that reads them.
create policy "integrations read their properties' changes" on public.ari_changes
  for select to api_integration
  using (
    tenant_id = (select private.request_tenant_id())
    and ((select private.request_all_properties()) or property_id = any ((select private.request_property_ids())::uuid[]))
    and (case when kind = 'reservation' then (select private.request_has_scope('{reservations:read,reservations:write}'))
              else (select private.request_has_scope('{ari:read}')) end)
  );

-- Records a change, or widens this transaction's change of the same subject to cover it.
-- Null days are every day, and stay so. A property being deleted (with its tenant, say)
-- takes its changes with it: its rows' deletes record nothing.
create or replace function private.record_ari_change(
  tenant uuid, property uuid, change_kind text, subject uuid, first_day date, last_day date
)
returns void
language plpgsql
security definer
set search_path = ''
as $$
begin
  if not exists (select from public.properties p where p.tenant_id = tenant and p.id = property) then
    return;
  end if;
  insert into public.ari_changes as c (tenant_id, property_id, kind, subject_id, first_day, last_day)
  values (tenant, property, change_kind, subject, first_day, last_day)
  on conflict (tenant_id, transaction_id, kind, subject_id) do update
    set first_day = case when c.first_day is null or excluded.first_day is null then null
                         else least(c.first_day, excluded.first_day) end,
        last_day = case when c.last_day is null or excluded.last_day is null then null
                        else greatest(c.last_day, excluded.last_day) end;
end
$$;
revoke all on function private.record_ari_change(uuid, uuid, text, uuid, date, date) from public;

-- A reservation's change, and the availability it moves: a held stay (pending, confirmed,
-- checked in) takes its room type's nights; one that stops being held, moves or changes
-- type gives the old nights back.
create or replace function private.log_reservation_change()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  was_held boolean := tg_op <> 'INSERT' and old.status in ('pending', 'confirmed', 'checked_in');
  is_held boolean := tg_op <> 'DELETE' and new.status in ('pending', 'confirmed', 'checked_in');
  moved boolean := tg_op = 'UPDATE'
    and (new.room_type_id, new.check_in, new.check_out) is distinct from (old.room_type_id, old.check_in, old.check_out);
begin
  if was_held and old.room_type_id is not null and (not is_held or moved) then
    perform private.record_ari_change(old.tenant_id, old.property_id, 'availability', old.room_type_id, old.check_in,
                                      old.check_out - 1);
  end if;
  if is_held and new.room_type_id is not null and (not was_held or moved) then
    perform private.record_ari_change(new.tenant_id, new.property_id, 'availability', new.room_type_id, new.check_in,
                                      new.check_out - 1);
  end if;
  if tg_op = 'DELETE' then
    perform private.record_ari_change(old.tenant_id, old.property_id, 'reservation', old.id, old.check_in, old.check_out - 1);
  else
    perform private.record_ari_change(new.tenant_id, new.property_id, 'reservation', new.id, new.check_in, new.check_out - 1);
  end if;
  return null;
end
$$;
revoke all on function private.log_reservation_change() from public;

create trigger log_reservation_change after insert or update or delete on public.reservations
  for each row execute function private.log_reservation_change();

-- A block takes its unit's nights out of the unit's room type, and gives them back when it
-- goes or moves.
create or replace function private.log_unit_block_change()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  block public.unit_blocks;
  unit public.units;
begin
  foreach block in array (case tg_op when 'INSERT' then array[new] when 'DELETE' then array[old] else array[old, new] end) loop
    select * into unit from public.units u where u.tenant_id = block.tenant_id and u.id = block.unit_id;
    if found and unit.room_type_id is not null then
      perform private.record_ari_change(block.tenant_id, unit.property_id, 'availability', unit.room_type_id,
                                        lower(block.nights), upper(block.nights) - 1);
    end if;
  end loop;
  return null;
end
$$;
revoke all on function private.log_unit_block_change() from public;

create trigger log_unit_block_change after insert or update or delete on public.unit_blocks
  for each row execute function private.log_unit_block_change();

-- A unit that joins or leaves a room type, or enters or leaves service, changes the type's
-- rooms on every night.
create or replace function private.log_unit_change()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  if tg_op <> 'INSERT' and old.room_type_id is not null
     and (tg_op = 'DELETE' or (new.room_type_id, new.status) is distinct from (old.room_type_id, old.status)) then
    perform private.record_ari_change(old.tenant_id, old.property_id, 'availability', old.room_type_id, null, null);
  end if;
  if tg_op <> 'DELETE' and new.room_type_id is not null
     and (tg_op = 'INSERT' or (new.room_type_id, new.status) is distinct from (old.room_type_id, old.status)) then
    perform private.record_ari_change(new.tenant_id, new.property_id, 'availability', new.room_type_id, null, null);
  end if;
  return null;
end
$$;
revoke all on function private.log_unit_change() from public;

create trigger log_unit_change after insert or update or delete on public.units
  for each row execute function private.log_unit_change();

-- A plan's days written, once per statement: each plan's span of days changed, and the
-- same span of the plans derived from it, which follow it.
create or replace function private.log_rate_plan_days_change()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  spans jsonb;
begin
  -- Each event's trigger names only the transition tables it has.
  if tg_op = 'INSERT' then
    select jsonb_agg(jsonb_build_object('tenant', n.tenant_id, 'plan', n.rate_plan_id, 'first', n.first_day, 'last', n.last_day))
    into spans
    from (select d.tenant_id, d.rate_plan_id, min(d.day) as first_day, max(d.day) as last_day
          from new_rows d group by d.tenant_id, d.rate_plan_id) n;
  elsif tg_op = 'UPDATE' then
    select jsonb_agg(jsonb_build_object('tenant', n.tenant_id, 'plan', n.rate_plan_id, 'first', n.first_day, 'last', n.last_day))
    into spans
    from (select d.tenant_id, d.rate_plan_id, min(d.day) as first_day, max(d.day) as last_day
          from (select o.tenant_id, o.rate_plan_id, o.day from old_rows o
                union all select w.tenant_id, w.rate_plan_id, w.day from new_rows w) d
          group by d.tenant_id, d.rate_plan_id) n;
  else
    select jsonb_agg(jsonb_build_object('tenant', n.tenant_id, 'plan', n.rate_plan_id, 'first', n.first_day, 'last', n.last_day))
    into spans
    from (select d.tenant_id, d.rate_plan_id, min(d.day) as first_day, max(d.day) as last_day
          from old_rows d group by d.tenant_id, d.rate_plan_id) n;
  end if;
  perform private.record_ari_change(p.tenant_id, p.property_id, 'rates', p.id, (c ->> 'first')::date, (c ->> 'last')::date)
  from jsonb_array_elements(coalesce(spans, '[]')) c
  join public.rate_plans p on p.tenant_id = (c ->> 'tenant')::uuid
    and (p.id = (c ->> 'plan')::uuid or p.derived_from_id = (c ->> 'plan')::uuid)
  -- Each base plan before the plans that follow it.
  order by p.derived_from_id is not null, p.id;
  return null;
end
$$;
revoke all on function private.log_rate_plan_days_change() from public;

-- Statement triggers see the statement's rows as transition tables, one trigger per event.
create trigger log_rate_plan_days_insert after insert on public.rate_plan_days
  referencing new table as new_rows
  for each statement execute function private.log_rate_plan_days_change();
create trigger log_rate_plan_days_update after update on public.rate_plan_days
  referencing new table as new_rows old table as old_rows
  for each statement execute function private.log_rate_plan_days_change();
create trigger log_rate_plan_days_delete after delete on public.rate_plan_days
  referencing old table as old_rows
  for each statement execute function private.log_rate_plan_days_change();

-- A plan made, or its defaults, derivation or sale changed: every day of it, and of the
-- plans derived from it.
create or replace function private.log_rate_plan_change()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  if tg_op = 'UPDATE'
     and (new.nightly_price, new.extra_adult_price, new.extra_child_price, new.min_stay, new.max_stay, new.active,
          new.derived_from_id, new.derived_percent, new.derived_amount, new.room_type_id)
         is not distinct from
         (old.nightly_price, old.extra_adult_price, old.extra_child_price, old.min_stay, old.max_stay, old.active,
          old.derived_from_id, old.derived_percent, old.derived_amount, old.room_type_id) then
    return null;
  end if;
  perform private.record_ari_change(p.tenant_id, p.property_id, 'rates', p.id, null, null)
  from public.rate_plans p
  where p.tenant_id = new.tenant_id and (p.id = new.id or p.derived_from_id = new.id)
  order by p.derived_from_id is not null, p.id;
  return null;
end
$$;
revoke all on function private.log_rate_plan_change() from public;

create trigger log_rate_plan_change after insert or update on public.rate_plans
  for each row execute function private.log_rate_plan_change();

-- Each availability or rates change becomes an outbound webhook event when its transaction
-- commits (a deferred trigger), as the transaction left it: availability.changed or
-- rates.changed, naming the property, the room type or plan and the days, one per change
-- however many writes widened it. A property's events reach each subscription in order.
-- Reservations have their own events (webhook-delivery.sql).
create or replace function private.announce_ari_change()
returns trigger
language plpgsql
security definer
set search_path = ''
set timezone = 'UTC'
as $$
declare
  change public.ari_changes;
  event_type text := case new.kind when 'availability' then 'availability.changed' when 'rates' then 'rates.changed' end;
begin
  if event_type is null or not private.webhooks_wanted(new.tenant_id, event_type, array[new.property_id]) then
    return null;
  end if;
  select * into change from public.ari_changes c where c.tenant_id = new.tenant_id and c.id = new.id;
  if not found then
    return null;
  end if;
  perform private.emit_webhook_event(change.tenant_id, event_type, array[change.property_id], null,
    jsonb_build_object('propertyId', change.property_id,
                       case change.kind when 'availability' then 'roomTypeId' else 'ratePlanId' end, change.subject_id,
                       'from', change.first_day, 'to', change.last_day),
    change.property_id);
  return null;
end
$$;
revoke all on function private.announce_ari_change() from public;

create constraint trigger announce_ari_change after insert on public.ari_changes
  deferrable initially deferred
  for each row execute function private.announce_ari_change();

-- Changes older than 7 days are purged every hour (the schedule below); a cursor older
-- than that is refused, and its reader reads in full again.
create or replace function private.purge_ari_changes()
returns integer
language plpgsql
security definer
set search_path = ''
as $$
declare
  purged integer;
begin
  delete from public.ari_changes where changed_at < now() - interval '7 days';
  get diagnostics purged = row_count;
  return purged;
end
$$;
revoke all on function private.purge_ari_changes() from public;

-- ---------------------------------------------------------------- not in a schema diff
-- pg_cron's jobs are rows of cron.job (external.sql says how these blocks are kept).
do $$
begin
  if not exists (select 1 from pg_available_extensions where name = 'pg_cron') then
    raise notice 'pg_cron is missing: changes older than 7 days are not purged on a schedule here';
    return;
  end if;
  create extension if not exists pg_cron;
  perform cron.unschedule(jobid) from cron.job where jobname = 'purge-ari-changes';
  perform cron.schedule('purge-ari-changes', '41 * * * *', 'select private.purge_ari_changes()');
end
$$;
