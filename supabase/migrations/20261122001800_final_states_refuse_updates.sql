-- A finished payment link or a revoked door code refuses every update, a repeated
-- cancel or revoke included: the API's actions then answer 409 naming the status
-- rather than succeeding again with a new updated_at.

create or replace function private.payment_link_before_write()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  if tg_op = 'INSERT' then
    if new.status <> 'active' then
      raise exception 'a payment link starts active' using errcode = '23514';
    end if;
    new.token := translate(encode(extensions.gen_random_bytes(24), 'base64'), '+/', '-_');
    new.paid_at := null;
    new.cancelled_at := null;
    if new.currency is null then
      select r.currency into new.currency from public.reservations r
      where r.tenant_id = new.tenant_id and r.id = new.reservation_id;
    end if;
    if new.url is null then
      select rtrim(t.payment_page_base_url, '/') || '/' || new.token into new.url
      from public.tenants t where t.id = new.tenant_id;
    end if;
    return new;
  end if;

  if old.status <> 'active' then
    raise exception 'a % payment link can no longer change', old.status
      using errcode = 'PT409', hint = format('%s is final', old.status);
  end if;
  if (new.reservation_id, new.amount, new.currency, new.token) is distinct from
     (old.reservation_id, old.amount, old.currency, old.token) then
    raise exception 'a payment link''s reservation, amount, currency and token cannot change'
      using errcode = 'PT409', hint = 'Cancel it and create another.';
  end if;
  -- From active, every other status is a step forward.
  if new.status is distinct from old.status then
    case new.status
      when 'paid' then new.paid_at := now();
      when 'cancelled' then new.cancelled_at := now();
      else null;
    end case;
  end if;
  return new;
end
$$;

create or replace function private.access_code_before_write()
returns trigger
language plpgsql
set search_path = ''
as $$
declare
  stay record;
begin
  if tg_op = 'INSERT' then
    select r.property_id, r.status,
           (r.check_in + p.check_in_time) at time zone p.timezone as opens,
           (r.check_out + p.check_out_time) at time zone p.timezone as closes
      into stay
    from public.reservations r
    join public.properties p on p.tenant_id = r.tenant_id and p.id = r.property_id
    where r.tenant_id = new.tenant_id and r.id = new.reservation_id;
    if not found then
      raise exception 'reservation % is not a reservation of this tenant', new.reservation_id using errcode = '23503';
    end if;
    if stay.status not in ('pending', 'confirmed', 'checked_in') then
      raise exception 'a % reservation gets no access code', stay.status using errcode = 'PT409';
    end if;
    if new.status <> 'active' then
      raise exception 'an access code starts active' using errcode = '23514';
    end if;
    new.property_id := stay.property_id;
    new.valid_from := coalesce(new.valid_from, stay.opens);
    new.valid_until := coalesce(new.valid_until, stay.closes);
    new.revoked_at := null;
    return new;
  end if;

  if (new.reservation_id, new.property_id, new.code) is distinct from (old.reservation_id, old.property_id, old.code) then
    raise exception 'an access code''s reservation and code cannot change'
      using errcode = 'PT409', hint = 'Revoke it and create another.';
  end if;
  if old.status = 'revoked' then
    raise exception 'a revoked access code cannot change' using errcode = 'PT409';
  end if;
  if new.status = 'revoked' and old.status = 'active' then
    new.revoked_at := now();
  end if;
  return new;
end
$$;
