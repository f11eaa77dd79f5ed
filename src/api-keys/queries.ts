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

// The key's properties, in one order, as the key authenticates with them.
const propertyIds = sql<string[]>`array(select p.property_id from public.api_key_properties p
  where p.tenant_id = api_keys.tenant_id and p.api_key_id = api_keys.id order by p.property_id)`;

const columns = [
  ...camelSelection([
    "id", "name", "all_properties", "scopes", "key_id", "last_four", "created_by", "created_at", "last_used_at", "expires_at",
    "revoked_at",
  ]),
  status.as("status"),
  propertyIds.as("propertyIds"),
];

type Row = { keyId: string; propertyIds: string[] } & Record<string, unknown>;

// The key id is stored; clients see it as the prefix they were given. A key of one
// property names it as propertyId, as every key did before keys had several.
function present<R extends Row>({ keyId, propertyIds, ...row }: R) {
  return { ...row, propertyIds, propertyId: propertyIds.length === 1 ? propertyIds[0]! : null, prefix: prefixOf(keyId) };
}

export async function listApiKeys(db: Reads, filter: z.output<typeof listApiKeysQuery>, page: Page) {
  let query = db.selectFrom("api_keys").select(columns)
    .orderBy("created_at", "desc").orderBy("id");
  if (filter.propertyId) {
    const property = filter.propertyId;
    query = query.where((eb) =>
      eb.or([
        eb("all_properties", "=", true),
        eb.exists(eb.selectFrom("api_key_properties as p").select(sql`1`.as("one"))
          .whereRef("p.tenant_id", "=", "api_keys.tenant_id").whereRef("p.api_key_id", "=", "api_keys.id")
          .where("p.property_id", "=", property)),
      ])
    );
  }
  if (filter.status) query = query.where(status as Expression<Status>, "in", filter.status);
  const listed = await paginate(query, page, { tenant: ["tenant_id"] });
  return { ...listed, data: listed.data.map(present) };
}

export async function findApiKey(db: Reads, id: string) {
  const row = await db.selectFrom("api_keys").select(columns).where("id", "=", id)
    .executeTakeFirst();
  return row && present(row);
}

// The key, then its properties, in the request's transaction: the key is checked to act
// for all properties or some as the transaction commits (private.api_key_has_properties).
export async function insertApiKey(db: Transaction<DB>, input: z.output<typeof createApiKeyBody>, issued: IssuedKey) {
  const key = await db.insertInto("api_keys")
    .values({
      all_properties: input.allProperties,
      scopes: input.scopes,
      name: input.name,
      key_id: issued.keyId,
      secret_hash: sql<string>`decode(${issued.secretHashHex}, 'hex')`,
      last_four: issued.lastFour,
      ...(input.expiresAt ? { expires_at: input.expiresAt } : {}),
    })
    .returning("id").executeTakeFirstOrThrow();
  if (input.propertyIds.length > 0) {
    await db.insertInto("api_key_properties")
      .values(input.propertyIds.map((property) => ({ api_key_id: key.id, property_id: property })))
      .execute();
  }
  const row = await db.selectFrom("api_keys").select(columns).where("id", "=", key.id).executeTakeFirstOrThrow();
  return present(row);
}

// Revoking a revoked key keeps its first time: DELETE is idempotent.
export async function revokeApiKey(db: Transaction<DB>, id: string) {
  const row = await db.updateTable("api_keys").set({ revoked_at: sql<string>`coalesce(revoked_at, now())` })
    .where("id", "=", id).returning(columns).executeTakeFirst();
  return row && present(row);
}
