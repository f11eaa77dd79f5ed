-- The maxima of amounts. Amounts are bigint minor units here, but every client (and the
-- API itself, which refuses to read a bigint it cannot hold exactly) reads them as
-- JavaScript numbers, exact only up to 2^53 - 1. So no amount, and no sum the schema
-- keeps, may pass that:
-- - a nightly price is at most 10^9, so the default total of a stay (the price times at
--   most 365 nights) stays within 3.65 * 10^11;
-- - a reservation's total, a payment and a payment link are each at most 10^12;
-- - a reservation's amount_paid, the sum of its payments that apply_payment keeps, is at
--   most 10^12: a payment that would take it further is refused, whoever records it. So
--   the balance (total_amount - amount_paid) lies within -10^12 and 10^12.
-- 10^12 minor units is ten billion in a currency of cents. The API's schemas
-- (src/http/schemas.ts: MAX_AMOUNT, MAX_NIGHTLY_PRICE) take exactly the same, and
-- src/db/errors.ts answers each rule as a 422 naming the field a client sent.
--
-- A database that already holds a larger amount fails here, naming the constraint; such
-- rows are what these rules exist to prevent, and need an operator's repair first.
alter table public.rate_plans
  add constraint rate_plans_nightly_price_within_maximum check (nightly_price <= 1000000000);

alter table public.reservations
  add constraint reservations_total_amount_within_maximum check (total_amount <= 1000000000000),
  add constraint reservations_amount_paid_within_maximum check (amount_paid <= 1000000000000);

alter table public.payments
  add constraint payments_amount_within_maximum check (amount <= 1000000000000);

alter table public.payment_links
  add constraint payment_links_amount_within_maximum check (amount <= 1000000000000);
