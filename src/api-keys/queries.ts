import { type Expression, sql, type Transaction } from "kysely";
import type { z } from "zod";
import { camelSelection } from "../db/columns.ts";
import type { DB } from "../db/database.ts";
import { type Page, paginate } from "../db/pagination.ts";
import type { Reads } from "../db/reads.ts";
import type { apiKeyStatuses, createApiKeyBody, listApiKeysQuery } from "./schema.ts";
import { type IssuedKey, prefixOf } from "./secret.ts";

type Status = (typeof apiKeyStatuses)[number];

const status = sql<Status>`case when revoked_at is not null then 'revoked'
  when expires_at <= now() then 'expired' else 'active' end`;

const columns = [
  ...camelSelection([
    "id", "name", "property_id", "key_id", "last_four", "created_by", "created_at", "last_used_at", "expires_at", "revoked_at",
  ]),
  status.as("status"),
];

type Row = { keyId: string } & Record<string, unknown>;

// The key id is stored; clients see it as the prefix they were given.
function present<R extends Row>({ keyId, ...row }: R) {
  return { ...row, prefix: prefixOf(keyId) };
}

export async function listApiKeys(db: Reads, filter: z.output<typeof listApiKeysQuery>, page: Page) {
  let query = db.selectFrom("api_keys").select(columns)
    .orderBy("created_at", "desc").orderBy("id");
  if (filter.propertyId) query = query.where("property_id", "=", filter.propertyId);
  if (filter.status) query = query.where(status as Expression<Status>, "in", filter.status);
  const listed = await paginate(query, page, { tenant: ["tenant_id"] });
  return { ...listed, data: listed.data.map(present) };
}

export async function findApiKey(db: Reads, id: string) {
  const row = await db.selectFrom("api_keys").select(columns).where("id", "=", id)
    .executeTakeFirst();
  return row && present(row);
}

export async function insertApiKey(db: Transaction<DB>, input: z.output<typeof createApiKeyBody>, issued: IssuedKey) {
  const row = await db.insertInto("api_keys")
    .values({
      property_id: input.propertyId,
      name: input.name,
      key_id: issued.keyId,
      secret_hash: sql<string>`decode(${issued.secretHashHex}, 'hex')`,
      last_four: issued.lastFour,
      ...(input.expiresAt ? { expires_at: input.expiresAt } : {}),
    })
    .returning(columns).executeTakeFirstOrThrow();
  return present(row);
}

// Revoking a revoked key keeps its first time: DELETE is idempotent.
export async function revokeApiKey(db: Transaction<DB>, id: string) {
  const row = await db.updateTable("api_keys").set({ revoked_at: sql<string>`coalesce(revoked_at, now())` })
    .where("id", "=", id).returning(columns).executeTakeFirst();
  return row && present(row);
}
