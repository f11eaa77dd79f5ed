import { z } from "zod";
import { pageQuery } from "../db/pagination.ts";
import { currency, id, minorUnits, oneOrMany, timestamp, timestampInput } from "../http/schemas.ts";

export const paymentMethods = ["card", "cash", "bank_transfer", "wallet", "other"] as const;
export const paymentSources = ["manual", "payment_link", "external"] as const;
export const paymentLinkStatuses = ["active", "paid", "expired", "cancelled"] as const;

export const recordPaymentBody = z.strictObject({
  amount: minorUnits.min(1),
  currency: currency.optional().meta({ description: "Must be the reservation's currency; defaults to it." }),
  method: z.enum(paymentMethods).default("card"),
  externalReference: z.string().min(1).max(200).optional(),
  receivedAt: timestampInput.optional(),
  notes: z.string().max(1000).optional(),
}).meta({ id: "PaymentCreate" });

export const payment = z.object({
  id,
  reservationId: id,
  paymentLinkId: id.nullable(),
  amount: minorUnits.min(1),
  currency,
  method: z.enum(paymentMethods),
  source: z.enum(paymentSources),
  externalReference: z.string().nullable(),
  receivedAt: timestamp,
  notes: z.string().nullable(),
  createdAt: timestamp,
  updatedAt: timestamp,
}).meta({ id: "Payment" });

export const listPaymentsQuery = z.strictObject({
  ...pageQuery,
  reservationId: id.optional(),
  source: oneOrMany(paymentSources).optional(),
});

export const createPaymentLinkBody = z.strictObject({
  amount: minorUnits.min(1).optional().meta({ description: "Defaults to the reservation's balance." }),
  description: z.string().max(500).optional(),
  expiresAt: timestampInput.optional().meta({ description: "Defaults to seven days from now." }),
}).meta({ id: "PaymentLinkCreate" });

export const paymentLink = z.object({
  id,
  reservationId: id,
  amount: minorUnits.min(1),
  currency,
  url: z.string().nullable().meta({ description: "The tenant's payment page for this link; null until the tenant sets paymentPageBaseUrl." }),
  description: z.string().nullable(),
  status: z.enum(paymentLinkStatuses),
  expiresAt: timestamp,
  paidAt: timestamp.nullable(),
  cancelledAt: timestamp.nullable(),
  createdAt: timestamp,
  updatedAt: timestamp,
}).meta({ id: "PaymentLink" });

export const listPaymentLinksQuery = z.strictObject({
  ...pageQuery,
  reservationId: id.optional(),
  status: oneOrMany(paymentLinkStatuses).optional(),
});
