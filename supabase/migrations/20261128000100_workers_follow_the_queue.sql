-- The schedule's runs of the two queue workers follow the queue: pg_cron starts one every
-- ten seconds, and each takes jobs as they come until its budget (8 s) is spent, looking
-- again a quarter second after finding the queue empty, instead of ending there. A job
-- enqueued between two runs no longer waits up to ten seconds for the next one
-- (src/db/queue-claims.ts; the body's `follow`, src/http/worker-handler.ts). A caller's
-- run without the body still ends when the queue is empty. Where the jobs were not
-- scheduled (no pg_net or Vault: the local cluster, whose scheduler asks the same), this
-- changes nothing.
do $$
declare
  worker text;
begin
  if not exists (select 1 from pg_namespace where nspname = 'cron') then
    return;
  end if;
  foreach worker in array array['notifications-worker', 'webhooks-worker'] loop
    perform cron.alter_job(job.jobid, command := format($job$
    select net.http_post(
      url := (select decrypted_secret from vault.decrypted_secrets where name = 'project_url')
             || '/functions/v1/%s',
      headers := jsonb_build_object(
        'content-type', 'application/json',
        'authorization', 'Bearer ' || (select decrypted_secret from vault.decrypted_secrets where name = 'service_role_key')),
      body := '{"follow": true}'::jsonb,
      timeout_milliseconds := 55000)
  $job$, worker))
    from cron.job as job
    where job.jobname = worker;
  end loop;
end
$$;
