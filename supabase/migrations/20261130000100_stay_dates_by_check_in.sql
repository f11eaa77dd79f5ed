-- The reservation list's dates read one range of a btree, in the list's order.
--
-- A stay meets the dates when it checks out after `from` and checks in before `to`. Both
-- are comparisons of dates, which are leakproof, so under RLS they can bound an index
-- scan; what no btree can bound is "checks out after `from`" for the stays that checked in
-- long before it. No stay of a tenant is longer than its longest, so every stay that meets
-- `from` checked in at most that many days before it: the list adds that lower bound on
-- check-in (src/reservations/queries.ts), and the longest stay is one step down an index
-- of stay lengths. A page is then the first rows of (tenant_id, check_in, id) from that
-- bound, and its count an index-only scan of the same range, check-out included in the
-- index for the filter.
--
-- This replaces private.reservation_ids_during, which found the stays through a GiST
-- index from a function run as the owner and had the list read every one of them by id
-- to sort them: on a tenant of 100,000 reservations, 2,393 stays read and sorted for a
-- page of 20. The GiST index on the stay goes with it; the exclusion constraint keeps
-- its own.

create index reservations_tenant_check_in_id_idx on public.reservations (tenant_id, check_in, id) include (check_out);
drop index public.reservations_tenant_check_in_idx;
create index reservations_tenant_stay_length_idx on public.reservations (tenant_id, (check_out - check_in));

drop function private.reservation_ids_during(date, date);
drop index public.reservations_tenant_stay_idx;

-- The guest search's function, with the per-request helpers in sub-selects: called
-- plainly they were evaluated again for every candidate row the trigram index returned
-- (1,111 calls on the large tenant's search, most of its time).
create or replace function private.guest_ids_matching(pattern text)
returns setof uuid
language plpgsql stable security definer
set search_path = ''
rows 100
as $$
begin
  return query
    select g.id
    from public.guests g
    where g.tenant_id = (select private.request_tenant_id())
      and (select private.request_is_member())
      and (g.first_name ilike pattern or g.last_name ilike pattern or g.email ilike pattern);
end
$$;
