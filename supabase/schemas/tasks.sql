-- Housekeeping and maintenance work at a property. Staff create and work
-- tasks; the database keeps their lifecycle and makes the cleaning task when a
-- guest checks out.
create table public.tasks (
  tenant_id uuid not null default private.request_tenant_id()
    constraint tasks_tenant_id_fkey references public.tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  property_id uuid not null,
  unit_id uuid,
  reservation_id uuid,
  type text not null constraint tasks_type_check check (type in ('cleaning', 'maintenance', 'inspection', 'other')),
  title text not null constraint tasks_title_check check (length(btrim(title)) between 1 and 200),
  description text constraint tasks_description_check check (length(description) <= 4000),
  assignee_id uuid,
  due_at timestamptz,
  priority text not null default 'normal'
    constraint tasks_priority_check check (priority in ('low', 'normal', 'high', 'urgent')),
  status text not null default 'open'
    constraint tasks_status_check check (status in ('open', 'in_progress', 'done', 'cancelled')),
  started_at timestamptz,
  completed_at timestamptz,
  cancelled_at timestamptz,
  created_by uuid default auth.uid() constraint tasks_created_by_fkey references auth.users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint tasks_pkey primary key (tenant_id, id),
  constraint tasks_tenant_id_property_id_fkey
    foreign key (tenant_id, property_id) references public.properties (tenant_id, id),
  constraint tasks_tenant_id_property_id_unit_id_fkey
    foreign key (tenant_id, property_id, unit_id) references public.units (tenant_id, property_id, id),
  constraint tasks_tenant_id_property_id_reservation_id_fkey foreign key (tenant_id, property_id, reservation_id)
    references public.reservations (tenant_id, property_id, id) on delete set null (reservation_id),
  -- Only a member of the tenant can be assigned; leaving the tenant unassigns.
  constraint tasks_tenant_id_assignee_id_fkey foreign key (tenant_id, assignee_id)
    references public.tenant_memberships (tenant_id, user_id) on delete set null (assignee_id)
);
create index tasks_tenant_status_due_idx on public.tasks (tenant_id, status, due_at);
create index tasks_tenant_property_idx on public.tasks (tenant_id, property_id, status);
create index tasks_tenant_assignee_idx on public.tasks (tenant_id, assignee_id) where assignee_id is not null;
create index tasks_tenant_unit_idx on public.tasks (tenant_id, unit_id) where unit_id is not null;
create index tasks_tenant_reservation_idx on public.tasks (tenant_id, reservation_id) where reservation_id is not null;

-- A done or cancelled task can no longer change, with one exception: it still lets
-- go of what it points to. Deleting a reservation or removing a member sets the
-- task's reference to null through the foreign key, and that update must not be
-- refused as an edit of a finished task; a client's own update of one still is.
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
        using errcode = 'PT409', constraint = 'tasks_status_transition',
              detail = jsonb_build_object('currentStatus', old.status, 'requestedStatus', new.status,
                                          'allowedStatuses', to_jsonb(next_statuses))::text,
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
    raise exception 'a % task can no longer change', old.status
      using errcode = 'PT409', constraint = 'tasks_final_fixed', detail = jsonb_build_object('currentStatus', old.status)::text;
  end if;
  return new;
end
$$;

create trigger task_before_write before insert or update on public.tasks
  for each row execute function private.task_before_write();
create trigger forbid_tenant_change before update of tenant_id, created_at, created_by on public.tasks
  for each row execute function private.forbid_tenant_change();
create trigger touch_updated_at before update on public.tasks
  for each row execute function private.touch_updated_at();

-- Runs as owner: checking a guest out must always leave a cleaning task behind.
-- Due when the property's next arrivals may check in that day, in its timezone.
create or replace function private.create_cleaning_task_on_checkout()
returns trigger
language plpgsql security definer
set search_path = ''
as $$
begin
  insert into public.tasks (tenant_id, property_id, unit_id, reservation_id, type, title, due_at, created_by)
  select new.tenant_id, new.property_id, new.unit_id, new.id, 'cleaning',
         format('Clean %s after %s', u.name, new.confirmation_code),
         (new.check_out + p.check_in_time) at time zone p.timezone,
         auth.uid()
  from public.properties p
  join public.units u on u.tenant_id = p.tenant_id and u.id = new.unit_id
  where p.tenant_id = new.tenant_id and p.id = new.property_id;
  return null;
end
$$;

create trigger create_cleaning_task_on_checkout after update of status on public.reservations
  for each row when (new.status = 'checked_out' and old.status is distinct from 'checked_out')
  execute function private.create_cleaning_task_on_checkout();

alter table public.tasks enable row level security;
revoke all on public.tasks from anon;

create policy "members read tasks" on public.tasks
  for select to authenticated
  using (tenant_id = (select private.request_tenant_id()) and (select private.request_is_member()));
create policy "members create tasks" on public.tasks
  for insert to authenticated
  with check (
    tenant_id = (select private.request_tenant_id()) and (select private.request_is_member())
    and created_by is not distinct from (select auth.uid())
  );
create policy "members update tasks" on public.tasks
  for update to authenticated
  using (tenant_id = (select private.request_tenant_id()) and (select private.request_is_member()))
  with check (tenant_id = (select private.request_tenant_id()) and (select private.request_is_member()));
create policy "managers delete tasks" on public.tasks
  for delete to authenticated
  using (tenant_id = (select private.request_tenant_id()) and (select private.request_is_manager()));
