import {
  CompiledQuery,
  type Transaction,
  type ColumnType,
  type DatabaseConnection,
  type Driver,
  Kysely,
  type QueryCompiler,
  type QueryResult,
  type TransactionSettings,
} from "kysely";
import { PostgresJSDialect } from "kysely-postgres-js";
import type { Database } from "./database.types.ts";
import { parsesAsGeneratedTypes, type Sql } from "./pool.ts";

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
export function createDb(sql: Sql): Kysely<DB> {
  if (!parsesAsGeneratedTypes(sql)) {
    throw new TypeError("createDb needs a pool from createPool(url, { generatedTypes: true }), or rows would not match DB");
  }
  const dialect = new PostgresJSDialect({ postgres: sql });
  return new Kysely<DB>({
    dialect: {
      createAdapter: () => dialect.createAdapter(),
      createDriver: () => new BeginWithFirstStatement(dialect.createDriver()),
      createIntrospector: (db) => dialect.createIntrospector(db),
      createQueryCompiler: () => dialect.createQueryCompiler(),
    },
  });
}

// A statement to run before each of a transaction's statements. From `eachStatementAfter`
// on, the transaction goes statement by statement, each in a transaction of its own:
// BEGIN, this, the statement and COMMIT, pipelined in one write, so a read of one
// statement costs one round trip. `results` has this statement's result for each.
export class Prelude<R> implements CompiledQuery<R> {
  readonly sql: string;
  readonly parameters: readonly unknown[];
  readonly query: CompiledQuery<R>["query"];
  readonly queryId: CompiledQuery<R>["queryId"];
  readonly results: Promise<QueryResult<R>>[] = [];
  taken = false;

  constructor(statement: CompiledQuery<R>) {
    ({ sql: this.sql, parameters: this.parameters, query: this.query, queryId: this.queryId } = statement);
  }
}

// Under read committed each statement sees what was committed when it began, in one
// transaction or in many, so a transaction of reads loses nothing by going statement by
// statement. Call it before the transaction's first statement.
export async function eachStatementAfter<R>(db: Transaction<DB>, statement: CompiledQuery<R>): Promise<Prelude<R>> {
  const prelude = new Prelude(statement);
  await db.executeQuery(prelude);
  if (!prelude.taken) throw new Error("eachStatementAfter needs a transaction of createDb's Kysely");
  return prelude;
}

// Runs the prelude in a transaction of its own with no statement after it, for work
// that ran none.
export async function runPrelude<R>(db: Transaction<DB>, prelude: Prelude<R>): Promise<void> {
  await db.executeQuery(prelude);
}

const begin = CompiledQuery.raw("begin");
const commit = CompiledQuery.raw("commit");

// A transaction's BEGIN is sent with its first statement instead of on its own, so an
// API write (begin, the request scope, the handler's statements, commit) waits for one
// round trip fewer, and a transaction that ran nothing sends neither BEGIN nor COMMIT.
// With a prelude, each statement is a transaction of its own (see Prelude).
class PipelinedBegin implements DatabaseConnection {
  beginPending = false;
  prelude: Prelude<unknown> | null = null;

  constructor(readonly connection: DatabaseConnection) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (query instanceof Prelude) return await this.takePrelude(query);
    if (this.prelude) return await this.ownTransaction<R>(this.prelude, query);
    if (!this.beginPending) return await this.connection.executeQuery<R>(query);
    this.beginPending = false;
    const begun = this.connection.executeQuery(begin);
    const result = this.connection.executeQuery<R>(query);
    // Both are on the wire; the statement's failure is read after BEGIN's, never left unhandled.
    result.catch(() => {});
    await begun;
    return await result;
  }

  async takePrelude(prelude: Prelude<unknown>): Promise<QueryResult<never>> {
    if (prelude === this.prelude) {
      await this.ownTransaction(prelude, null);
    } else {
      if (this.prelude || !this.beginPending) {
        throw new Error("a prelude must come before its transaction's first statement, and only one");
      }
      this.prelude = prelude;
      prelude.taken = true;
    }
    return { rows: [] };
  }

  // All four are written before any answer is read. A failed prelude fails the
  // statement after it (25P02); the prelude's error is the one that explains it.
  async ownTransaction<R>(prelude: Prelude<unknown>, statement: CompiledQuery | null): Promise<QueryResult<R>> {
    const begun = this.connection.executeQuery(begin);
    const before = this.connection.executeQuery<unknown>(prelude);
    const result = statement ? this.connection.executeQuery<R>(statement) : null;
    const committed = this.connection.executeQuery(commit);
    for (const sent of [before, result, committed]) sent?.catch(() => {});
    prelude.results.push(before);
    await begun;
    await committed;
    if (!result) return { rows: [] };
    await before;
    return await result;
  }

  async *streamQuery<R>(query: CompiledQuery, chunkSize: number): AsyncIterableIterator<QueryResult<R>> {
    if (this.prelude) throw new Error("a transaction going statement by statement cannot stream");
    if (this.beginPending) {
      this.beginPending = false;
      await this.connection.executeQuery(begin);
    }
    yield* this.connection.streamQuery<R>(query, chunkSize);
  }
}

class BeginWithFirstStatement implements Driver {
  constructor(private readonly driver: Driver) {}

  init() {
    return this.driver.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    return new PipelinedBegin(await this.driver.acquireConnection());
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const pipelined = connection as PipelinedBegin;
    // Isolation levels and access modes go their own way, as the driver sends them.
    if (Object.values(settings).some((value) => value !== undefined)) {
      return await this.driver.beginTransaction(pipelined.connection, settings);
    }
    pipelined.beginPending = true;
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    const pipelined = connection as PipelinedBegin;
    pipelined.prelude = null;
    if (pipelined.beginPending) {
      pipelined.beginPending = false;
      return;
    }
    await this.driver.commitTransaction(pipelined);
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    const pipelined = connection as PipelinedBegin;
    pipelined.prelude = null;
    if (pipelined.beginPending) {
      pipelined.beginPending = false;
      return;
    }
    await this.driver.rollbackTransaction(pipelined);
  }

  // Savepoints are statements on the connection: a pending BEGIN goes with the first.
  savepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler["compileQuery"]): Promise<void> {
    return this.driver.savepoint!(connection, name, compile);
  }

  rollbackToSavepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler["compileQuery"]): Promise<void> {
    return this.driver.rollbackToSavepoint!(connection, name, compile);
  }

  releaseSavepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler["compileQuery"]): Promise<void> {
    return this.driver.releaseSavepoint!(connection, name, compile);
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    return this.driver.releaseConnection((connection as PipelinedBegin).connection);
  }

  destroy() {
    return this.driver.destroy();
  }
}
