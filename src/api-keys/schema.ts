import { z } from "zod";
import { pageQuery } from "../db/pagination.ts";
import { domainRule, id, oneOrMany, text, timestamp, timestampInput } from "../http/schemas.ts";

export const apiKeyStatuses = ["active", "revoked", "expired"] as const;

// What a key may do on /v1/external; a route names the one it needs (src/external).
export const apiKeyScopes = ["reservations:read", "reservations:write", "payments:write", "ari:read"] as const;
export type ApiKeyScope = (typeof apiKeyScopes)[number];
// A key created without scopes may do what every key could before scopes.
export const defaultApiKeyScopes: ApiKeyScope[] = ["reservations:read", "payments:write"];
const MAX_KEY_PROPERTIES = 100;

export const createApiKeyBody = z.strictObject({
  name: text(100).meta({ description: "Who uses the key, like the channel manager's name." }),
  propertyId: id.optional().meta({ description: "The one property the key acts for (or propertyIds, or allProperties)." }),
  propertyIds: z.array(id).min(1).max(MAX_KEY_PROPERTIES).optional().meta({
    description: "The properties the key acts for.",
  }),
  allProperties: z.literal(true).optional().meta({
    description: "The key acts for every property of the tenant, those added later included.",
  }),
  scopes: z.array(z.enum(apiKeyScopes)).min(1).max(apiKeyScopes.length).optional().meta({
    description: "What the key may do; reservations:read and payments:write unless given.",
  }),
  expiresAt: timestampInput.optional().meta({ description: "When the key stops working; it never expires without one." }),
}).refine((body) => [body.propertyId, body.propertyIds, body.allProperties].filter((field) => field !== undefined).length === 1, {
  message: "Give exactly one of propertyId, propertyIds and allProperties.", path: ["propertyIds"], params: domainRule,
}).transform(({ propertyId, propertyIds, allProperties, scopes, ...rest }) => ({
  ...rest,
  allProperties: allProperties === true,
  propertyIds: [...new Set(propertyId ? [propertyId] : propertyIds ?? [])],
  scopes: [...new Set(scopes ?? defaultApiKeyScopes)].sort(),
})).meta({ id: "ApiKeyCreate" });

export const apiKey = z.object({
  id,
  name: z.string(),
  propertyId: id.nullable().meta({ description: "The key's property when it acts for exactly one, else null." }),
  propertyIds: z.array(id).meta({ description: "The properties the key acts for; empty when it acts for all." }),
  allProperties: z.boolean(),
  scopes: z.array(z.enum(apiKeyScopes)),
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
