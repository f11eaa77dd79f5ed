// API keys issued the way a manager issues them, and calls to /v1/external/* the way
// an integration makes them: the key as X-Api-Key or as the bearer, no x-tenant-id.
import { call, type Client, expectStatus, type HeaderMap, type Schemas } from "./api.ts";

export type ApiKey = Schemas["ApiKey"];
export type IssuedApiKey = Schemas["ApiKeyIssued"];

export async function issueApiKey(manager: Client, propertyId: string, fields: Record<string, unknown> = {}): Promise<IssuedApiKey> {
  const response = await manager.post("/api-keys", { name: "Channel manager", propertyId, ...fields });
  return await expectStatus<IssuedApiKey>("POST", "/v1/api-keys", response, 201);
}

export type KeyHeader = "x-api-key" | "bearer";

// `key` undefined: no key header at all.
export async function external(
  method: string,
  path: string,
  key: string | undefined,
  options: { body?: unknown; headers?: HeaderMap; via?: KeyHeader } = {},
): Promise<Response> {
  const headers: HeaderMap = {};
  if (key !== undefined) {
    if ((options.via ?? "x-api-key") === "x-api-key") headers["x-api-key"] = key;
    else headers.authorization = `Bearer ${key}`;
  }
  return await call(method, `/external${path}`, { body: options.body, headers: { ...headers, ...options.headers } });
}
