-- Demo data for a fresh local stack (`npm run stack:reset`). The demo tenant,
-- its property and reservations arrive with the tenancy schema (issue 3);
-- until then the seed has nothing to load.
select 1;
