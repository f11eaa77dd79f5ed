-- GET /v1/external/reservations/{id} as the database sees it without the rate limiter
-- (pgbench -M prepared): the integration scope's one statement (src/external/
-- integration-scope.ts: the key checked, the tenant, property and role set from its row),
-- then findReservation (src/reservations/queries.ts), in one transaction. bench/external.ts
-- defines :key_id and :secret_hash (hex) for the bench key and :tenant_digits; the id is
-- one of the tenant's 1,000 at random, built in SQL from bench/sql/seed.sql's pattern.
\set r random(1, 1000)
BEGIN;
select k.state,
       set_config('app.tenant_id', coalesce(k.tenant_id::text, ''), true),
       set_config('app.property_id', coalesce(k.property_id::text, ''), true),
       set_config('app.api_key_id', coalesce(k.api_key_id::text, ''), true),
       set_config('role', 'api_integration', true),
       k.tenant_id as "tenantId", k.property_id as "propertyId", k.api_key_id as "apiKeyId"
from private.authenticate_api_key(:key_id, decode(:secret_hash, 'hex')) k;
select "id", "property_id" as "propertyId", "unit_id" as "unitId", "guest_id" as "guestId", "rate_plan_id" as "ratePlanId", "confirmation_code" as "confirmationCode", "check_in" as "checkIn", "check_out" as "checkOut", "adults", "children", "status", "total_amount" as "totalAmount", "currency", "amount_paid" as "amountPaid", "balance", "source", "external_reference" as "externalReference", "notes", "cancellation_reason" as "cancellationReason", "confirmed_at" as "confirmedAt", "checked_in_at" as "checkedInAt", "checked_out_at" as "checkedOutAt", "cancelled_at" as "cancelledAt", "no_show_at" as "noShowAt", "created_at" as "createdAt", "updated_at" as "updatedAt" from "reservations" where "id" = ('b5e' || lpad(:r::text, 5, '0') || '-0000-4000-8000-' || :tenant_digits)::uuid;
COMMIT;
