import { z } from "zod";
import { domainRule, id, timestamp, timestampInput } from "../http/schemas.ts";

export const accessCodeStatuses = ["active", "revoked"] as const;

export const createAccessCodeBody = z.strictObject({
  code: z.string().regex(/^[0-9]{4,12}$/, "4 to 12 digits.").optional()
    .meta({ description: "Defaults to six random digits." }),
  validFrom: timestampInput.optional().meta({ description: "Defaults to check-in time on arrival day, in the property's timezone." }),
  validUntil: timestampInput.optional().meta({ description: "Defaults to check-out time on departure day." }),
  // Instants, not strings: the two may be written with different offsets.
}).refine((body) => !body.validFrom || !body.validUntil || Date.parse(body.validUntil) > Date.parse(body.validFrom), {
  message: "validUntil must be after validFrom.",
  path: ["validUntil"],
  params: domainRule,
}).meta({ id: "AccessCodeCreate" });

export const accessCode = z.object({
  id,
  reservationId: id,
  propertyId: id,
  code: z.string(),
  validFrom: timestamp,
  validUntil: timestamp,
  status: z.enum(accessCodeStatuses),
  revokedAt: timestamp.nullable(),
  createdAt: timestamp,
  updatedAt: timestamp,
}).meta({ id: "AccessCode" });

export const accessCodeParams = z.strictObject({ id, codeId: id });
