// workerTransaction (src/db/worker-transactions.ts), the one way a worker's statements
// reach Postgres: under the background worker's statement timeout, in one transaction;
// a second step is made from the first's results and runs in the same transaction;
// whatever fails, the connection goes back to the pool outside any transaction, directly
// and through the pooler alike.
import assert from "node:assert/strict";
import type postgres from "postgres";
import { workerTransaction } from "../../src/db/worker-transactions.ts";
import { createPool, type PoolMode } from "../../src/db/pool.ts";
import { stack } from "../support/stack.ts";

type Way = { label: string; url: string; mode: PoolMode };
const ways: Way[] = [
  { label: "", url: stack.dbUrl, mode: "session" },
  { label: " (through the pooler)", url: stack.poolerUrl, mode: "transaction" },
];

// One connection, so that the statement after a transaction runs where it ran.
async function withSql(way: Way, work: (sql: postgres.Sql) => Promise<void>): Promise<void> {
  const sql = createPool(way.url, { max: 1, mode: way.mode });
  try {
    await work(sql);
  } finally {
    await sql.end();
  }
}

// What a transaction left set on its connection, if it is still open: a transaction-local
// setting outlives its statement only inside the transaction.
const probeSet = (tx: postgres.ReservedSql) => tx`select set_config('app.probe', 'in the transaction', true) as probe, txid_current()::text as xid`;
const leftOver = async (sql: postgres.Sql) => {
  const [row] = await sql<{ setting: string | null }[]>`select nullif(current_setting('app.probe', true), '') as setting`;
  return row!.setting;
};

for (const way of ways) {
  Deno.test(`one step: BEGIN, the worker's statement timeout, the statements and COMMIT, the statements' results${way.label}`, () =>
    withSql(way, async (sql) => {
      const { first, second } = await workerTransaction(sql, (tx) => [
        probeSet(tx),
        tx`select current_setting('statement_timeout') as timeout, current_setting('app.probe') as probe`,
      ]);
      assert.equal(first.length, 2, "only the caller's statements' results");
      assert.deepEqual(second, []);
      const [row] = first[1] as { timeout: string; probe: string }[];
      const [role] = await sql<{ timeout: string }[]>`select private.role_statement_timeout('background_worker') as timeout`;
      const [session] = await sql<{ timeout: string }[]>`select current_setting('statement_timeout') as timeout`;
      assert.equal(row!.probe, "in the transaction");
      assert.equal(row!.timeout, role!.timeout, "the background worker's statement timeout");
      assert.notEqual(role!.timeout, session!.timeout, "which is not the connection's own");
      assert.equal(await leftOver(sql), null, "committed: nothing of it is left on the connection");
    }));

  Deno.test(`the second step is made from the first's results and runs in the same transaction${way.label}`, () =>
    withSql(way, async (sql) => {
      const { first, second } = await workerTransaction(
        sql,
        (tx) => [probeSet(tx)],
        ([rows], tx) => {
          const [row] = rows as { probe: string; xid: string }[];
          return [tx`select ${row!.xid}::text = txid_current()::text as same, current_setting('app.probe') as probe`];
        },
      );
      assert.equal((first[0] as { probe: string }[])[0]!.probe, "in the transaction");
      assert.deepEqual([...(second[0] as { same: boolean; probe: string }[])], [{ same: true, probe: "in the transaction" }]);
      assert.equal(await leftOver(sql), null, "committed: nothing of it is left on the connection");
    }));

  Deno.test(`a second step of nothing commits the first${way.label}`, () =>
    withSql(way, async (sql) => {
      const { first, second } = await workerTransaction(sql, (tx) => [probeSet(tx)], () => []);
      assert.equal(first.length, 1);
      assert.deepEqual(second, []);
      assert.equal(await leftOver(sql), null);
    }));

  Deno.test(`a failing first step is rolled back at once, and its error is the caller's${way.label}`, () =>
    withSql(way, async (sql) => {
      let secondMade = false;
      await assert.rejects(
        workerTransaction(sql, (tx) => [probeSet(tx), tx`select 1 / 0`], () => {
          secondMade = true;
          return [];
        }),
        (error: { code?: string }) => error.code === "22012",
      );
      assert.equal(secondMade, false, "the second step is not made");
      assert.equal(await leftOver(sql), null, "the connection is back outside the transaction");
    }));

  Deno.test(`a second step that cannot be made, or fails, rolls back the first step's work${way.label}`, () =>
    withSql(way, async (sql) => {
      await assert.rejects(
        workerTransaction(sql, (tx) => [probeSet(tx)], () => {
          throw new Error("nothing to write");
        }),
        /nothing to write/,
      );
      assert.equal(await leftOver(sql), null);

      await assert.rejects(
        workerTransaction(
          sql,
          (tx) => [tx`select set_config('app.probe', 'in the transaction', true)`, tx`create temporary table two_steps (n integer) on commit drop`],
          (_, tx) => [tx`insert into two_steps values (1)`, tx`select 1 / 0`],
        ),
        (error: { code?: string }) => error.code === "22012",
      );
      assert.equal(await leftOver(sql), null, "the COMMIT after the failure rolled it back");
      const [table] = await sql<{ exists: boolean }[]>`select to_regclass('pg_temp.two_steps') is not null as exists`;
      assert.equal(table!.exists, false, "and the first step's table with it");
    }));

  Deno.test(`a deadlock's victim is taken again from the start; another failure is not${way.label}`, () =>
    withSql(way, async (sql) => {
      const sequence = `worker_tx_probe_${crypto.randomUUID().replaceAll("-", "")}`;
      await sql.unsafe(`create sequence public.${sequence}`);
      try {
        // Sequences do not roll back: the count of attempts survives each one's rollback.
        const failFirst = (code: string) => (tx: postgres.ReservedSql) => [
          tx.unsafe(`do $$ begin if nextval('public.${sequence}') = 1 then raise exception 'probe' using errcode = '${code}'; end if; end $$`),
          probeSet(tx),
        ];
        const { first } = await workerTransaction(sql, failFirst("40P01"));
        assert.equal((first[1] as { probe: string }[])[0]!.probe, "in the transaction", "the second attempt's results");
        const [afterDeadlock] = await sql.unsafe(`select last_value::int as attempts from public.${sequence}`);
        assert.equal(afterDeadlock!.attempts, 2);

        await sql.unsafe(`alter sequence public.${sequence} restart`);
        await assert.rejects(workerTransaction(sql, failFirst("22012")), (error: { code?: string }) => error.code === "22012");
        const [afterOther] = await sql.unsafe(`select last_value::int as attempts from public.${sequence}`);
        assert.equal(afterOther!.attempts, 1, "a failure that is no deadlock is the caller's at once");
        assert.equal(await leftOver(sql), null);
      } finally {
        await sql.unsafe(`drop sequence public.${sequence}`);
      }
    }));
}
