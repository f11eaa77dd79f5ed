-- The stay's own rules, checked first and named: check-out after check-in and at most
-- 365 nights (the stay range cannot be built otherwise, and a rate plan's limits
-- would be reported against a negative count); a currency that is not the rate plan's;
-- and a guest who has arrived keeps their arrival date.
create or replace function private.reservation_before_write()
returns trigger
language plpgsql
set search_path = ''
as $$
declare
  next_statuses text[];
  plan public.rate_plans;
  unit_capacity integer;
  property_currency text;
  nights integer := new.check_out - new.check_in;
begin
  -- Before anything that counts nights: the stay column cannot even be built otherwise.
  if nights <= 0 then
    raise exception 'check-out (%) must be after check-in (%)', new.check_out, new.check_in using errcode = '23514';
  end if;
  if nights > 365 then
    raise exception 'a stay is at most 365 nights, not %', nights using errcode = '23514';
  end if;

  if tg_op = 'INSERT' then
    if new.status not in ('pending', 'confirmed') then
      raise exception 'a reservation starts as pending or confirmed, not %', new.status using errcode = '23514';
    end if;
    new.amount_paid := 0;
    new.confirmed_at := case when new.status = 'confirmed' then now() end;
    new.checked_in_at := null;
    new.checked_out_at := null;
    new.cancelled_at := null;
    new.no_show_at := null;
    loop
      new.confirmation_code := private.random_code(8);
      exit when not exists (
        select 1 from public.reservations r
        where r.tenant_id = new.tenant_id and r.confirmation_code = new.confirmation_code);
    end loop;
    select p.currency into property_currency from public.properties p
    where p.tenant_id = new.tenant_id and p.id = new.property_id and p.status = 'active';
    if not found then
      raise exception 'property % is not an active property of this tenant', new.property_id using errcode = '23503';
    end if;
  else
    if new.amount_paid is distinct from old.amount_paid and pg_trigger_depth() = 1 then
      raise exception 'amount_paid is derived from payments and cannot be set' using errcode = '42501';
    end if;
    if new.confirmation_code is distinct from old.confirmation_code then
      raise exception 'confirmation_code cannot change' using errcode = '42501';
    end if;
    if old.status = 'checked_in' and new.check_in is distinct from old.check_in then
      raise exception 'a checked_in reservation cannot move its arrival date' using errcode = 'PT409',
        hint = 'The guest has arrived; change the check-out date instead.';
    end if;

    if new.status is distinct from old.status then
      next_statuses := case old.status
        when 'pending' then array['confirmed', 'cancelled']
        when 'confirmed' then array['checked_in', 'cancelled', 'no_show']
        when 'checked_in' then array['checked_out']
        else array[]::text[]
      end;
      if not (new.status = any (next_statuses)) then
        raise exception 'a % reservation cannot become %', old.status, new.status
          using errcode = 'PT409',
                hint = case when cardinality(next_statuses) = 0 then format('%s is final', old.status)
                            else format('allowed next: %s', array_to_string(next_statuses, ', ')) end;
      end if;
      case new.status
        when 'confirmed' then new.confirmed_at := now();
        when 'checked_in' then new.checked_in_at := now();
        when 'checked_out' then new.checked_out_at := now();
        when 'cancelled' then new.cancelled_at := now();
        when 'no_show' then new.no_show_at := now();
      end case;
    elsif old.status in ('checked_out', 'cancelled', 'no_show')
      and (new.property_id, new.unit_id, new.guest_id, new.rate_plan_id, new.check_in, new.check_out,
           new.adults, new.children, new.total_amount, new.currency)
          is distinct from
          (old.property_id, old.unit_id, old.guest_id, old.rate_plan_id, old.check_in, old.check_out,
           old.adults, old.children, old.total_amount, old.currency) then
      raise exception 'a % reservation can no longer change its stay or price', old.status using errcode = 'PT409';
    end if;
  end if;

  if new.status = 'checked_in' and new.unit_id is null then
    raise exception 'assign a unit before checking in' using errcode = '23514';
  end if;

  if new.rate_plan_id is not null and (tg_op = 'INSERT'
      or (new.rate_plan_id, new.check_in, new.check_out) is distinct from (old.rate_plan_id, old.check_in, old.check_out)) then
    select * into plan from public.rate_plans rp
    where rp.tenant_id = new.tenant_id and rp.id = new.rate_plan_id and rp.property_id = new.property_id;
    if not found then
      raise exception 'rate plan % does not belong to property %', new.rate_plan_id, new.property_id using errcode = '23503';
    end if;
    if not plan.active then
      raise exception 'rate plan % is not active', plan.code using errcode = '23514';
    end if;
    if new.currency is distinct from plan.currency and new.currency is not null then
      raise exception 'rate plan % is priced in currency %, not %', plan.code, plan.currency, new.currency using errcode = '23514';
    end if;
    if nights < plan.min_stay or nights > coalesce(plan.max_stay, nights) then
      raise exception 'rate plan % takes stays of % to % nights, not %',
        plan.code, plan.min_stay, coalesce(plan.max_stay::text, 'any number of'), nights using errcode = '23514';
    end if;
    new.currency := coalesce(new.currency, plan.currency);
  end if;

  -- On insert the property was read above; coalesce reads it again only for an update.
  new.currency := coalesce(new.currency, property_currency, (
    select p.currency from public.properties p where p.tenant_id = new.tenant_id and p.id = new.property_id));

  if new.unit_id is not null and (tg_op = 'INSERT'
      or (new.unit_id, new.adults, new.children) is distinct from (old.unit_id, old.adults, old.children)) then
    select u.capacity into unit_capacity from public.units u
    where u.tenant_id = new.tenant_id and u.id = new.unit_id and u.property_id = new.property_id;
    if not found then
      raise exception 'unit % does not belong to property %', new.unit_id, new.property_id using errcode = '23503';
    end if;
    if new.adults + new.children > unit_capacity then
      raise exception 'the unit sleeps %, not %', unit_capacity, new.adults + new.children using errcode = '23514';
    end if;
  end if;

  return new;
end
$$;
