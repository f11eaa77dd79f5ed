-- Lists that stay fast on a tenant with a hundred thousand reservations.
--
-- The status filter gets an index of its own, in the list's order, so a page is the
-- first rows of one index range and the count an index-only scan.
--
-- The date filter and the guest search need operators btree cannot serve: a stay
-- overlapping a range (GiST on the stay) and a substring anywhere in a name or address
-- (trigram GIN). Under RLS neither index is used: the planner puts a policy's quals
-- before any qual whose operator is not leakproof, and `&&` on ranges and ILIKE are not,
-- so such a qual can only filter the rows the tenant's own index found (docs/data-model.md).
-- Marking them leakproof takes a superuser, which a hosted project does not have. So the
-- two filters go through a function that runs as the tables' owner and names the
-- candidates: the ids of the request's tenant whose rows pass the filter, found with the
-- new indexes. PL/pgSQL, as every helper a request calls is, so each connection keeps
-- their plans (supabase/tests/performance/helpers_keep_their_plans.test.sql). The list itself still reads the rows under RLS, by those ids, and keeps
-- the filter's own conditions, so what a caller may see is decided by the policies alone.

create extension if not exists pg_trgm with schema extensions;
-- For the tenant's uuid in the same GIN index as the trigrams.
create extension if not exists btree_gin with schema extensions;

create index reservations_tenant_status_check_in_idx on public.reservations (tenant_id, status, check_in, id);
create index reservations_tenant_stay_idx on public.reservations using gist (tenant_id, stay);
create index guests_tenant_search_idx on public.guests using gin (
  tenant_id, first_name extensions.gin_trgm_ops, last_name extensions.gin_trgm_ops, email extensions.gin_trgm_ops);

-- The request tenant's reservations whose stay may meet the list's dates: check-out after
-- `from` and check-in before `to` (either may be null). When from < to that is exactly an
-- overlap with [from, to); otherwise every such stay holds the night of `from`, and the
-- range asked for covers it, so the list's own conditions decide.
create or replace function private.reservation_ids_during(from_date date, to_date date)
returns setof uuid
language plpgsql stable security definer
set search_path = ''
rows 100
as $$
begin
  return query
    select r.id
    from public.reservations r
    where r.tenant_id = private.request_tenant_id()
      and (private.request_is_member() or private.request_api_key_id() is not null)
      and r.stay && daterange(
        from_date,
        case when from_date is null or to_date is null or from_date < to_date then to_date else from_date + 1 end,
        '[)');
end
$$;

-- The request tenant's guests whose first name, last name or email is ILIKE `pattern`.
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
    where g.tenant_id = private.request_tenant_id()
      and private.request_is_member()
      and (g.first_name ilike pattern or g.last_name ilike pattern or g.email ilike pattern);
end
$$;

revoke all on function private.reservation_ids_during(date, date), private.guest_ids_matching(text) from public;
grant execute on function private.reservation_ids_during(date, date) to authenticated, api_integration;
grant execute on function private.guest_ids_matching(text) to authenticated;
