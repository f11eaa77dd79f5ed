import type postgres from "postgres";

// What the queue workers (notifications, webhooks) share: a claim's statements, run as
// background_worker in each job's tenant.
//
// A claim's statements carry no parameters where they can: postgres.js sends a statement
// with parameters that is not prepared (as through a transaction pooler, src/db/pool.ts)
// only after a round trip to have it described, and sends nothing after it until it is
// answered, so every such statement would cost two round trips in turn. Without
// parameters a claim's load is one round trip, whatever the number of tenants. The ids
// written into the SQL are UUIDs, parsed from the job's message and checked again here:
// hex digits and hyphens, nothing that can end a literal.
const CANONICAL_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function uuidLiteral(id: string): string {
  if (!CANONICAL_UUID.test(id)) throw new Error(`not a UUID: ${JSON.stringify(id)}`);
  return `'${id}'`;
}

// The statement that puts the rest of a transaction in a tenant's worker context.
export function workerContext(tx: postgres.ReservedSql, tenantId: string) {
  return tx.unsafe(`select set_config('statement_timeout', private.role_statement_timeout('background_worker'), true),
                   set_config('app.tenant_id', ${uuidLiteral(tenantId)}, true), set_config('role', 'background_worker', true)`);
}
