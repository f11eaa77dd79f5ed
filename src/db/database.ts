import {
  CompiledQuery,
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

// A transaction's BEGIN is sent with its first statement instead of on its own: the
// two are pipelined on the connection, so an API request (begin, the request scope,
// the handler's query, commit) waits for three round trips, not four. A transaction
// that ran nothing sends neither BEGIN nor COMMIT.
class PipelinedBegin implements DatabaseConnection {
  beginPending = false;

  constructor(readonly connection: DatabaseConnection) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (!this.beginPending) return await this.connection.executeQuery<R>(query);
    this.beginPending = false;
    const begun = this.connection.executeQuery(CompiledQuery.raw("begin"));
    const result = this.connection.executeQuery<R>(query);
    // Both are on the wire; the statement's failure is read after BEGIN's, never left unhandled.
    result.catch(() => {});
    await begun;
    return await result;
  }

  async *streamQuery<R>(query: CompiledQuery, chunkSize: number): AsyncIterableIterator<QueryResult<R>> {
    if (this.beginPending) {
      this.beginPending = false;
      await this.connection.executeQuery(CompiledQuery.raw("begin"));
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
    if (pipelined.beginPending) {
      pipelined.beginPending = false;
      return;
    }
    await this.driver.commitTransaction(pipelined);
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    const pipelined = connection as PipelinedBegin;
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
