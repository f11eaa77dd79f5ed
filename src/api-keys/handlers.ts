import type { Endpoint } from "../http/endpoint.ts";
import { jsonText, noContent } from "../http/json.ts";
import { resourceEndpoints } from "../http/resource-endpoints.ts";
import { locationOf } from "../http/respond.ts";
import { idParams } from "../http/schemas.ts";
import { tenantEndpoint } from "../http/session-endpoints.ts";
import type { RequestScope } from "../http/request-scope.ts";
import { findApiKey, insertApiKey, listApiKeys, revokeApiKey } from "./queries.ts";
import { apiKey, createApiKeyBody, issuedApiKey, listApiKeysQuery } from "./schema.ts";
import { issueKey } from "./secret.ts";

const tag = "API keys";

// Owners and admins issue keys for integrations, one property each; the secret is
// in the create response and nowhere else.
export function apiKeyEndpoints(scope: RequestScope): Endpoint[] {
  const keys = resourceEndpoints(scope, {
    tag, collection: "api-keys", schema: apiKey,
    name: { one: "ApiKey", many: "ApiKeys" }, noun: { one: "API key", many: "API keys" },
  });
  return [
    keys.list({
      access: "manager", summary: "List the tenant's API keys, newest first, without their secrets.", query: listApiKeysQuery,
    }, listApiKeys),
    keys.get({ access: "manager", summary: "Read an API key, without its secret." }, findApiKey),

    tenantEndpoint(scope, {
      method: "POST", path: "/v1/api-keys", operationId: "createApiKey", tag, access: "manager",
      summary: "Issue an API key for one property; the response is the only time its secret is shown.",
      body: createApiKeyBody, problems: ["unknown-reference", "unprocessable"],
      success: [{ status: 201, description: "Issued; keep the secret now.", schema: issuedApiKey, headers: ["Location"] }],
    }, async ({ db, body, request }) => {
      const issued = issueKey();
      const created = await insertApiKey(db, body, issued);
      // No ETag: a validator of a body holding the secret would be derived from it.
      return jsonText(201, JSON.stringify({ ...created, secret: issued.token }), {
        location: locationOf(request, `api-keys/${created.id}`),
        // The secret must not outlive this response in any cache.
        "cache-control": "no-store",
      });
    }),

    tenantEndpoint(scope, {
      method: "DELETE", path: "/v1/api-keys/{id}", operationId: "revokeApiKey", tag, access: "manager",
      summary: "Revoke an API key; requests with it are refused from now on. Revoking again changes nothing.",
      params: idParams, resource: "API key", success: [{ status: 204, description: "Revoked." }],
    }, async ({ db, params, missing }) => {
      if (!await revokeApiKey(db, params.id)) throw missing();
      return noContent();
    }),
  ];
}
