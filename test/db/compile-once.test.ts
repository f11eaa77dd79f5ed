// compileOnce against the database: a query compiled when its module loads runs as the
// same SQL a Kysely of the pool would have compiled on every call. How it binds values
// is compile-once.unit.test.ts's.
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
