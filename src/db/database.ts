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

// A statement held back to go with the transaction's next one; the driver wrapper
// below sends it and settles `result`.
class HeldStatement<R> implements CompiledQuery<R> {
  readonly sql: string;
  readonly parameters: readonly unknown[];
  readonly query: CompiledQuery<R>["query"];
  readonly queryId: CompiledQuery<R>["queryId"];
  readonly result: Promise<QueryResult<R>>;
  settle!: (result: Promise<QueryResult<R>>) => void;
  taken = false;

  constructor(statement: CompiledQuery<R>) {
    ({ sql: this.sql, parameters: this.parameters, query: this.query, queryId: this.queryId } = statement);
    this.result = new Promise((resolve) => this.settle = resolve);
    // Whoever held it reads the failure; a transaction that ended first must not crash the process.
    this.result.catch(() => {});
  }
}

// Sends what is held without a statement of its own.
class SendHeld implements CompiledQuery {
  readonly sql: string;
  readonly parameters: readonly unknown[];
  readonly query: CompiledQuery["query"];
  readonly queryId: CompiledQuery["queryId"];

  constructor() {
    ({ sql: this.sql, parameters: this.parameters, query: this.query, queryId: this.queryId } = CompiledQuery.raw(""));
  }
}

// `statement` goes with the transaction's next statement, pipelined, instead of on its
// own; its result comes when that statement is sent (or at `sendHeld`). A read's request
// context rides with the read's own query this way: one round trip, not two.
export async function sendWithNext<R>(db: Transaction<DB>, statement: CompiledQuery<R>): Promise<QueryResult<R>> {
  const held = new HeldStatement(statement);
  await db.executeQuery(held);
  if (!held.taken) throw new Error("sendWithNext needs a transaction of createDb's Kysely");
  return await held.result;
}

// Sends what is held now, for a transaction whose work ran no statement of its own.
export async function sendHeld(db: Transaction<DB>): Promise<void> {
  await db.executeQuery(new SendHeld());
}

// A transaction's BEGIN is sent with its first statement instead of on its own, and
// so are statements held back by sendWithNext: all are pipelined on the connection,
// so an API request (begin, the request scope, the handler's query, commit) waits for
// three round trips, or two for a read. A transaction that ran nothing sends neither
// BEGIN nor COMMIT.
class PipelinedBegin implements DatabaseConnection {
  beginPending = false;
  held: HeldStatement<unknown>[] = [];

  constructor(readonly connection: DatabaseConnection) {}

  // BEGIN and the held statements go out now, and the held ones learn their results.
  // Only BEGIN is awaited: a held statement's failure belongs to whoever holds it.
  sendAhead(): Promise<unknown> {
    const begun = this.beginPending ? this.connection.executeQuery(CompiledQuery.raw("begin")) : Promise.resolve();
    this.beginPending = false;
    for (const held of this.held.splice(0)) {
      const result = this.connection.executeQuery<unknown>(held);
      result.catch(() => {});
      held.settle(result);
    }
    return begun;
  }

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (query instanceof HeldStatement) {
      // Kysely waits for this before the next statement; the real result comes later.
      query.taken = true;
      this.held.push(query);
      return { rows: [] };
    }
    if (query instanceof SendHeld) {
      await this.sendAhead();
      return { rows: [] };
    }
    if (!this.beginPending && this.held.length === 0) return await this.connection.executeQuery<R>(query);
    const ahead = this.sendAhead();
    const result = this.connection.executeQuery<R>(query);
    // All are on the wire; the statement's failure is read after BEGIN's, never left unhandled.
    result.catch(() => {});
    await ahead;
    return await result;
  }

  async *streamQuery<R>(query: CompiledQuery, chunkSize: number): AsyncIterableIterator<QueryResult<R>> {
    await this.sendAhead();
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
    if (pipelined.held.length > 0) await pipelined.sendAhead();
    if (pipelined.beginPending) {
      pipelined.beginPending = false;
      return;
    }
    await this.driver.commitTransaction(pipelined);
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    const pipelined = connection as PipelinedBegin;
    // Held statements never sent need not be: their transaction is gone either way.
    for (const held of pipelined.held.splice(0)) {
      const unsent = Promise.reject(new Error("the transaction rolled back before this statement was sent"));
      unsent.catch(() => {});
      held.settle(unsent);
    }
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
