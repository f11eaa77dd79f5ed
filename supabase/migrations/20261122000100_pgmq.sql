-- The notification pipeline's queue. Hosted Supabase ships pgmq; the local stack
-- installs its own build of the same API (local/pgmq).
create extension if not exists pgmq;
