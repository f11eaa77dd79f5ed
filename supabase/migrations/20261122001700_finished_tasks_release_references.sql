-- A done or cancelled task still lets go of what it points to: deleting a reservation
-- or removing a member sets the task's reference to null through the foreign key, and
-- that update must not be refused as an edit of a finished task. A client's own
-- update of a finished task is still refused.
create or replace function private.task_before_write()
returns trigger
language plpgsql
set search_path = ''
as $$
declare
  next_statuses text[];
begin
  if tg_op = 'INSERT' then
    if new.status not in ('open', 'in_progress') then
      raise exception 'a task starts open or in_progress, not %', new.status using errcode = '23514';
    end if;
    new.started_at := case when new.status = 'in_progress' then now() end;
    new.completed_at := null;
    new.cancelled_at := null;
    return new;
  end if;

  if new.status is distinct from old.status then
    next_statuses := case old.status
      when 'open' then array['in_progress', 'done', 'cancelled']
      when 'in_progress' then array['open', 'done', 'cancelled']
      else array[]::text[]
    end;
    if not (new.status = any (next_statuses)) then
      raise exception 'a % task cannot become %', old.status, new.status
        using errcode = 'PT409',
              hint = case when cardinality(next_statuses) = 0 then format('%s is final', old.status)
                          else format('allowed next: %s', array_to_string(next_statuses, ', ')) end;
    end if;
    case new.status
      when 'in_progress' then new.started_at := coalesce(old.started_at, now());
      when 'done' then new.completed_at := now();
      when 'cancelled' then new.cancelled_at := now();
      else null;
    end case;
  elsif old.status in ('done', 'cancelled') and not (
          -- Nested in the foreign key's own trigger: only a reference going to null.
          pg_trigger_depth() > 1
          and (new.assignee_id is null or new.assignee_id = old.assignee_id)
          and (new.reservation_id is null or new.reservation_id = old.reservation_id)
          and (to_jsonb(new) - array['assignee_id', 'reservation_id', 'updated_at'])
              = (to_jsonb(old) - array['assignee_id', 'reservation_id', 'updated_at'])) then
    raise exception 'a % task can no longer change', old.status using errcode = 'PT409';
  end if;
  return new;
end
$$;
