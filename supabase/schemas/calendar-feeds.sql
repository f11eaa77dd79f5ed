-- Calendar feeds: a secret, revocable URL per unit or per room type that serves an
-- RFC 5545 calendar of the nights it cannot be sold, for Airbnb, Vrbo, Booking.com and
-- Google Calendar to subscribe to. A unit's feed holds its held stays and its blocks; a
-- room type's the nights on which it has no room left. No event names a guest.

-- Only a SHA-256 of the feed's token is kept, as for API keys: the token has 256 random
-- bits and the database never sees it.
create table public.calendar_feeds (
  tenant_id uuid not null default private.request_tenant_id()
    constraint calendar_feeds_tenant_id_fkey references public.tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  -- The unit's or room type's property, filled from it when a writer gives none.
  property_id uuid not null,
  unit_id uuid,
  room_type_id uuid,
  -- The calendar's name in a subscriber's list, like "Room 101 at Harbour House".
  name text not null constraint calendar_feeds_name_check check (length(btrim(name)) between 1 and 100),
  token_hash bytea not null constraint calendar_feeds_token_hash_check check (length(token_hash) = 32),
  -- Shown in lists so that managers can tell their feeds apart.
  last_four text not null constraint calendar_feeds_last_four_check check (last_four ~ '^[A-Za-z0-9_-]{4}$'),
  revoked_at timestamptz,
  created_by uuid default auth.uid()
    constraint calendar_feeds_created_by_fkey references auth.users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint calendar_feeds_pkey primary key (tenant_id, id),
  constraint calendar_feeds_unit_or_room_type check ((unit_id is null) <> (room_type_id is null)),
  constraint calendar_feeds_tenant_id_property_id_unit_id_fkey
    foreign key (tenant_id, property_id, unit_id) references public.units (tenant_id, property_id, id) on delete cascade,
  constraint calendar_feeds_tenant_id_property_id_room_type_id_fkey
    foreign key (tenant_id, property_id, room_type_id) references public.room_types (tenant_id, property_id, id)
    on delete cascade
);
-- A subscriber names its feed by the token alone, before any tenant is known: like an API
-- key's id, this index cannot lead with tenant_id.
create unique index calendar_feeds_token_hash_key on public.calendar_feeds (token_hash);
create index calendar_feeds_tenant_property_idx on public.calendar_feeds (tenant_id, property_id);

-- A feed is renamed or revoked, never pointed elsewhere: its unit or room type and its
-- token are what its subscribers were given. Revoking stamps the time once, for good.
create or replace function private.calendar_feed_before_write()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  if tg_op = 'INSERT' then
    new.revoked_at := null;
    if new.unit_id is not null then
      select u.property_id into new.property_id from public.units u
      where u.tenant_id = new.tenant_id and u.id = new.unit_id and u.property_id = coalesce(new.property_id, u.property_id);
      if not found then
        raise exception 'unit % is not a unit of this tenant''s property', new.unit_id
          using errcode = '23503', constraint = 'calendar_feeds_tenant_id_property_id_unit_id_fkey';
      end if;
    elsif new.room_type_id is not null then
      select t.property_id into new.property_id from public.room_types t
      where t.tenant_id = new.tenant_id and t.id = new.room_type_id and t.property_id = coalesce(new.property_id, t.property_id);
      if not found then
        raise exception 'room type % is not a room type of this tenant''s property', new.room_type_id
          using errcode = '23503', constraint = 'calendar_feeds_tenant_id_property_id_room_type_id_fkey';
      end if;
    end if;
    return new;
  end if;
  if (new.property_id, new.unit_id, new.room_type_id, new.token_hash, new.last_four)
     is distinct from (old.property_id, old.unit_id, old.room_type_id, old.token_hash, old.last_four) then
    raise exception 'a calendar feed''s unit, room type and token cannot change'
      using errcode = 'PT409', constraint = 'calendar_feeds_fields_fixed', hint = 'Revoke it and create another.';
  end if;
  if old.revoked_at is not null and new.revoked_at is distinct from old.revoked_at then
    raise exception 'a revoked calendar feed stays revoked'
      using errcode = 'PT409', constraint = 'calendar_feeds_revoked_final', detail = jsonb_build_object('currentStatus', 'revoked')::text;
  end if;
  if old.revoked_at is null and new.revoked_at is not null then
    new.revoked_at := now();
  end if;
  return new;
end
$$;

create trigger calendar_feed_before_write before insert or update on public.calendar_feeds
  for each row execute function private.calendar_feed_before_write();
create trigger forbid_tenant_change before update of tenant_id, created_at, created_by on public.calendar_feeds
  for each row execute function private.forbid_tenant_change();
create trigger touch_updated_at before update of name, revoked_at on public.calendar_feeds
  for each row execute function private.touch_updated_at();

alter table public.calendar_feeds enable row level security;
revoke all on public.calendar_feeds from anon, authenticated;
-- The hash is written, never read back.
grant select (tenant_id, id, property_id, unit_id, room_type_id, name, last_four, revoked_at, created_by, created_at,
  updated_at) on public.calendar_feeds to authenticated;
grant insert (property_id, unit_id, room_type_id, name, token_hash, last_four) on public.calendar_feeds to authenticated;
grant update (name, revoked_at) on public.calendar_feeds to authenticated;

-- A feed's URL is a key to a calendar, handed to another company: owners and admins give
-- it out and take it back, as they do API keys.
create policy "managers read calendar feeds" on public.calendar_feeds
  for select to authenticated
  using (tenant_id = (select private.request_tenant_id()) and (select private.request_is_manager()));
create policy "managers create calendar feeds" on public.calendar_feeds
  for insert to authenticated
  with check (
    tenant_id = (select private.request_tenant_id()) and (select private.request_is_manager())
    and created_by is not distinct from (select auth.uid())
  );
create policy "managers rename and revoke calendar feeds" on public.calendar_feeds
  for update to authenticated
  using (tenant_id = (select private.request_tenant_id()) and (select private.request_is_manager()))
  with check (tenant_id = (select private.request_tenant_id()) and (select private.request_is_manager()));

-- What a feed's token shows, read as the tables' owner since its subscriber has no
-- session: nothing for an unknown or revoked token; else one row naming the feed, then
-- one per event from 30 days ago to two years ahead on the property's clock. A unit's
-- events are its held stays ('stay') and its blocks ('block'), each with the row's id and
-- last change; a room type's are its runs of nights with no room left ('full'), each
-- named by its first night and stamped with the type's latest change of a held stay. The
-- token's hash is compared by the unique index: a guess that finds nothing learns nothing.
create or replace function private.calendar_feed_events(token_hash bytea)
returns table (kind text, event_id text, starts_on date, ends_on date, changed_at timestamptz)
language plpgsql stable security definer
set search_path = ''
as $$
declare
  feed public.calendar_feeds;
  today date;
  first_night date;
  last_night date;
begin
  select * into feed from public.calendar_feeds f where f.token_hash = calendar_feed_events.token_hash and f.revoked_at is null;
  if not found then
    return;
  end if;
  today := (select (now() at time zone p.timezone)::date from public.properties p
            where p.tenant_id = feed.tenant_id and p.id = feed.property_id);
  first_night := today - 30;
  last_night := today + 731;
  return query select 'feed'::text, feed.name, null::date, null::date, feed.updated_at;
  if feed.unit_id is not null then
    return query
      select e.* from (
        select 'stay'::text, r.id::text, r.check_in, r.check_out, r.updated_at
        from public.reservations r
        where r.tenant_id = feed.tenant_id and r.unit_id = feed.unit_id
          and r.status in ('pending', 'confirmed', 'checked_in')
          and r.check_out > first_night and r.check_in < last_night
        union all
        select 'block'::text, b.id::text, b.starts_on, b.ends_on, b.updated_at
        from public.unit_blocks b
        where b.tenant_id = feed.tenant_id and b.unit_id = feed.unit_id
          and b.ends_on > first_night and b.starts_on < last_night
      ) e (kind, event_id, starts_on, ends_on, changed_at)
      order by e.starts_on, e.event_id;
    return;
  end if;
  return query
    with full_nights as (
      select n as night, n - (row_number() over (order by n))::integer as run
      from unnest(private.room_type_shortfall(feed.tenant_id, feed.room_type_id, daterange(first_night, last_night, '[)'),
                                              null, null, 1)) n
    ),
    runs as (
      select min(f.night) as starts_on, max(f.night) + 1 as ends_on from full_nights f group by f.run
    )
    select 'full'::text, to_char(x.starts_on, 'YYYYMMDD'), x.starts_on, x.ends_on,
           coalesce((select max(r.updated_at) from public.reservations r
                     where r.tenant_id = feed.tenant_id and r.room_type_id = feed.room_type_id
                       and r.status in ('pending', 'confirmed', 'checked_in')
                       and r.check_in < x.ends_on and r.check_out > x.starts_on), feed.created_at)
    from runs x
    order by x.starts_on;
end
$$;
revoke all on function private.calendar_feed_events(bytea) from public;
