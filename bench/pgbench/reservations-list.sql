-- GET /v1/reservations?limit=20 as the database sees it (pgbench -M prepared, so every
-- :name is a bound parameter, as the API binds them): the request scope's one statement
-- (src/tenancy/request-scope.ts), then the page the reservations list runs
-- (src/reservations/queries.ts through src/db/pagination.ts), in one transaction.
-- bench/run.ts defines :claims, :tenant, :session and :user for the bench owner.
\set limit 20
\set offset 0
BEGIN;
select set_config('request.jwt.claims', :claims, true),
       set_config('role', 'authenticated', true),
       set_config('app.tenant_id', :tenant, true),
       private.session_is_active(:session::uuid, :user::uuid) as active,
       private.request_member_role() as role;
select "id", "property_id" as "propertyId", "unit_id" as "unitId", "guest_id" as "guestId", "rate_plan_id" as "ratePlanId", "confirmation_code" as "confirmationCode", "check_in" as "checkIn", "check_out" as "checkOut", "adults", "children", "status", "total_amount" as "totalAmount", "currency", "amount_paid" as "amountPaid", "balance", "source", "external_reference" as "externalReference", "notes", "cancellation_reason" as "cancellationReason", "confirmed_at" as "confirmedAt", "checked_in_at" as "checkedInAt", "checked_out_at" as "checkedOutAt", "cancelled_at" as "cancelledAt", "no_show_at" as "noShowAt", "created_at" as "createdAt", "updated_at" as "updatedAt", (select count(*) from (select 1 as "one" from "reservations") as matching) as "__total" from "reservations" order by "check_in", "id" limit :limit offset :offset;
COMMIT;
