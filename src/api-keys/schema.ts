import { z } from "zod";
import { pageQuery } from "../db/pagination.ts";
import { id, oneOrMany, text, timestamp, timestampInput } from "../http/schemas.ts";

export const apiKeyStatuses = ["active", "revoked", "expired"] as const;

export const createApiKeyBody = z.strictObject({
  name: text(100).meta({ description: "Who uses the key, like the channel manager's name." }),
  propertyId: id.meta({ description: "The one property the key acts for." }),
  expiresAt: timestampInput.optional().meta({ description: "When the key stops working; it never expires without one." }),
}).meta({ id: "ApiKeyCreate" });

export const apiKey = z.object({
  id,
  name: z.string(),
  propertyId: id,
  prefix: z.string().meta({ description: "The key's public start, live_ and its key id; requests are looked up by it." }),
  lastFour: z.string().meta({ description: "The secret's last four characters." }),
  status: z.enum(apiKeyStatuses),
  createdBy: id.nullable(),
  createdAt: timestamp,
  lastUsedAt: timestamp.nullable().meta({ description: "The last request it authenticated, to the minute." }),
  expiresAt: timestamp.nullable(),
  revokedAt: timestamp.nullable(),
}).meta({ id: "ApiKey" });

export const issuedApiKey = apiKey.extend({
  secret: z.string().meta({
    description: "The whole key, live_<key id>_<secret>. Shown in this response only: only its hash is kept.",
  }),
}).meta({ id: "ApiKeyIssued" });

export const listApiKeysQuery = z.strictObject({
  ...pageQuery,
  propertyId: id.optional(),
  status: oneOrMany(apiKeyStatuses).optional(),
});
