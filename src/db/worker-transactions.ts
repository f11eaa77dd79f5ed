// The one way a queue worker's statements reach Postgres: a transaction pipelined on one
// reserved connection, under the background worker's statement timeout. The workers
// (notifications, webhooks) take their claims, load them, settle them and expand events
// this way, and nothing else does.
//
// postgres.js's own `sql.begin` sends ROLLBACK after a failure on the same connection,
// which crashes the process when the connection closed (src/db/connection-loss.ts). Here
// nothing follows the COMMIT: Postgres answers a COMMIT of a failed transaction by
// rolling it back. A connection whose session ended is not handed back to the pool.
//
// A claim's statements carry no parameters where they can: postgres.js sends a statement
// with parameters that is not prepared (as through a transaction pooler, src/db/pool.ts)
// only after a round trip to have it described, and sends nothing after it until it is
// answered, so every such statement would cost two round trips in turn. The ids a claim
// names are written into its SQL with uuidLiteral instead.
import type postgres from "postgres";
import { endsSession } from "./connection-loss.ts";
import type { Sql } from "./pool.ts";

// A postgres.js query not sent yet; `execute` sends it.
type Unsent = { execute(): PromiseLike<unknown> };
type Statements = (tx: postgres.ReservedSql) => Unsent[];

const CANONICAL_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

// A UUID as an SQL literal, checked again here: hex digits and hyphens, nothing that can
// end a literal.
export function uuidLiteral(id: string): string {
  if (!CANONICAL_UUID.test(id)) throw new Error(`not a UUID: ${JSON.stringify(id)}`);
  return `'${id}'`;
}

const timeout = (tx: postgres.ReservedSql) =>
  tx`select set_config('statement_timeout', private.role_statement_timeout('background_worker'), true)`;

// Postgres picks a victim to end a deadlock, and a serializable transaction may have to
// give way; either rolled back everything, so the transaction is taken again from the start.
const TAKEN_AGAIN = new Set(["40P01", "40001"]);
const ATTEMPTS = 3;

function mustTakeAgain(error: unknown): boolean {
  const code = typeof error === "object" && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === "string" && TAKEN_AGAIN.has(code);
}

// BEGIN, the timeout and `first`, written at once. Without `then`, COMMIT goes with them:
// one round trip. With it, for work that needs the database's answer before it can say
// what to write, `then` makes the second statements from the first ones' results, and
// they go with COMMIT once those results are in. The results of both, in order. A failure
// in the first step, or in making the second, is rolled back at once, so the connection
// goes back to the pool outside any transaction; one in the second is rolled back by the
// COMMIT after it.
// A deadlock or a serialization failure is taken again, up to three times in all.
export async function workerTransaction(
  sql: Sql,
  first: Statements,
  then?: (firstResults: unknown[], tx: postgres.ReservedSql) => Unsent[],
): Promise<{ first: unknown[]; second: unknown[] }> {
  for (let attempt = 1;; attempt++) {
    try {
      return await transactionOnce(sql, first, then);
    } catch (error) {
      if (attempt >= ATTEMPTS || !mustTakeAgain(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, 10 + Math.random() * 40 * attempt));
    }
  }
}

async function transactionOnce(
  sql: Sql,
  first: Statements,
  then?: (firstResults: unknown[], tx: postgres.ReservedSql) => Unsent[],
): Promise<{ first: unknown[]; second: unknown[] }> {
  const tx = await sql.reserve();
  const session = { ended: false };
  try {
    if (!then) {
      const results = await sendPipelined(session, [tx`begin`, timeout(tx), ...first(tx), tx`commit`]);
      return { first: results.slice(2, -1), second: [] };
    }
    let committing = false;
    try {
      const firstResults = (await sendPipelined(session, [tx`begin`, timeout(tx), ...first(tx)])).slice(2);
      const statements = then(firstResults, tx);
      committing = true;
      const secondResults = (await sendPipelined(session, [...statements, tx`commit`])).slice(0, -1);
      return { first: firstResults, second: secondResults };
    } catch (error) {
      if (!committing && !session.ended) {
        try {
          await tx`rollback`.execute();
        } catch (rollbackFailed) {
          session.ended = endsSession(rollbackFailed);
        }
      }
      throw error;
    }
  } finally {
    if (!session.ended) tx.release();
  }
}

// Queries written at once on one connection, their results in order; the first failure
// is thrown once every query has answered, and marks the session ended if any failure
// says so.
async function sendPipelined(session: { ended: boolean }, queries: Unsent[]): Promise<unknown[]> {
  const settled = await Promise.allSettled(queries.map((query) => query.execute()));
  const failed = settled.find((outcome) => outcome.status === "rejected");
  if (failed) {
    session.ended = settled.some((outcome) => outcome.status === "rejected" && endsSession(outcome.reason));
    throw failed.reason;
  }
  return settled.map((outcome) => (outcome as PromiseFulfilledResult<unknown>).value);
}
