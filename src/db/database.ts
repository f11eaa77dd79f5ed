import { type ColumnType, Kysely } from "kysely";
import { PostgresJSDialect } from "kysely-postgres-js";
import { bindingInClient } from "./client-side-binding.ts";
import { guardingLostConnections } from "./connection-loss.ts";
import { simpleProtocolForOneQueries } from "./one-query.ts";
import type { Database } from "./database.types.ts";
import { pipelined } from "./pipelined-transactions.ts";
import { fixedPool, parsesAsGeneratedTypes, type RenewablePool, type Sql, writesValuesIntoSql } from "./pool.ts";

type Schema = Database["public"];
type Relations = Schema["Tables"] & Schema["Views"];

type OptionalKeys<T> = { [K in keyof T]-?: Record<never, never> extends Pick<T, K> ? K : never }[keyof T];

// The generator marks a column it will not accept (generated always, like reservations.balance)
// as `?: never`, which reads back as undefined; Kysely drops a column whose type is never.
type Writable<T, K> = K extends keyof T ? Exclude<T[K], undefined> : never;

// Optional on insert means the database fills it in; Kysely reads a type that admits undefined
// as optional, whatever exactOptionalPropertyTypes says about the generated `?`.
type InsertColumn<Insert, K> = [Writable<Insert, K>] extends [never] ? never
  : K extends OptionalKeys<Insert> ? Writable<Insert, K> | undefined
  : Writable<Insert, K>;

// A view the database cannot write through has no Insert or Update at all.
type Part<Relation, Name extends string> = Relation extends Record<Name, infer T> ? T : Record<never, never>;

type Table<Relation extends { Row: object }> = {
  [K in keyof Relation["Row"]]: ColumnType<
    Relation["Row"][K],
    InsertColumn<Part<Relation, "Insert">, K>,
    Writable<Part<Relation, "Update">, K>
  >;
};

// Names as the app writes them, unqualified: the pool's search_path starts with public.
export type DB = { [Name in keyof Relations & string]: Table<Relations[Name]> };

// Destroying the returned Kysely ends `sql` as well: the dialect owns the pool it is handed.
// Its transactions are pipelined (src/db/pipelined-transactions.ts): BEGIN goes with the
// first statement, and a read's statements can each run in a transaction of their own.
// Nothing is sent on a connection whose session ended (src/db/connection-loss.ts).
// Given a RenewablePool, the Kysely follows it to each new pool.
//
// The pool's mode decides how values reach Postgres (src/db/pool.ts). A pool that prepares
// (session mode) binds them to its prepared statements. A pool that does not (transaction
// mode) gets them written into the SQL (src/db/client-side-binding.ts), so that no
// statement waits to be described: that layer sits right above postgres.js, below the
// pipelined one, which still sees its own Prelude and AheadOfBegin, writes BEGIN, a
// write's statements and COMMIT, none with parameters, in one write, and sends a read's
// prelude and statement as one Query message (src/db/one-query.ts).
export function createDb(pool: Sql | RenewablePool): Kysely<DB> {
  const renewable = "renew" in pool ? pool : fixedPool(pool);
  if (!parsesAsGeneratedTypes(renewable.current)) {
    throw new TypeError("createDb needs a pool from createPool(url, { generatedTypes: true }), or rows would not match DB");
  }
  const dialect = new PostgresJSDialect({ postgres: renewable.current });
  const valuesInSql = writesValuesIntoSql(renewable.current);
  const driverFor = (sql: Sql) =>
    valuesInSql
      ? bindingInClient(new PostgresJSDialect({ postgres: simpleProtocolForOneQueries(sql) }).createDriver())
      : new PostgresJSDialect({ postgres: sql }).createDriver();
  return new Kysely<DB>({
    dialect: {
      createAdapter: () => dialect.createAdapter(),
      createDriver: () => pipelined(guardingLostConnections(renewable, driverFor), { oneQueryReads: valuesInSql }),
      createIntrospector: (db) => dialect.createIntrospector(db),
      createQueryCompiler: () => dialect.createQueryCompiler(),
    },
  });
}
