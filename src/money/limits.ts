// Amounts are bigint minor units in Postgres, and clients read them as numbers, exact only up
// to 2^53 - 1. A single amount (a total, a payment, a payment link) is at most MAX_AMOUNT,
// 10^12 (ten billion in a currency of cents); a nightly price at most MAX_NIGHTLY_PRICE, so
// 365 nights of it stay within 10^12; and the payments of one reservation add up to at most
// MAX_AMOUNT, so its balance lies within -10^12 and 10^12. The database holds the same
// (supabase/schemas/reservations.sql, properties.sql and payments.sql).
export const MAX_AMOUNT = 1_000_000_000_000;
// The most a rate plan charges for a night, in minor units: 365 nights of it stay within MAX_AMOUNT.
export const MAX_NIGHTLY_PRICE = 1_000_000_000;
