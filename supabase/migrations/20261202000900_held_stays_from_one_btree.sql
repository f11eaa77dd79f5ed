-- A room type's held stays are read as a range of check-ins of one btree, by its inventory
-- as by availability; the GiST index on the stay goes.

SET local check_function_bodies = off;

DROP INDEX "public"."reservations_tenant_room_type_stay_idx";

CREATE OR REPLACE FUNCTION private.room_type_shortfall (
  for_tenant         uuid,
  of_room_type       uuid,
  over_nights        daterange,
  except_reservation uuid,
  except_block       uuid,
  more_stays         integer
)
  RETURNS date[]
  LANGUAGE plpgsql
  STABLE
  SET search_path TO ''
  AS $function$
begin
  return (
  with in_service as (
    select u.id from public.units u
    where u.tenant_id = for_tenant and u.room_type_id = of_room_type and u.status = 'active'
  ),
  held as (
    select night::date as night, count(*) as stays
    from public.reservations r
    cross join lateral generate_series(greatest(r.check_in, lower(over_nights)), least(r.check_out, upper(over_nights)) - 1,
                                       interval '1 day') night
    where r.tenant_id = for_tenant and r.room_type_id = of_room_type
      and r.status in ('pending', 'confirmed', 'checked_in') and r.id is distinct from except_reservation
      and r.check_in < upper(over_nights) and r.check_out > lower(over_nights)
      and r.check_in >= lower(over_nights) - (select coalesce(max(l.check_out - l.check_in), 0)
                                              from public.reservations l where l.tenant_id = for_tenant)
    group by 1
  ),
  blocked as (
    select night::date as night, count(*) as units
    from public.unit_blocks b
    join in_service u on u.id = b.unit_id
    cross join lateral generate_series(greatest(b.starts_on, lower(over_nights)), least(b.ends_on, upper(over_nights)) - 1,
                                       interval '1 day') night
    where b.tenant_id = for_tenant and b.nights && over_nights and b.id is distinct from except_block
    group by 1
  )
  select coalesce(array_agg(n.night order by n.night), '{}')
  from (select night::date as night
        from generate_series(lower(over_nights), upper(over_nights) - 1, interval '1 day') night) n
  left join held h on h.night = n.night
  left join blocked b on b.night = n.night
  where coalesce(h.stays, 0) + more_stays > (select count(*) from in_service) - coalesce(b.units, 0));
end
$function$;
