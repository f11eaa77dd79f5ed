// The driver wrapper in src/db/database.ts: BEGIN and statements held back with
// sendWithNext go out with a transaction's next statement, in the same transaction,
// and every way a transaction can end leaves no statement hanging or unhandled.
import assert from "node:assert/strict";
import { type Kysely, sql } from "kysely";
import { createDb, type DB, sendHeld, sendWithNext } from "../../src/db/database.ts";
import { createPool } from "../../src/db/pool.ts";
import { stack } from "../support/stack.ts";

async function withDb(work: (db: Kysely<DB>) => Promise<void>): Promise<void> {
  const db = createDb(createPool(stack.dbUrl, { max: 1, generatedTypes: true }));
  try {
    await work(db);
  } finally {
    await db.destroy();
  }
}

const backendXact = sql<{ xid: string; setting: string }>`
  select txid_current()::text as xid, current_setting('app.probe', true) as setting`;

Deno.test("a held statement runs first, in the same transaction as the statement it goes with, and gets its own result", () =>
  withDb(async (db) => {
    await db.transaction().execute(async (trx) => {
      const held = sendWithNext(trx, sql<{ probe: string; xid: string }>`
        select set_config('app.probe', 'set by the held statement', true) as probe, txid_current()::text as xid`.compile(trx));
      const { rows: [after] } = await backendXact.execute(trx);
      const { rows: [first] } = await held;
      assert.equal(first!.probe, "set by the held statement");
      assert.equal(after!.setting, "set by the held statement", "the held statement ran before the one it went with");
      assert.equal(after!.xid, first!.xid, "one transaction");
    });
  }));

Deno.test("a transaction whose work ran nothing sends what is held with sendHeld", () =>
  withDb(async (db) => {
    await db.transaction().execute(async (trx) => {
      const held = sendWithNext(trx, sql<{ one: number }>`select 1 as one`.compile(trx));
      await sendHeld(trx);
      assert.deepEqual((await held).rows, [{ one: 1 }]);
    });
  }));

Deno.test("a failing held statement fails the statement it went with, and its holder reads its own error", () =>
  withDb(async (db) => {
    await assert.rejects(db.transaction().execute(async (trx) => {
      const held = sendWithNext(trx, sql`select 1 / 0`.compile(trx));
      await assert.rejects(backendXact.execute(trx), (error: { code?: string }) => error.code === "25P02");
      await held;
    }), (error: { code?: string }) => error.code === "22012");
    // The connection is fine afterwards: the failed transaction was rolled back.
    assert.equal((await sql<{ one: number }>`select 1 as one`.execute(db)).rows[0]!.one, 1);
  }));

Deno.test("a transaction that throws with a statement still held rolls back without sending it, and nothing is left unhandled", () =>
  withDb(async (db) => {
    let held: Promise<unknown> = Promise.resolve();
    await assert.rejects(db.transaction().execute(async (trx) => {
      held = sendWithNext(trx, sql`select set_config('app.probe', 'never', false)`.compile(trx));
      throw new Error("the work failed first");
    }), /the work failed first/);
    await assert.rejects(held, /rolled back before this statement was sent/);
    assert.equal((await backendXact.execute(db)).rows[0]!.setting ?? "", "", "the held statement never ran");
  }));
