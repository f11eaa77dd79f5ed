import { type Kysely, sql, type Transaction } from "kysely";
import type { ApiKeyScope } from "../api-keys/schema.ts";
import { type PresentedKey, presentedKey } from "../api-keys/secret.ts";
import { compileOnce } from "../db/compile-once.ts";
import type { DB } from "../db/database.ts";
import { aheadOfBegin } from "../db/pipelined-transactions.ts";
import { HttpError } from "../http/problem.ts";
import { type Admission, type RateLimit, rateLimitOf, tooManyRequests } from "./rate-limit.ts";

export type Integration = {
  db: Transaction<DB>;
  tenantId: string;
  // The properties the key acts for, or "all" of its tenant's.
  properties: string[] | "all";
  scopes: ApiKeyScope[];
  apiKeyId: string;
  // The key's rate limit after this request, for the answer's RateLimit fields.
  rateLimit: RateLimit;
};

export type IntegrationScope = {
  // Reads the key from X-Api-Key or Authorization: Bearer; no database work.
  authenticate(request: Request): PresentedKey;
  // One round trip before `work`: the request counted against the key's rate limit (and a
  // failed key against the client's address) in a statement of its own, then the key
  // checked and the request's tenant, property and role set in the transaction's first
  // statement, both written at once. Then `work`, in that transaction, under RLS as
  // api_integration. A limit reached is a 429, whatever the key.
  run<T>(key: PresentedKey, clientAddress: string | undefined, work: (integration: Integration) => Promise<T>): Promise<T>;
};

type KeyState = "active" | "revoked" | "expired";

// Never echoes what was sent: the header may hold a real secret.
function refused(detail: string): HttpError {
  return new HttpError("unauthorized", detail, { headers: { "www-authenticate": 'Bearer realm="pms-integrations"' } });
}

// X-Api-Key wins: a client behind Supabase's gateway may also send its anon key as the bearer.
function sentKey(request: Request): string {
  const header = request.headers.get("x-api-key");
  if (header !== null) return header.trim();
  const authorization = request.headers.get("authorization");
  const match = authorization === null ? null : /^Bearer\s+(\S+)$/i.exec(authorization);
  if (!match) throw refused("Send the API key as X-Api-Key: <key> or Authorization: Bearer <key>.");
  return match[1]!;
}

const refusals: Record<Exclude<KeyState, "active">, string> = {
  revoked: "The API key was revoked. Ask the property's managers for a new one.",
  expired: "The API key has expired. Ask the property's managers for a new one.",
};

// Counted outside the request's transaction, so the count stands however the request
// ends, and the counter's row is locked for this statement only (see aheadOfBegin).
// An empty address is none. Exported, as scopeQuery is, for the bench's SQL side (bench/external.ts).
export const admissionQuery = compileOnce((db, keyId: string, secretHashHex: string, address: string) =>
  sql<Admission>`
    select outcome, policy, quota, window_seconds as "windowSeconds", remaining, reset_seconds as "resetSeconds"
    from private.admit_api_key_request(${keyId}, decode(${secretHashHex}, 'hex'), ${address})`.compile(db)
);

// The key is checked in FROM, as its owner; the settings and the role switch in the
// select list follow from its row, all in one statement, with the role's
// statement_timeout for the statements after it.
export const scopeQuery = compileOnce((db, keyId: string, secretHashHex: string) =>
  sql<{ state: KeyState; tenantId: string; propertyIds: string[] | null; scopes: ApiKeyScope[]; apiKeyId: string }>`
    select k.state,
           set_config('statement_timeout', private.role_statement_timeout('api_integration'), true),
           set_config('app.tenant_id', coalesce(k.tenant_id::text, ''), true),
           set_config('app.property_ids', coalesce(k.property_ids::text, ''), true),
           set_config('app.all_properties', coalesce(k.all_properties::text, ''), true),
           set_config('app.api_scopes', coalesce(k.scopes::text, ''), true),
           set_config('app.api_key_id', coalesce(k.api_key_id::text, ''), true),
           set_config('role', 'api_integration', true),
           k.tenant_id as "tenantId", k.property_ids as "propertyIds", k.scopes, k.api_key_id as "apiKeyId"
    from private.authenticate_api_key(${keyId}, decode(${secretHashHex}, 'hex')) k`.compile(db)
);

export function createIntegrationScope(deps: { db: Kysely<DB> }): IntegrationScope {
  return {
    authenticate(request) {
      const key = presentedKey(sentKey(request));
      if (!key) throw refused("This is not an API key: keys look like live_<key id>_<secret>.");
      return key;
    },

    async run(key, clientAddress, work) {
      return await deps.db.transaction().execute(async (db) => {
        const admission = await aheadOfBegin(db, admissionQuery(key.keyId, key.secretHashHex, clientAddress ?? ""));
        const scope = db.executeQuery(scopeQuery(key.keyId, key.secretHashHex));
        const [{ rows: [admitted] }, { rows: [row] }] = await Promise.all([admission.result, scope]);
        const limit = admitted ? rateLimitOf(admitted) : null;
        // An address refused for its failed keys learns nothing about this one.
        if (admitted?.outcome === "throttled" && limit) throw tooManyRequests(limit);
        if (!row) throw refused("The API key is not valid.");
        if (row.state !== "active") throw refused(refusals[row.state]);
        if (admitted?.outcome === "limited" && limit) throw tooManyRequests(limit);
        // The two statements judged the key apart only if it changed between them.
        if (admitted?.outcome !== "admitted" || !limit) throw refused("The API key is not valid.");
        return await work({
          db, tenantId: row.tenantId, properties: row.propertyIds ?? "all", scopes: row.scopes, apiKeyId: row.apiKeyId,
          rateLimit: limit,
        });
      });
    },
  };
}
