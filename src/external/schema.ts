import { z } from "zod";
import { pageQuery } from "../db/pagination.ts";
import { currency, id, isoDate, minorUnits, oneOrMany, timestampInput } from "../http/schemas.ts";
import { paymentMethods } from "../payments/schema.ts";
import { reservationStatuses } from "../reservations/schema.ts";

export const externalPaymentBody = z.strictObject({
  amount: minorUnits.min(1),
  currency: currency.meta({ description: "The reservation's currency; any other is a 422." }),
  method: z.enum(paymentMethods),
  externalReference: z.string().min(1).max(200).meta({
    description: "Your system's id for the payment, unique in the tenant: sending it again returns the first payment.",
  }),
  receivedAt: timestampInput.optional().meta({ description: "Defaults to now." }),
}).meta({ id: "ExternalPaymentCreate" });

export const listExternalReservationsQuery = z.strictObject({
  ...pageQuery,
  propertyId: id.optional().meta({ description: "One of the key's properties; all of them without it." }),
  status: oneOrMany(reservationStatuses).optional(),
  from: isoDate.optional().meta({ description: "Stays that include a night on or after this date." }),
  to: isoDate.optional().meta({ description: "Stays that begin before this date." }),
  updatedSince: timestampInput.optional().meta({
    description: "Reservations changed at or after this instant, oldest change first (instead of by check-in).",
  }),
});
