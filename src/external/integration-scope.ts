import { type Kysely, sql, type Transaction } from "kysely";
import { type PresentedKey, presentedKey } from "../api-keys/secret.ts";
import type { DB } from "../db/database.ts";
import { HttpError } from "../http/problem.ts";

export type Integration = { db: Transaction<DB>; tenantId: string; propertyId: string; apiKeyId: string };

export type IntegrationScope = {
  // Reads the key from X-Api-Key or Authorization: Bearer; no database work.
  authenticate(request: Request): PresentedKey;
  // One transaction: the key checked and the request's tenant, property and role set
  // in one statement, then `work` under RLS as api_integration.
  run<T>(key: PresentedKey, work: (integration: Integration) => Promise<T>): Promise<T>;
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

export function createIntegrationScope(deps: { db: Kysely<DB> }): IntegrationScope {
  return {
    authenticate(request) {
      const key = presentedKey(sentKey(request));
      if (!key) throw refused("This is not an API key: keys look like live_<key id>_<secret>.");
      return key;
    },

    async run(key, work) {
      return await deps.db.transaction().execute(async (db) => {
        // The key is checked in FROM, as its owner; the settings and the role switch in the
        // select list follow from its row, all in one round trip.
        const { rows: [row] } = await sql<{ state: KeyState; tenantId: string; propertyId: string; apiKeyId: string }>`
          select k.state,
                 set_config('app.tenant_id', coalesce(k.tenant_id::text, ''), true),
                 set_config('app.property_id', coalesce(k.property_id::text, ''), true),
                 set_config('app.api_key_id', coalesce(k.api_key_id::text, ''), true),
                 set_config('role', 'api_integration', true),
                 k.tenant_id as "tenantId", k.property_id as "propertyId", k.api_key_id as "apiKeyId"
          from private.authenticate_api_key(${key.keyId}, decode(${key.secretHashHex}, 'hex')) k`.execute(db);
        if (!row) throw refused("The API key is not valid.");
        if (row.state !== "active") throw refused(refusals[row.state]);
        return await work({ db, tenantId: row.tenantId, propertyId: row.propertyId, apiKeyId: row.apiKeyId });
      });
    },
  };
}
