-- Removes the benchmark's tenants :first..:last and everything in them, and the queue's
-- jobs that name them. The bulky tables go first without triggers (as they were
-- seeded); deleting the tenants themselves then cascades, with every trigger, over
-- whatever else a run left in them.
\set ON_ERROR_STOP on
set synchronous_commit = off;

create temporary table bench_gone as
select ('b1e00000-0000-4000-8000-' || lpad(n::text, 12, '0'))::uuid as tenant_id
from generate_series(:first::int, :last::int) n;

delete from pgmq.q_notifications q using bench_gone g where (q.message ->> 'tenantId') = g.tenant_id::text;

begin;
set local session_replication_role = replica;
delete from public.notifications x using bench_gone g where x.tenant_id = g.tenant_id;
delete from public.tasks x using bench_gone g where x.tenant_id = g.tenant_id;
delete from public.reservations x using bench_gone g where x.tenant_id = g.tenant_id;
delete from public.reservation_status_tallies x using bench_gone g where x.tenant_id = g.tenant_id;
delete from public.guests x using bench_gone g where x.tenant_id = g.tenant_id;
delete from public.rate_plan_days x using bench_gone g where x.tenant_id = g.tenant_id;
delete from public.rate_plans x using bench_gone g where x.tenant_id = g.tenant_id;
delete from public.unit_blocks x using bench_gone g where x.tenant_id = g.tenant_id;
delete from public.units x using bench_gone g where x.tenant_id = g.tenant_id;
delete from public.room_types x using bench_gone g where x.tenant_id = g.tenant_id;
delete from public.properties x using bench_gone g where x.tenant_id = g.tenant_id;
commit;

delete from public.tenants x using bench_gone g where x.id = g.tenant_id;
