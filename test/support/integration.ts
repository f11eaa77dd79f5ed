// API keys issued the way a manager issues them, and calls to /v1/external/* the way
// an integration makes them: the key as X-Api-Key or as the bearer, no x-tenant-id.
import { type Client, expectStatus, type HeaderMap } from "./api.ts";
import { stack } from "./stack.ts";

export type ApiKey = {
  id: string;
  name: string;
  propertyId: string;
  prefix: string;
  lastFour: string;
  status: "active" | "revoked" | "expired";
  createdBy: string | null;
  createdAt: string;
  lastUsedAt: string | null;
  expiresAt: string | null;
  revokedAt: string | null;
};

export type IssuedApiKey = ApiKey & { secret: string };

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
  if (options.body !== undefined) headers["content-type"] = "application/json";
  Object.assign(headers, options.headers);
  const response = await fetch(`${stack.v1}/external${path}`, {
    method,
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const bytes = await response.arrayBuffer();
  return new Response(response.status === 204 || bytes.byteLength === 0 ? null : bytes, {
    status: response.status,
    headers: response.headers,
  });
}
