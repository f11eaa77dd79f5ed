-- The same read as external-get.sql with the rate limiter, as the API sends it: the
-- request counted first, in a statement of its own outside the transaction
-- (private.admit_api_key_request; the API writes it to the connection together with BEGIN
-- and the scope's statement, where pgbench waits for its answer first), from the gateway's
-- client address (:address). The bench key's limit is far above what a run sends, so
-- every request is counted and admitted: the cost measured is the counter's upsert on the
-- key's one row, which every client of the run updates.
\set r random(1, 1000)
select outcome, policy, quota, window_seconds as "windowSeconds", remaining, reset_seconds as "resetSeconds"
from private.admit_api_key_request(:key_id, decode(:secret_hash, 'hex'), :address);
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
