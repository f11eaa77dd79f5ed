-- Concurrent writes of overlapping stays on one unit: one wins and the others get
-- reservations_no_overlapping_stays (409), never a deadlock.
--
-- An exclusion constraint inserts the new index entry first and looks for conflicts
-- after. Two transactions that each inserted an overlapping stay then wait for each
-- other, and Postgres aborts one of them with 40P01 (a unique index would make the second
-- wait instead; exclusion constraints have no such path). So a write that puts a stay on
-- a unit's calendar first takes a lock on that calendar: the next writer waits until the
-- first commits or rolls back, and its own check then sees a committed stay.
--
-- The lock is an advisory transaction lock: it needs no privilege on units (staff may
-- book but not edit units), ends with the transaction, and so stays with the one server
-- connection a transaction pooler gives the transaction. Its keys are a class of its own
-- (the bytes "PMS" and 1) and a hash of the tenant and the unit; two units sharing a
-- hash only wait for each other now and then.
create function private.lock_unit_calendar()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  perform pg_catalog.pg_advisory_xact_lock(1347244801, pg_catalog.hashtext(new.tenant_id::text || '/' || new.unit_id::text));
  return new;
end;
$$;

comment on function private.lock_unit_calendar() is
  'Serializes writes of stays on one unit''s calendar, so that overlapping writes end in reservations_no_overlapping_stays rather than a deadlock.';

-- Only writes the exclusion constraint checks: a stay that occupies its unit.
create trigger lock_unit_calendar
  before insert or update of unit_id, check_in, check_out, status on public.reservations
  for each row
  when (new.unit_id is not null and new.status in ('pending', 'confirmed', 'checked_in'))
  execute function private.lock_unit_calendar();
