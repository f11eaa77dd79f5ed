// compileOnce: a query compiled when its module loads, its values bound per call, runs
// as the same SQL a Kysely of the pool would have compiled on every call.
import assert from "node:assert/strict";
import { sql } from "kysely";
import { compileOnce } from "../../src/db/compile-once.ts";
import { createDb } from "../../src/db/database.ts";
import { createPool } from "../../src/db/pool.ts";
import { stack } from "../support/stack.ts";

const byNameAndCurrency = compileOnce((db, name: string, currency: string) =>
  db.selectFrom("properties").select(["id", "name"]).where("name", "=", name).where("currency", "=", currency)
    .where("timezone", "=", "UTC").compile()
);

Deno.test("each call binds its values where their stand-ins were, and keeps the constants", () => {
  const first = byNameAndCurrency("Harbour House", "EUR");
  const second = byNameAndCurrency("Old Mill", "GBP");
  assert.equal(first.sql, second.sql);
  assert.deepEqual(first.parameters, ["Harbour House", "EUR", "UTC"]);
  assert.deepEqual(second.parameters, ["Old Mill", "GBP", "UTC"]);
});

Deno.test("the SQL is the text the pool's own Kysely compiles", async () => {
  const db = createDb(createPool(stack.dbUrl, { max: 1, generatedTypes: true }));
  try {
    const perCall = db.selectFrom("properties").select(["id", "name"]).where("name", "=", "Harbour House")
      .where("currency", "=", "EUR").where("timezone", "=", "UTC").compile();
    const once = byNameAndCurrency("Harbour House", "EUR");
    assert.deepEqual([once.sql, once.parameters], [perCall.sql, perCall.parameters]);
    // And it runs (no property has that name).
    assert.deepEqual((await db.executeQuery(once)).rows, []);
  } finally {
    await db.destroy();
  }
});

Deno.test("a value bound twice is bound in both places", () => {
  const twice = compileOnce((db, code: string) => sql<{ same: boolean }>`select ${code} = ${code} as same`.compile(db));
  assert.deepEqual(twice("EUR").parameters, ["EUR", "EUR"]);
});

Deno.test("a value the query never binds is refused when the query is compiled", () => {
  assert.throws(
    () => compileOnce((db, _unused: string) => db.selectFrom("properties").select("id").compile()),
    /1 of the values are never bound/,
  );
});

Deno.test("a list value is bound whole, as one array parameter", async () => {
  const byIds = compileOnce((db, ids: readonly string[]) =>
    db.selectFrom("properties").select("id").where(sql<boolean>`id = any(${ids}::uuid[])`).compile()
  );
  const ids = ["00000000-0000-4000-8000-000000000001", "00000000-0000-4000-8000-000000000002"];
  const compiled = byIds(ids);
  assert.deepEqual(compiled.parameters, [ids]);
  const db = createDb(createPool(stack.dbUrl, { max: 1, generatedTypes: true }));
  try {
    // It runs as an array of uuids (no property has these ids).
    assert.deepEqual((await db.executeQuery(compiled)).rows, []);
  } finally {
    await db.destroy();
  }
});
