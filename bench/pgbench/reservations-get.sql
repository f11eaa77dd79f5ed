-- GET /v1/reservations/{id} as the database sees it (pgbench -M prepared): the request
-- scope's one statement (src/tenancy/request-scope.ts), then findReservation
-- (src/reservations/queries.ts), in one transaction. The id is one of the tenant's
-- 1,000, at random per transaction like the HTTP run's; pgbench cannot build text, so
-- the uuid is built in SQL from bench/sql/seed.sql's pattern, the one difference from
-- the API's statement (which binds the id as text).
\set r random(1, 1000)
BEGIN;
select set_config('request.jwt.claims', :claims, true),
       set_config('role', 'authenticated', true),
       set_config('app.tenant_id', :tenant, true),
       private.session_is_active(:session::uuid, :user::uuid) as active,
       private.request_member_role() as role;
select "id", "property_id" as "propertyId", "unit_id" as "unitId", "guest_id" as "guestId", "rate_plan_id" as "ratePlanId", "confirmation_code" as "confirmationCode", "check_in" as "checkIn", "check_out" as "checkOut", "adults", "children", "status", "total_amount" as "totalAmount", "currency", "amount_paid" as "amountPaid", "balance", "source", "external_reference" as "externalReference", "notes", "cancellation_reason" as "cancellationReason", "confirmed_at" as "confirmedAt", "checked_in_at" as "checkedInAt", "checked_out_at" as "checkedOutAt", "cancelled_at" as "cancelledAt", "no_show_at" as "noShowAt", "created_at" as "createdAt", "updated_at" as "updatedAt" from "reservations" where "id" = ('b5e' || lpad(:r::text, 5, '0') || '-0000-4000-8000-' || :tenant_digits)::uuid;
COMMIT;
