import { z } from "zod";
import { pageQuery } from "../db/pagination.ts";
import { countryCode, email, id, patchOf, phone, text, timestamp } from "../http/schemas.ts";

const editable = {
  firstName: text(100),
  lastName: text(100),
  email: email.nullable(),
  phone: phone.nullable(),
  locale: z.string().regex(/^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$/, "A BCP 47 language tag, like en or pt-BR.")
    .meta({ description: "The language of the guest's emails." }),
  countryCode: countryCode.nullable(),
  marketingConsent: z.boolean()
    .meta({ description: "Giving it records marketingConsentAt; withdrawing it clears that." }),
  notes: z.string().max(4000).nullable(),
};

export const createGuestBody = z.strictObject({
  ...editable,
  email: editable.email.optional(),
  phone: editable.phone.optional(),
  locale: editable.locale.optional(),
  countryCode: editable.countryCode.optional(),
  marketingConsent: editable.marketingConsent.optional(),
  notes: editable.notes.optional(),
}).meta({ id: "GuestCreate" });

export const updateGuestBody = patchOf(editable).meta({ id: "GuestUpdate" });

export const guest = z.object({
  id,
  firstName: z.string(),
  lastName: z.string(),
  email: z.string().nullable(),
  phone: z.string().nullable(),
  locale: z.string(),
  countryCode: z.string().nullable(),
  marketingConsent: z.boolean(),
  marketingConsentAt: timestamp.nullable().meta({ description: "When the current marketing consent was given." }),
  notes: z.string().nullable(),
  emailUndeliverableAt: timestamp.nullable().meta({
    description: "When the email provider reported that mail to this address cannot arrive (a hard bounce, a drop for an " +
      "invalid or bouncing address, a spam report); null when it did not. Email to a marked address is skipped until the " +
      "address changes or an owner or admin clears the mark (DELETE /v1/guests/{id}/email-undeliverable).",
  }),
  emailUndeliverableReason: z.string().nullable().meta({ description: "Why, in the provider's words; null without a mark." }),
  createdAt: timestamp,
  updatedAt: timestamp,
}).meta({ id: "Guest" });

export const listGuestsQuery = z.strictObject({
  ...pageQuery,
  q: text(200).optional()
    .meta({ description: "Part of the first name, last name or email, in any case." }),
  email: email.transform((value) => value.toLowerCase()).optional()
    .meta({ description: "The email address, in any case." }),
});
