-- The expansion of notification events no longer lets one bad event hold back the
-- others. The batch's fan-out is one statement for all its events, so an event whose
-- notifications cannot be written (a constraint, a trigger refusing them) failed the
-- batch, and the same events came back on every run. Now the batch falls back to one
-- event at a time, and an event that still fails is archived with a warning naming the
-- error.

-- Up to `max_events` events off their queue, made into notifications, and deleted, in
-- the caller's transaction: if it fails, the events are back at once, and nothing of them
-- was made. An event that is not one this project sends is archived (pgmq.a_notification_events
-- keeps it for an operator); one whose reservation or access code is gone is deleted with
-- the others, having reached nobody. Should the batch's fan-out fail, each event is made
-- alone, and one that still fails is archived with a warning naming the error, so that
-- no event can hold back the ones behind it. Returns how many were expanded, and
-- dropped either way.
create or replace function private.expand_notification_events(max_events integer)
returns table (expanded integer, dropped integer)
language plpgsql security definer
set search_path = ''
as $$
declare
  uuid_pattern constant text := '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
  taken record;
  events jsonb := '[]';
  finished bigint[] := '{}';
  malformed bigint[] := '{}';
  failed bigint[] := '{}';
  reached integer;
begin
  for taken in
    select q.msg_id, q.message as m, q.enqueued_at
    from pgmq.read('notification_events', 60, max_events) q
  loop
    if jsonb_typeof(taken.m) = 'object'
       and coalesce(taken.m ->> 'tenantId' ~ uuid_pattern, false)
       and coalesce(taken.m ->> 'reservationId' ~ uuid_pattern, false)
       and coalesce(taken.m ->> 'accessCodeId' ~ uuid_pattern, jsonb_typeof(taken.m -> 'accessCodeId') is distinct from 'string')
       and coalesce(taken.m ->> 'templateKey' in ('checkin_reminder', 'checkout_summary', 'reservation_cancelled', 'access_code_delivery'), false)
    then
      finished := finished || taken.msg_id;
      events := events || jsonb_build_object(
        'tenantId', taken.m -> 'tenantId', 'templateKey', taken.m -> 'templateKey', 'reservationId', taken.m -> 'reservationId',
        'accessCodeId', taken.m -> 'accessCodeId', 'occurredAt', taken.enqueued_at);
    else
      malformed := malformed || taken.msg_id;
    end if;
  end loop;
  expanded := 0;
  if cardinality(finished) > 0 then
    begin
      select f.events_reached into expanded from private.fan_out_notification_events(events) f;
    exception when others then
      for i in 1 .. cardinality(finished) loop
        begin
          select f.events_reached into reached from private.fan_out_notification_events(jsonb_build_array(events -> (i - 1))) f;
          expanded := expanded + reached;
        exception when others then
          raise warning 'notification event % could not be made into notifications (%: %); archived',
            finished[i], sqlstate, sqlerrm;
          failed := failed || finished[i];
        end;
      end loop;
      finished := array(select f from unnest(finished) f where f <> all (failed));
    end;
    perform pgmq.delete('notification_events', finished);
  end if;
  if cardinality(malformed) > 0 then
    raise warning 'notification events % are not events this project sends; archived', malformed;
  end if;
  if cardinality(malformed || failed) > 0 then
    perform pgmq.archive('notification_events', malformed || failed);
  end if;
  dropped := cardinality(finished) - expanded + cardinality(malformed) + cardinality(failed);
  return next;
end
$$;
