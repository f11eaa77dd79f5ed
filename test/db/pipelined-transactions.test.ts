// The driver wrapper in src/db/pipelined-transactions.ts: BEGIN goes with a transaction's first
// statement, after a prelude each statement runs in a transaction of its own, preceded by
// the prelude, and a statement may go ahead of BEGIN as a transaction of its own; every way
// a transaction can end leaves nothing unhandled.
import assert from "node:assert/strict";
import { type Kysely, sql } from "kysely";
import { createDb, type DB } from "../../src/db/database.ts";
import { aheadOfBegin, eachStatementAfter, runPrelude } from "../../src/db/pipelined-transactions.ts";
import { createPool, type PoolMode } from "../../src/db/pool.ts";
import { stack } from "../support/stack.ts";

// Directly, a prelude and its statement go as BEGIN, the two and COMMIT; through the
// pooler, as one Query message of the two (src/db/one-query.ts). Both must behave alike.
type Way = { label: string; url: string; mode: PoolMode };
const direct: Way = { label: "", url: stack.dbUrl, mode: "session" };
const pooled: Way = { label: " (through the pooler, one query)", url: stack.poolerUrl, mode: "transaction" };

async function withDb(work: (db: Kysely<DB>) => Promise<void>, way: Way = direct): Promise<void> {
  const db = createDb(createPool(way.url, { max: 1, generatedTypes: true, mode: way.mode }));
  try {
    await work(db);
  } finally {
    await db.destroy();
  }
}

const backendXact = sql<{ xid: string; setting: string }>`
  select txid_current()::text as xid, current_setting('app.probe', true) as setting`;

const probe = sql<{ probe: string; xid: string }>`
  select set_config('app.probe', 'set by the prelude', true) as probe, txid_current()::text as xid`;

Deno.test("without a prelude, BEGIN goes with the first statement and every statement shares the transaction", () =>
  withDb(async (db) => {
    await db.transaction().execute(async (trx) => {
      await sql`select set_config('app.probe', 'local to the transaction', true)`.execute(trx);
      const { rows: [first] } = await backendXact.execute(trx);
      const { rows: [second] } = await backendXact.execute(trx);
      assert.equal(first!.setting, "local to the transaction");
      assert.equal(first!.xid, second!.xid, "one transaction");
    });
    assert.equal((await backendXact.execute(db)).rows[0]!.setting ?? "", "", "the local setting ended with it");
  }));

for (const way of [direct, pooled]) {
  Deno.test(`after a prelude each statement runs in a transaction of its own, the prelude first, with the prelude's result recorded${way.label}`, () =>
    withDb(async (db) => {
      await db.transaction().execute(async (trx) => {
        const prelude = await eachStatementAfter(trx, probe.compile(trx));
        const { rows: [first] } = await backendXact.execute(trx);
        const { rows: [second] } = await backendXact.execute(trx);
        assert.equal(first!.setting, "set by the prelude");
        assert.equal(second!.setting, "set by the prelude", "the prelude ran again before the second statement");
        assert.notEqual(first!.xid, second!.xid, "two transactions");
        const preludes = await Promise.all(prelude.results);
        assert.deepEqual(preludes.map(({ rows }) => rows[0]!.xid), [first!.xid, second!.xid], "each prelude in its statement's transaction");
      });
      assert.equal((await backendXact.execute(db)).rows[0]!.setting ?? "", "", "nothing outlives the transactions");
    }, way));
}

for (const way of [direct, pooled]) {
  Deno.test(`runPrelude runs the prelude alone, for work that ran no statement${way.label}`, () =>
    withDb(async (db) => {
      await db.transaction().execute(async (trx) => {
        const prelude = await eachStatementAfter(trx, sql<{ one: number }>`select 1 as one`.compile(trx));
        assert.equal(prelude.results.length, 0, "nothing is sent until asked");
        await runPrelude(trx, prelude);
        assert.deepEqual((await Promise.all(prelude.results)).map(({ rows }) => rows), [[{ one: 1 }]]);
      });
    }, way));
}

for (const way of [direct, pooled]) {
  Deno.test(`a failing prelude fails the statement after it with the prelude's own error, and the connection goes on${way.label}`, () =>
    withDb(async (db) => {
      await db.transaction().execute(async (trx) => {
        const prelude = await eachStatementAfter(trx, sql`select 1 / 0`.compile(trx));
        await assert.rejects(backendXact.execute(trx), (error: { code?: string }) => error.code === "22012");
        await assert.rejects(prelude.results[0]!, (error: { code?: string }) => error.code === "22012");
      });
      assert.equal((await sql<{ one: number }>`select 1 as one`.execute(db)).rows[0]!.one, 1);
    }, way));
}

for (const way of [direct, pooled]) {
  Deno.test(`a failing statement fails alone: the next statement runs in a fresh transaction${way.label}`, () =>
    withDb(async (db) => {
      await db.transaction().execute(async (trx) => {
        await eachStatementAfter(trx, probe.compile(trx));
        await assert.rejects(sql`select 1 / 0`.execute(trx), (error: { code?: string }) => error.code === "22012");
        assert.equal((await backendXact.execute(trx)).rows[0]!.setting, "set by the prelude");
      });
    }, way));
}

for (const way of [direct, pooled]) {
  Deno.test(`work that throws after a prelude leaves no transaction open and nothing unhandled${way.label}`, () =>
    withDb(async (db) => {
      await assert.rejects(db.transaction().execute(async (trx) => {
        await eachStatementAfter(trx, probe.compile(trx));
        await backendXact.execute(trx);
        throw new Error("the work failed");
      }), /the work failed/);
      // A savepoint succeeds only inside an open transaction block.
      await assert.rejects(sql`savepoint probe`.execute(db), (error: { code?: string }) => error.code === "25P01");
    }, way));
}

Deno.test("a prelude after the transaction's first statement is refused", () =>
  withDb(async (db) => {
    await assert.rejects(db.transaction().execute(async (trx) => {
      await backendXact.execute(trx);
      await eachStatementAfter(trx, probe.compile(trx));
    }), /must come before its transaction's first statement/);
  }));

Deno.test("a statement ahead of BEGIN runs before the transaction in one of its own, and stands though the transaction rolls back", () =>
  withDb(async (db) => {
    // A temporary table lives as long as the pool's one connection.
    await sql`create temporary table ahead_probe (xid text)`.execute(db);
    let inTransaction = "";
    await assert.rejects(db.transaction().execute(async (trx) => {
      const ahead = await aheadOfBegin(trx, sql<{ xid: string }>`
        insert into ahead_probe select txid_current()::text returning xid`.compile(trx));
      const { rows: [row] } = await backendXact.execute(trx);
      inTransaction = row!.xid;
      const { rows: [written] } = await ahead.result;
      assert.notEqual(written!.xid, inTransaction, "its own transaction");
      assert.ok(BigInt(written!.xid) < BigInt(inTransaction), "which began first");
      throw new Error("the work failed");
    }), /the work failed/);
    const { rows } = await sql<{ count: number }>`select count(*)::int as count from ahead_probe`.execute(db);
    assert.equal(rows[0]!.count, 1, "committed as it ended, whatever the transaction did after it");
  }));

Deno.test("a failing statement ahead of BEGIN fails its own result only; the transaction goes on", () =>
  withDb(async (db) => {
    await db.transaction().execute(async (trx) => {
      const ahead = await aheadOfBegin(trx, sql`select 1 / 0`.compile(trx));
      await sql`select set_config('app.probe', 'in the transaction', true)`.execute(trx);
      await assert.rejects(ahead.result, (error: { code?: string }) => error.code === "22012");
      assert.equal((await backendXact.execute(trx)).rows[0]!.setting, "in the transaction");
    });
  }));

Deno.test("a statement ahead of BEGIN after the transaction's first statement is refused", () =>
  withDb(async (db) => {
    await assert.rejects(db.transaction().execute(async (trx) => {
      await backendXact.execute(trx);
      await aheadOfBegin(trx, probe.compile(trx));
    }), /must come before its transaction's first statement/);
  }));

Deno.test("the statement_timeout a prelude sets holds the statement after it, directly and through the pooler in one query", async () => {
  for (const way of [direct, pooled]) {
    await withDb(async (db) => {
      await db.transaction().execute(async (trx) => {
        const prelude = await eachStatementAfter(trx, sql`select set_config('statement_timeout', '100ms', true) as timeout`.compile(trx));
        await assert.rejects(sql`select pg_sleep(2)`.execute(trx), (error: { code?: string }) => error.code === "57014", way.mode);
        // Either way the statement's prelude was recorded once.
        const settled = await Promise.allSettled(prelude.results);
        assert.equal(settled.length, 1);
      });
      assert.notEqual((await sql<{ timeout: string }>`select current_setting('statement_timeout') as timeout`.execute(db)).rows[0]!.timeout, "100ms");
    }, way);
  }
});
