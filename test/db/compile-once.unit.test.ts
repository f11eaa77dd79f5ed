// compileOnce on its own: values bound where their stand-ins were, constants kept, and a
// value the query never binds refused. Running the compiled SQL is compile-once.test.ts's.
import assert from "node:assert/strict";
import { sql } from "kysely";
import { compileOnce } from "../../src/db/compile-once.ts";

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

Deno.test("a list value is one array parameter, whatever its length", () => {
  const byIds = compileOnce((db, ids: readonly string[]) =>
    db.selectFrom("properties").select("id").where(sql<boolean>`id = any(${ids}::uuid[])`).compile()
  );
  assert.deepEqual(byIds([]).parameters, [[]]);
  assert.deepEqual(byIds(["a", "b", "c"]).parameters, [["a", "b", "c"]]);
  assert.equal(byIds([]).sql, byIds(["a", "b", "c"]).sql);
});
