-- The notification pipeline's queue. Hosted Supabase ships pgmq; the local stack
-- installs pgmq's own release files from the pgmq crate (local/pgmq-crate).
create extension if not exists pgmq;
