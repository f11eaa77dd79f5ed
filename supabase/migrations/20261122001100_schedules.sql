-- The database's recurring jobs, in pg_cron. Schedules are data in cron.job, so each
-- job is unscheduled by name before it is scheduled again, and running this file
-- twice leaves one row per job.

-- Expired idempotency keys, cleared every hour. A database without pg_cron applies
-- this as a no-op.
do $$
begin
  if not exists (select 1 from pg_available_extensions where name = 'pg_cron') then
    raise notice 'pg_cron is missing: expired idempotency keys are not purged on a schedule here';
    return;
  end if;
  create extension if not exists pg_cron;
  perform cron.unschedule(jobid) from cron.job where jobname = 'purge-idempotency-keys';
  perform cron.schedule('purge-idempotency-keys', '17 * * * *', 'select private.purge_expired_idempotency_keys()');
end
$$;

-- On a hosted project, pg_cron calls the notifications worker every ten seconds
-- through pg_net, with the project URL and the service role key read from Vault,
-- as Supabase documents for scheduling edge functions. Create the two secrets once:
--   select vault.create_secret('https://<project-ref>.supabase.co', 'project_url');
--   select vault.create_secret('<service role key>', 'service_role_key');
-- A database without pg_net or Vault (the local cluster, where the stack runs the
-- worker on the same cadence itself) leaves the worker unscheduled.
do $$
begin
  if not exists (select 1 from pg_available_extensions where name = 'pg_net')
     or not exists (select 1 from pg_namespace where nspname = 'vault')
     or not exists (select 1 from pg_available_extensions where name = 'pg_cron') then
    raise notice 'pg_net, Vault or pg_cron is missing: the notifications worker is not scheduled here';
    return;
  end if;
  create extension if not exists pg_net;
  create extension if not exists pg_cron;
  perform cron.unschedule(jobid) from cron.job where jobname = 'notifications-worker';
  perform cron.schedule('notifications-worker', '10 seconds', $job$
    select net.http_post(
      url := (select decrypted_secret from vault.decrypted_secrets where name = 'project_url')
             || '/functions/v1/notifications-worker',
      headers := jsonb_build_object(
        'content-type', 'application/json',
        'authorization', 'Bearer ' || (select decrypted_secret from vault.decrypted_secrets where name = 'service_role_key')),
      body := '{}'::jsonb,
      timeout_milliseconds := 55000)
  $job$);
end
$$;
