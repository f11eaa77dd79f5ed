-- The guest search sorts and counts its matches where it finds them. Before, a function
-- named every match's id and the list read each of those rows again under RLS to count
-- and sort them: on a tenant of 20,000 guests a search matching 1,111 spent most of its
-- time reading rows it then dropped. The page's function takes the rows the trigram index
-- found, sorts them as the list does and names the page's ids, in order, with the count
-- of all of them; the list reads those few rows under RLS.
--
-- It runs as the table's owner for the reason private.guest_ids_matching did (RLS keeps
-- an ILIKE from the index: supabase/migrations/20261129000100_large_tenant_lists.sql),
-- and keeps to what the members' read policy lets a caller see: the request's tenant, to
-- a member of it. The total is what that policy would let the caller count.
--
-- The matches are materialized before they are sorted: asked for the first rows in the
-- list's order, the planner would otherwise walk guests_tenant_name_idx through the
-- whole tenant looking for them, ten times slower on a common term.
create or replace function private.guest_search_page(pattern text, page_limit integer, page_offset integer)
returns table (ids uuid[], total bigint)
language plpgsql stable security definer
set search_path = ''
rows 1
as $$
begin
  return query
    with matching as materialized (
      select g.id, g.last_name, g.first_name
      from public.guests g
      where g.tenant_id = (select private.request_tenant_id())
        and (select private.request_is_member())
        and (g.first_name ilike pattern or g.last_name ilike pattern or g.email ilike pattern)
    )
    select array(
             select m.id from matching m
             order by lower(m.last_name), lower(m.first_name), m.id
             limit page_limit offset page_offset),
           (select count(*) from matching);
end
$$;

revoke all on function private.guest_search_page(text, integer, integer) from public;
grant execute on function private.guest_search_page(text, integer, integer) to authenticated;

drop function private.guest_ids_matching(text);
