-- Helpers the API calls inside a request's transaction. They read Supabase Auth's
-- tables, which the request's role may not, so they run as their owner with an
-- empty search_path.
create schema if not exists private;
revoke all on schema private from public;
grant usage on schema private to authenticated, service_role;

-- A signed-out or expired session no longer exists in auth.sessions, so its still
-- unexpired access token is refused at once.
create or replace function private.session_is_active(session_id uuid, user_id uuid)
returns boolean
language plpgsql stable security definer set search_path = ''
as $$
begin
  return exists (
    select 1
    from auth.sessions s
    where s.id = session_is_active.session_id
      and s.user_id = session_is_active.user_id
      and (s.not_after is null or s.not_after > now())
  );
end
$$;

create or replace function private.current_user_profile()
returns table (id uuid, email text, full_name text, created_at timestamptz)
language plpgsql stable security definer set search_path = ''
as $$
begin
  return query
    select u.id, u.email::text, u.raw_user_meta_data ->> 'full_name', u.created_at
    from auth.users u
    where u.id = auth.uid();
end
$$;

revoke all on function private.session_is_active(uuid, uuid) from public;
revoke all on function private.current_user_profile() from public;
grant execute on function private.session_is_active(uuid, uuid) to authenticated, service_role;
grant execute on function private.current_user_profile() to authenticated, service_role;
