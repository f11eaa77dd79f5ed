import { type CompiledQuery, DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler } from "kysely";
import type { DB } from "./database.ts";

// Builds SQL and never connects: the adapter and compiler of the pool's dialect
// (kysely-postgres-js uses Kysely's own Postgres ones), so the SQL is the same text
// and meets the same prepared statement on the connection. Through a transaction
// pooler nothing is prepared (src/db/pool.ts) and what is saved is the building alone.
const compiler = new Kysely<DB>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  },
});

// A query whose SQL is the same whatever its values, built and compiled once when its
// module loads instead of on every request; each call binds its values in place.
// `build` gets a stand-in for each value and may only bind them: a value that chose
// a branch would choose it for every call.
// A value may be a list (an `= any($1)` parameter): its stand-in is a string all the
// same, which `build` only binds and never looks into.
export function compileOnce<Values extends (string | readonly string[])[], Row>(
  build: (db: Kysely<DB>, ...values: Values) => CompiledQuery<Row>,
): (...values: Values) => CompiledQuery<Row> {
  const standIns = Array.from({ length: build.length - 1 }, (_, at) => `\u0000value ${at}\u0000`);
  const compiled = build(compiler, ...standIns as unknown as Values);
  const slots = compiled.parameters.map((parameter) => standIns.indexOf(parameter as string));
  const unbound = standIns.filter((_, at) => !slots.includes(at));
  if (unbound.length > 0) throw new Error(`compileOnce: ${unbound.length} of the values are never bound`);
  return (...values) => ({
    ...compiled,
    parameters: compiled.parameters.map((parameter, at) => slots[at] === -1 ? parameter : values[slots[at]!]),
  });
}
