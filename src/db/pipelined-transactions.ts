// Kysely's driver, wrapped so that no request waits for a round trip to Postgres it could
// do without. The API's hot paths (a read by id, a list) are bound by round trips, not by
// CPU: each is a few statements, and every answer waited for before the next statement is
// sent adds a round trip's latency to the request. So statements that must run in order
// are written to the connection together, and their answers read afterwards (postgres.js
// sends each query as it is made and matches the answers to them in order).
//
// Three uses of that, all decided here, below Kysely, so that handlers and queries are
// plain Kysely code:
//
// - A transaction's BEGIN goes with its first statement instead of on its own. A write
//   (BEGIN, the request context, the handler's statements, COMMIT) waits for one round
//   trip fewer, and a transaction that ran nothing sends neither BEGIN nor COMMIT.
//
// - After a prelude (`eachStatementAfter`), the transaction goes statement by statement:
//   each statement Kysely runs is sent as BEGIN, the prelude, the statement and COMMIT in
//   one write, a transaction of its own. The request scope (src/tenancy/request-scope.ts)
//   makes the request context its reads' prelude: the claims, the role, the tenant, the
//   session check and the caller's role in one statement. So each statement of a GET
//   carries the request's context in the same round trip, RLS applies to it as to any
//   statement of a write, and a read by id costs one round trip in all, instead of one
//   for the context and one more for COMMIT. The prelude's answer for each statement is
//   kept (`Prelude.results`) for the scope to judge before anything read is answered.
//
// - A statement may go ahead of a transaction's BEGIN (`aheadOfBegin`), as a transaction
//   of its own, in the same write as BEGIN and the first statement: work that must commit
//   whatever the transaction does, without a round trip of its own.
//
// Why a read may go statement by statement: under read committed (Postgres's default,
// and this project's) a statement sees what was committed when it began, whether it is
// the first statement of its transaction or the fifth, so reads lose no consistency they
// had in one transaction. What they do lose is what only one transaction gives: a lock or
// a setting outliving its statement, one now() for all, and all-or-nothing: a write
// commits with its own statement, whatever the next one does. So handlers are given such
// a transaction as `Reads` (src/db/reads.ts), which offers no writes, and
// test/db/reads.test.ts shows what a read may and may not rely on.
//
// Through a transaction pooler (src/db/pool.ts), the pooler gives the client a server
// connection with BEGIN and takes it back only when an answer says the transaction has
// ended, COMMIT's or ROLLBACK's: whatever the client wrote in between, however pipelined,
// reaches that one server connection, so a prelude's settings are there for its
// statement and gone for the next client (test/db/pooler.test.ts shows both through
// PgBouncer, and that a transaction begun right behind another's COMMIT still keeps its
// own). With prepared statements off there, postgres.js would have each statement with
// parameters described before binding it and write nothing behind it until then,
// splitting the writes above at each such statement. So below this driver, through a
// pooler, the values are written into the SQL (src/db/client-side-binding.ts): what this
// driver writes reaches postgres.js without parameters, and a read by id is one round
// trip, as on a direct connection. A statement with a value that is not written (a null,
// a boolean, a list) still goes with its parameters, and its write is split there.
// There, too, a prelude and its statement go as one Query message of two statements
// instead of BEGIN, the two and COMMIT (src/db/one-query.ts): Postgres runs them as one
// transaction and answers once.
import {
  CompiledQuery,
  type DatabaseConnection,
  type Driver,
  type QueryCompiler,
  type QueryResult,
  type Transaction,
  type TransactionSettings,
} from "kysely";
import { oneQuery, resultsOfOneQuery } from "./one-query.ts";

// The driver with both: what createDb (src/db/database.ts) gives Kysely. `oneQueryReads`
// for a pool whose values are written into the SQL and whose connections send a one-query
// text as one Query message (src/db/one-query.ts).
export function pipelined(driver: Driver, options: { oneQueryReads?: boolean } = {}): Driver {
  return new BeginWithFirstStatement(driver, options.oneQueryReads ?? false);
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

// A statement sent ahead of a transaction's BEGIN: it runs as a transaction of its own
// (it commits as soon as it ends, whatever the transaction after it does) and goes in the
// same write as BEGIN and the transaction's first statement, so it costs no round trip of
// its own. For a write that must count however the request ends and must not hold its
// row locks until then: the external API's rate-limit counter. `result` is its answer;
// nothing waits for it until the caller does.
export class AheadOfBegin<R> implements CompiledQuery<R> {
  readonly sql: string;
  readonly parameters: readonly unknown[];
  readonly query: CompiledQuery<R>["query"];
  readonly queryId: CompiledQuery<R>["queryId"];
  result: Promise<QueryResult<R>> | null = null;

  constructor(statement: CompiledQuery<R>) {
    ({ sql: this.sql, parameters: this.parameters, query: this.query, queryId: this.queryId } = statement);
  }
}

// Sends `statement` ahead of the transaction's BEGIN (see AheadOfBegin) and answers at
// once, with the statement's answer to come in `result`. Call it before the transaction's
// first statement.
export async function aheadOfBegin<DB, R>(
  db: Transaction<DB>,
  statement: CompiledQuery<R>,
): Promise<{ result: Promise<QueryResult<R>> }> {
  const ahead = new AheadOfBegin(statement);
  await db.executeQuery(ahead);
  if (!ahead.result) throw new Error("aheadOfBegin needs a transaction of createDb's Kysely");
  return { result: ahead.result };
}

// From here on the transaction goes statement by statement, each after `statement` (see
// above): for a transaction of reads. Call it before the transaction's first statement.
export async function eachStatementAfter<DB, R>(db: Transaction<DB>, statement: CompiledQuery<R>): Promise<Prelude<R>> {
  const prelude = new Prelude(statement);
  await db.executeQuery(prelude);
  if (!prelude.taken) throw new Error("eachStatementAfter needs a transaction of createDb's Kysely");
  return prelude;
}

// Runs the prelude in a transaction of its own with no statement after it, for work
// that ran none.
export async function runPrelude<DB, R>(db: Transaction<DB>, prelude: Prelude<R>): Promise<void> {
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

  constructor(readonly connection: DatabaseConnection, readonly oneQueryReads: boolean) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (query instanceof Prelude) return await this.takePrelude(query);
    if (query instanceof AheadOfBegin) return this.sendAhead(query);
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

  // Written now, with BEGIN still pending: the transaction's first statement takes BEGIN
  // along after it. Its failure is read by whoever awaits `result`.
  sendAhead(ahead: AheadOfBegin<unknown>): QueryResult<never> {
    if (!this.beginPending || this.prelude) {
      throw new Error("a statement ahead of BEGIN must come before its transaction's first statement");
    }
    ahead.result = this.connection.executeQuery(ahead);
    ahead.result.catch(() => {});
    return { rows: [] };
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
    const both = statement && this.oneQueryReads ? oneQuery([prelude, statement]) : null;
    if (both) return await this.inOneQuery<R>(prelude, both);
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

  // The prelude and its statement as one Query message, one transaction. A failure of
  // either fails both with its error: the message stops at it, and no result of the
  // statements before it comes back. Under RLS a statement after a context that fails its
  // check finds nothing of the tenant, so what such a statement can fail with is the
  // database's own trouble (a timeout, a lost connection), never what it read.
  async inOneQuery<R>(prelude: Prelude<unknown>, both: CompiledQuery): Promise<QueryResult<R>> {
    const results = this.connection.executeQuery<unknown>(both).then((answer) => resultsOfOneQuery(answer, 2));
    const before = results.then(([context]) => context!);
    before.catch(() => {});
    prelude.results.push(before);
    const [, result] = await results;
    return result as QueryResult<R>;
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
  constructor(private readonly driver: Driver, private readonly oneQueryReads: boolean) {}

  init() {
    return this.driver.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    return new PipelinedBegin(await this.driver.acquireConnection(), this.oneQueryReads);
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const pipelined = connection as PipelinedBegin;
    // Isolation levels and access modes go their own way, as the driver sends them.
    if (Object.values(settings).some((value) => value !== undefined)) {
      return await this.driver.beginTransaction(pipelined.connection, settings);
    }
    pipelined.beginPending = true;
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return this.end(connection as PipelinedBegin, (pipelined) => this.driver.commitTransaction(pipelined));
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return this.end(connection as PipelinedBegin, (pipelined) => this.driver.rollbackTransaction(pipelined));
  }

  // A transaction whose BEGIN was never sent has nothing to commit or roll back.
  private async end(pipelined: PipelinedBegin, finish: (connection: PipelinedBegin) => Promise<void>): Promise<void> {
    pipelined.prelude = null;
    if (pipelined.beginPending) {
      pipelined.beginPending = false;
      return;
    }
    await finish(pipelined);
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
