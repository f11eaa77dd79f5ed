-- Calendar imports: a unit subscribes to another service's iCal feed (Airbnb's, Vrbo's,
-- Booking.com's export, a Google calendar), and the nights the feed's events cover become
-- holds on the unit: unit blocks that carry the import's id, counted out of the unit's
-- room type like any out-of-order block, and made, changed and removed only as the feed
-- changes. The webhooks worker fetches each import when it is due (src/calendar-imports)
-- and hands what it found to private.apply_calendar_import. A night the feed holds but the
-- unit cannot be held for (it holds a stay, another block covers it, or its room type would
-- have too few rooms for its stays) is a conflict, kept on the import for the managers.

create table public.calendar_imports (
  tenant_id uuid not null default private.request_tenant_id()
    constraint calendar_imports_tenant_id_fkey references public.tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  -- The unit's property, filled from the unit when a writer gives none.
  property_id uuid not null,
  unit_id uuid not null,
  name text not null constraint calendar_imports_name_check check (length(btrim(name)) between 1 and 100),
  -- The feed's address; checked when saved and again, after its name resolves, at every fetch.
  url text not null constraint calendar_imports_url_check check (length(url) between 1 and 2000),
  -- The validators of the last calendar fetched, sent back as If-None-Match and
  -- If-Modified-Since.
  etag text constraint calendar_imports_etag_check check (length(etag) <= 1000),
  last_modified text constraint calendar_imports_last_modified_check check (length(last_modified) <= 100),
  -- When the worker fetches it next; a claim moves it past the fetch's lease.
  next_fetch_at timestamptz not null default now(),
  last_fetched_at timestamptz,
  last_succeeded_at timestamptz,
  -- How the last fetch ended: the calendar changed what is held, said nothing new, or failed.
  last_outcome text
    constraint calendar_imports_last_outcome_check check (last_outcome in ('changed', 'unchanged', 'failed')),
  -- Why the last fetch failed: a machine code and words for the managers.
  last_error_code text constraint calendar_imports_last_error_code_check check (length(last_error_code) <= 100),
  last_error text constraint calendar_imports_last_error_check check (length(last_error) <= 1000),
  -- Failed fetches in a row, since when, and when the managers were told.
  failures integer not null default 0 constraint calendar_imports_failures_check check (failures >= 0),
  failing_since timestamptz,
  reported_at timestamptz,
  -- The last calendar's events that cover nights from today on, and the runs of those
  -- nights the unit could not be held for: [{startsOn, endsOn, reason}], reason one of
  -- 'stay', 'block', 'room_type_full'.
  events integer not null default 0 constraint calendar_imports_events_check check (events >= 0),
  conflicts jsonb not null default '[]'
    constraint calendar_imports_conflicts_check check (jsonb_typeof(conflicts) = 'array'),
  created_by uuid default auth.uid()
    constraint calendar_imports_created_by_fkey references auth.users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint calendar_imports_pkey primary key (tenant_id, id),
  constraint calendar_imports_tenant_id_property_id_unit_id_fkey
    foreign key (tenant_id, property_id, unit_id) references public.units (tenant_id, property_id, id) on delete cascade,
  -- A unit takes a feed once.
  constraint calendar_imports_tenant_id_unit_id_url_key unique (tenant_id, unit_id, url)
);
create index calendar_imports_tenant_property_idx on public.calendar_imports (tenant_id, property_id);
-- The worker looks for what is due across every tenant: like a feed's token, this index
-- cannot lead with tenant_id.
create index calendar_imports_next_fetch_idx on public.calendar_imports (next_fetch_at);

-- An imported hold names its import, and goes with it.
alter table public.unit_blocks add constraint unit_blocks_tenant_id_calendar_import_id_fkey
  foreign key (tenant_id, calendar_import_id) references public.calendar_imports (tenant_id, id) on delete cascade;
create index unit_blocks_tenant_calendar_import_idx on public.unit_blocks (tenant_id, calendar_import_id)
  where calendar_import_id is not null;

-- An import stays on its unit; a new address is fetched at once, without the old one's
-- validators.
create or replace function private.calendar_import_before_write()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  if tg_op = 'INSERT' then
    select u.property_id into new.property_id from public.units u
    where u.tenant_id = new.tenant_id and u.id = new.unit_id and u.property_id = coalesce(new.property_id, u.property_id);
    if not found then
      raise exception 'unit % is not a unit of this tenant''s property', new.unit_id
        using errcode = '23503', constraint = 'calendar_imports_tenant_id_property_id_unit_id_fkey';
    end if;
    return new;
  end if;
  if (new.unit_id, new.property_id) is distinct from (old.unit_id, old.property_id) then
    raise exception 'a calendar import stays on its unit'
      using errcode = 'PT409', constraint = 'calendar_imports_unit_fixed', hint = 'Delete it and import to the other unit.';
  end if;
  if new.url is distinct from old.url then
    new.etag := null;
    new.last_modified := null;
    new.next_fetch_at := now();
  end if;
  return new;
end
$$;

create trigger calendar_import_before_write before insert or update on public.calendar_imports
  for each row execute function private.calendar_import_before_write();
create trigger forbid_tenant_change before update of tenant_id, created_at, created_by on public.calendar_imports
  for each row execute function private.forbid_tenant_change();
create trigger touch_updated_at before update of name, url on public.calendar_imports
  for each row execute function private.touch_updated_at();

alter table public.calendar_imports enable row level security;
revoke all on public.calendar_imports from anon, authenticated;
grant select on public.calendar_imports to authenticated;
grant insert (property_id, unit_id, name, url) on public.calendar_imports to authenticated;
-- next_fetch_at: "fetch it now".
grant update (name, url, next_fetch_at) on public.calendar_imports to authenticated;
grant delete on public.calendar_imports to authenticated;

-- A feed's URL often carries the other service's secret: owners and admins set imports
-- up and read them, as they do calendar feeds and API keys.
create policy "managers read calendar imports" on public.calendar_imports
  for select to authenticated
  using (tenant_id = (select private.request_tenant_id()) and (select private.request_is_manager()));
create policy "managers create calendar imports" on public.calendar_imports
  for insert to authenticated
  with check (
    tenant_id = (select private.request_tenant_id()) and (select private.request_is_manager())
    and created_by is not distinct from (select auth.uid())
  );
create policy "managers change calendar imports" on public.calendar_imports
  for update to authenticated
  using (tenant_id = (select private.request_tenant_id()) and (select private.request_is_manager()))
  with check (tenant_id = (select private.request_tenant_id()) and (select private.request_is_manager()));
create policy "managers delete calendar imports" on public.calendar_imports
  for delete to authenticated
  using (tenant_id = (select private.request_tenant_id()) and (select private.request_is_manager()));

-- An imported hold is the feed's: members see it, and change or remove it by changing the
-- feed or deleting the import. Only the import's own functions (as the tables' owner) and
-- the cascade from a deleted import write one.
create or replace function private.unit_block_import_fixed()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  if current_user in ('authenticated', 'anon', 'api_integration', 'background_worker')
     and ((tg_op = 'INSERT' and new.calendar_import_id is not null)
          or (tg_op <> 'INSERT' and old.calendar_import_id is not null)
          or (tg_op = 'UPDATE' and new.calendar_import_id is distinct from old.calendar_import_id)) then
    raise exception 'a block from a calendar import changes only with its calendar'
      using errcode = 'PT409', constraint = 'unit_blocks_imported',
            detail = jsonb_build_object('calendarImportId', coalesce(old.calendar_import_id, new.calendar_import_id))::text,
            hint = 'Change the event in the calendar it comes from, or delete the import.';
  end if;
  return case when tg_op = 'DELETE' then old else new end;
end
$$;

create trigger unit_block_import_fixed before insert or update or delete on public.unit_blocks
  for each row execute function private.unit_block_import_fixed();

-- ---------------------------------------------------------------- the worker's side

-- How often a calendar that answered is fetched again, and how long a failing one waits:
-- doubling from 15 minutes up to 6 hours. After the third failure in a row the owners and
-- admins are told, once until it answers again.
create or replace function private.calendar_import_retry_after(failures integer)
returns interval
language plpgsql immutable
set search_path = ''
as $$
begin
  return least(interval '15 minutes' * power(2, least(greatest(failures, 1), 16) - 1), interval '6 hours');
end
$$;

-- Up to `how_many` imports that are due, oldest due first, each given a lease: another
-- claim passes them by until `lease_seconds` have gone. What a fetch needs: the address,
-- the validators, the property's clock for the events' dates, and the nights that can be
-- held, from its today to the first night after two years ([first_night, end_night)), as
-- apply_calendar_import holds them.
create or replace function private.claim_calendar_imports(how_many integer, lease_seconds integer)
returns table (tenant_id uuid, id uuid, url text, etag text, last_modified text, timezone text, first_night date,
               end_night date)
language plpgsql security definer
set search_path = ''
as $$
begin
  return query
  with due as (
    select i.tenant_id, i.id from public.calendar_imports i
    where i.next_fetch_at <= now()
    order by i.next_fetch_at
    limit greatest(how_many, 0)
    for update skip locked
  )
  update public.calendar_imports i
  set next_fetch_at = now() + make_interval(secs => greatest(lease_seconds, 1))
  from due, public.properties p
  where i.tenant_id = due.tenant_id and i.id = due.id and p.tenant_id = i.tenant_id and p.id = i.property_id
  returning i.tenant_id, i.id, i.url, i.etag, i.last_modified, p.timezone, (now() at time zone p.timezone)::date,
            (now() at time zone p.timezone)::date + 731;
end
$$;
revoke all on function private.claim_calendar_imports(integer, integer) from public;

-- What a fetch found, applied under the unit's and its room type's locks:
--   {"outcome": "unchanged"}: the calendar answered 304, or as before;
--   {"outcome": "failed", "code": …, "message": …};
--   {"outcome": "fetched", "etag": …, "lastModified": …, "events": [{"startsOn", "endsOn"}, …]},
--     each event the nights it covers on the property's clock, DTEND exclusive.
-- From the property's today to two years ahead the unit is then held on every night an
-- event covers and nothing else holds; the import's blocks are made to be exactly those
-- runs of nights, each unchanged run left as it is. Returns the import's outcome ('changed'
-- only when a hold or a conflict did), or null when the import is gone.
create or replace function private.apply_calendar_import(for_tenant uuid, import_id uuid, fetched jsonb)
returns text
language plpgsql security definer
set search_path = ''
as $$
declare
  feed public.calendar_imports;
  unit record;
  today date;
  horizon daterange;
  wanted datemultirange;
  placed datemultirange;
  found_conflicts jsonb;
  event_count integer;
  short_with_it date[] := '{}';
  short_without_it date[] := '{}';
  removed integer;
  added integer;
  tell boolean;
begin
  select * into feed from public.calendar_imports i where i.tenant_id = for_tenant and i.id = import_id for update;
  if not found then
    return null;
  end if;
  if fetched ->> 'outcome' = 'failed' then
    -- Told once, on the failure that makes it three in a row.
    tell := feed.failures + 1 >= 3 and feed.reported_at is null;
    update public.calendar_imports i
    set last_fetched_at = now(), last_outcome = 'failed',
        last_error_code = left(coalesce(fetched ->> 'code', 'failed'), 100),
        last_error = left(coalesce(fetched ->> 'message', 'the calendar could not be fetched'), 1000),
        failures = i.failures + 1, failing_since = coalesce(i.failing_since, now()),
        next_fetch_at = now() + private.calendar_import_retry_after(i.failures + 1),
        reported_at = case when tell then now() else i.reported_at end
    where i.tenant_id = for_tenant and i.id = import_id
    returning * into feed;
    if tell then
      perform private.notify_calendar_import_failing(feed);
    end if;
    return 'failed';
  end if;
  if fetched ->> 'outcome' = 'unchanged' then
    update public.calendar_imports i
    set last_fetched_at = now(), last_succeeded_at = now(), last_outcome = 'unchanged', last_error_code = null,
        last_error = null, failures = 0, failing_since = null, reported_at = null,
        next_fetch_at = now() + private.calendar_import_retry_after(1)
    where i.tenant_id = for_tenant and i.id = import_id;
    return 'unchanged';
  end if;
  if fetched ->> 'outcome' is distinct from 'fetched' or jsonb_typeof(fetched -> 'events') is distinct from 'array' then
    raise exception 'a calendar import''s fetch is unchanged, failed or fetched with its events'
      using errcode = '22023';
  end if;

  select u.room_type_id, u.status, p.timezone into unit
  from public.units u join public.properties p on p.tenant_id = u.tenant_id and p.id = u.property_id
  where u.tenant_id = for_tenant and u.id = feed.unit_id;
  today := (now() at time zone unit.timezone)::date;
  horizon := daterange(today, today + 731, '[)');
  select coalesce(range_agg(daterange((e ->> 'startsOn')::date, (e ->> 'endsOn')::date, '[)') * horizon), '{}'),
         count(*) filter (where daterange((e ->> 'startsOn')::date, (e ->> 'endsOn')::date, '[)') && horizon)
    into wanted, event_count
  from jsonb_array_elements(fetched -> 'events') e
  where (e ->> 'endsOn')::date > (e ->> 'startsOn')::date;

  perform private.lock_unit_nights(for_tenant, feed.unit_id);
  if unit.status = 'active' and not isempty(wanted) then
    perform private.lock_room_type_inventory(for_tenant, unit.room_type_id);
    short_with_it := private.room_type_shortfall(for_tenant, unit.room_type_id, daterange(lower(wanted), upper(wanted), '[)'),
                                                 null, null, 0);
    short_without_it := private.room_type_shortfall(for_tenant, unit.room_type_id,
                                                    daterange(lower(wanted), upper(wanted), '[)'), null, null, 1);
  end if;

  -- Each wanted night, and what else holds it. A night this import holds now stays held
  -- while its type has room for its stays with the unit out (shortfall of none more); a
  -- night it does not hold yet needs room for one more.
  with nights as (
    select n::date as night from unnest(wanted) w, generate_series(lower(w), upper(w) - 1, interval '1 day') n
  ),
  judged as (
    select n.night,
      case
        when exists (select from public.reservations r
                     where r.tenant_id = for_tenant and r.unit_id = feed.unit_id
                       and r.status in ('pending', 'confirmed', 'checked_in') and r.stay @> n.night) then 'stay'
        when exists (select from public.unit_blocks b
                     where b.tenant_id = for_tenant and b.unit_id = feed.unit_id
                       and b.calendar_import_id is distinct from feed.id and b.nights @> n.night) then 'block'
        when n.night = any (
               case when exists (select from public.unit_blocks b
                                 where b.tenant_id = for_tenant and b.calendar_import_id = feed.id and b.nights @> n.night)
                    then short_with_it else short_without_it end) then 'room_type_full'
      end as conflict
    from nights n
  ),
  conflict_runs as (
    select conflict, min(night) as starts_on, max(night) + 1 as ends_on
    from (select j.*, j.night - (row_number() over (partition by j.conflict order by j.night))::integer as run
          from judged j where j.conflict is not null) c
    group by conflict, run
  )
  select coalesce((select range_agg(daterange(j.night, j.night + 1, '[)')) from judged j where j.conflict is null), '{}'),
         coalesce((select jsonb_agg(jsonb_build_object('startsOn', c.starts_on, 'endsOn', c.ends_on, 'reason', c.conflict)
                                    order by c.starts_on) from conflict_runs c), '[]')
    into placed, found_conflicts;

  -- The import's blocks become exactly the placed runs (from today on): a block whose
  -- nights from today are not one of them goes, a run no block is yet comes.
  delete from public.unit_blocks b
  where b.tenant_id = for_tenant and b.calendar_import_id = feed.id and b.ends_on > today
    and not exists (select from unnest(placed) p where p = b.nights * horizon);
  get diagnostics removed = row_count;
  insert into public.unit_blocks (tenant_id, property_id, unit_id, starts_on, ends_on, reason, calendar_import_id, created_by)
  select for_tenant, feed.property_id, feed.unit_id, lower(p), upper(p), left('Held by the calendar ' || feed.name, 500),
         feed.id, null
  from unnest(placed) p
  where not exists (select from public.unit_blocks b
                    where b.tenant_id = for_tenant and b.calendar_import_id = feed.id and b.nights * horizon = p);
  get diagnostics added = row_count;

  update public.calendar_imports i
  set etag = left(fetched ->> 'etag', 1000), last_modified = left(fetched ->> 'lastModified', 100),
      last_fetched_at = now(), last_succeeded_at = now(),
      last_outcome = case when removed + added = 0 and i.conflicts = found_conflicts then 'unchanged' else 'changed' end,
      last_error_code = null,
      last_error = null, failures = 0, failing_since = null, reported_at = null, events = event_count,
      conflicts = found_conflicts, next_fetch_at = now() + private.calendar_import_retry_after(1)
  where i.tenant_id = for_tenant and i.id = import_id
  returning * into feed;
  return feed.last_outcome;
end
$$;
revoke all on function private.apply_calendar_import(uuid, uuid, jsonb) from public;

-- A calendar that failed three fetches in a row is told to the owners and admins, as a
-- disabled webhook subscription is: a `system` notification delivered in_app.
create or replace function private.notify_calendar_import_failing(feed public.calendar_imports)
returns void
language plpgsql security definer
set search_path = ''
set timezone = 'UTC'
as $$
declare
  notice uuid;
begin
  insert into public.notifications (tenant_id, recipient_id, recipient_type, template_key, channel, context)
  values (feed.tenant_id, null, 'system', 'calendar_import_failing', 'in_app',
          jsonb_build_object('calendarImportId', feed.id, 'unitId', feed.unit_id, 'name', feed.name,
                             'url', feed.url, 'failures', feed.failures, 'failingSince', feed.failing_since,
                             'error', feed.last_error))
  returning id into notice;
  perform private.send_notification_jobs(array[notice], feed.tenant_id);
end
$$;
revoke all on function private.notify_calendar_import_failing(public.calendar_imports) from public;
