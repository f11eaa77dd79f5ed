// When the database goes away under a request: a restart, a failover, the pooler
// dropping its clients, a backend terminated by an operator. Such a request answers 503
// and the pool heals by itself; nothing else about the request is decided here.
//
// Why connections are guarded too, not only errors mapped: postgres.js (3.4.9) crashes
// the whole process when a statement is sent on a reserved connection whose socket has
// closed. The write is deferred to a later tick, finds no socket and throws where no
// caller can catch it (porsager/postgres#1208, open upstream). Kysely's transactions run
// on reserved connections and, after a failed statement, send ROLLBACK on the same one.
// So once a connection has lost its session, nothing more is sent on it: no ROLLBACK
// (the server rolls back a transaction whose session ended), and it is not handed back
// either: the pool has already taken it back as closed, and handing it back would put
// it among the open ones. Then the whole pool is replaced (RenewablePool, src/db/pool.ts),
// because a connection that closed with a write pending never recovers in postgres.js.
// A statement sent before any error has said the session is over meets the same crash;
// absorbingOrphanedConnectionErrors (at the end) keeps the process alive through it.
import type { CompiledQuery, DatabaseConnection, Driver, QueryResult, TransactionSettings } from "kysely";
import type postgres from "postgres";
import type { Logger } from "../logging/logger.ts";
import type { RenewablePool, Sql } from "./pool.ts";

// postgres.js's own codes for a connection that is gone, and the socket's.
const lostConnectionCodes = new Set([
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "CONNECT_TIMEOUT",
  "ECONNRESET",
  "ECONNREFUSED",
  "EPIPE",
  "ETIMEDOUT",
]);

// The driver's own, for a connection that stopped answering (see the deadlines below).
const STALLED = "CONNECTION_STALLED";

// SQLSTATEs that mean the database cannot serve the request now, whatever it was.
const unavailableStates = new Set([
  "57P01", // admin_shutdown: the server is shutting down or the backend was terminated
  "57P02", // crash_shutdown
  "57P03", // cannot_connect_now: starting up or in recovery
  "53300", // too_many_connections
  "53400", // configuration_limit_exceeded
]);

type ErrorFields = { code?: unknown; severity?: unknown };

function fieldsOf(error: unknown): ErrorFields {
  return typeof error === "object" && error !== null ? error as ErrorFields : {};
}

// The database could not be reached, or ended the session: the request can be retried.
export function isDatabaseUnavailable(error: unknown): boolean {
  const { code } = fieldsOf(error);
  if (typeof code !== "string") return false;
  return lostConnectionCodes.has(code) || code === STALLED || unavailableStates.has(code) || code.startsWith("08");
}

// The session behind the connection is over: the socket closed, the connection stopped
// answering, the server sent a FATAL error, after which it closes the connection, or a
// connection exception (class 08). PgBouncer reports its own failures as 08P01 ("server
// conn crashed?", "server login has been failing") and then closes the client; it names
// no severity postgres.js reads as such, so the class is what tells.
export function endsSession(error: unknown): boolean {
  const { code, severity } = fieldsOf(error);
  return (typeof code === "string" && (lostConnectionCodes.has(code) || code === STALLED || code.startsWith("08"))) ||
    severity === "FATAL" || severity === "PANIC";
}

// A pool is replaced only when a connection it had established was lost (see
// RenewablePool): not for a connection that could not be made, which leaves nothing
// behind, and which a new pool would meet again at once while the database is away.
// 08P01 is the transaction pooler's: its client connection was established, and it is
// closing it.
const establishedConnectionLost = new Set([
  "CONNECTION_CLOSED",
  "ECONNRESET",
  "EPIPE",
  STALLED,
  "57P01",
  "57P02",
  "08006",
  "08003",
  "08P01",
]);

export function poisonsPool(error: unknown): boolean {
  const { code } = fieldsOf(error);
  return typeof code === "string" && establishedConnectionLost.has(code);
}

// The last resort against a hang: postgres.js leaves some requests waiting for ever
// after a connection is lost (a statement queued behind a connection that closed, a
// connection request queued in a pool that was ended). A statement runs at most the
// statement_timeout the API's roles have (8 s, supabase/migrations) before Postgres cuts
// it, so one that has not answered after STATEMENT_DEADLINE_MS is on a connection that
// stopped answering. A connection not handed out after ACQUIRE_DEADLINE_MS is one the
// pool cannot give. Either way the request answers 503 and the pool is replaced.
export const STATEMENT_DEADLINE_MS = 10_000;
export const ACQUIRE_DEADLINE_MS = 5_000;

function stalled(what: string, ms: number): Error {
  return Object.assign(new Error(`${what} did not answer within ${ms} ms`), { code: STALLED });
}

async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => timer = setTimeout(() => reject(stalled(what, ms)), ms)),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

// One pool and the driver over it. A pool is replaced when one of its connections lost
// its session; the connections still out keep their generation's driver to the end.
type Generation = { sql: Sql; driver: Driver; ready: Promise<void>; lost(): void };

class GuardedConnection implements DatabaseConnection {
  lostWith: unknown = null;

  constructor(readonly connection: DatabaseConnection, readonly generation: Generation) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (this.lostWith !== null) throw this.lostWith;
    try {
      return await within(this.connection.executeQuery<R>(query), STATEMENT_DEADLINE_MS, "the database connection");
    } catch (error) {
      this.noteFailure(error);
      throw error;
    }
  }

  async *streamQuery<R>(query: CompiledQuery, chunkSize: number): AsyncIterableIterator<QueryResult<R>> {
    if (this.lostWith !== null) throw this.lostWith;
    try {
      yield* this.connection.streamQuery<R>(query, chunkSize);
    } catch (error) {
      this.noteFailure(error);
      throw error;
    }
  }

  private noteFailure(error: unknown) {
    if (endsSession(error)) this.lostWith ??= error;
    if (poisonsPool(error)) this.generation.lost();
  }
}

// A driver wrapped around this one (src/db/pipelined-transactions.ts) hands back its own
// connection, which holds this one's as `connection`.
function guardOf(connection: DatabaseConnection): GuardedConnection {
  let current: unknown = connection;
  while (current !== null && typeof current === "object" && !(current instanceof GuardedConnection)) {
    current = (current as { connection?: unknown }).connection;
  }
  if (!(current instanceof GuardedConnection)) throw new Error("not a connection of guardingLostConnections' driver");
  return current;
}

// A driver over the pool's current pool (made by `driverFor`), with nothing sent on or
// handed back from a connection whose session ended, and the pool renewed when one did.
export function guardingLostConnections(pool: RenewablePool, driverFor: (sql: Sql) => Driver): Driver {
  let generation: Generation | null = null;
  const current = (): Generation => {
    const sql = pool.current;
    if (generation?.sql !== sql) {
      const driver = driverFor(sql);
      generation = { sql, driver, ready: driver.init(), lost: () => pool.renew(sql) };
    }
    return generation;
  };
  const driverOf = (connection: DatabaseConnection) => guardOf(connection).generation.driver;
  const lost = (connection: DatabaseConnection) => guardOf(connection).lostWith !== null;
  return {
    init: async () => await current().ready,
    acquireConnection: async () => {
      const now = current();
      await now.ready;
      const acquiring = now.driver.acquireConnection();
      try {
        return new GuardedConnection(await within(acquiring, ACQUIRE_DEADLINE_MS, "the connection pool"), now);
      } catch (error) {
        if (poisonsPool(error)) {
          now.lost();
          // A connection handed out after all goes back to its pool (ended by then).
          acquiring.then((late) => now.driver.releaseConnection(late)).catch(() => {});
        }
        throw error;
      }
    },
    beginTransaction: (connection, settings: TransactionSettings) => driverOf(connection).beginTransaction(connection, settings),
    commitTransaction: (connection) => driverOf(connection).commitTransaction(connection),
    // The server has rolled back the transaction of a session that ended.
    rollbackTransaction: async (connection) => {
      if (!lost(connection)) await driverOf(connection).rollbackTransaction(connection);
    },
    savepoint: (connection, name, compile) => driverOf(connection).savepoint!(connection, name, compile),
    rollbackToSavepoint: (connection, name, compile) => driverOf(connection).rollbackToSavepoint!(connection, name, compile),
    releaseSavepoint: (connection, name, compile) => driverOf(connection).releaseSavepoint!(connection, name, compile),
    releaseConnection: async (connection) => {
      if (!lost(connection)) await driverOf(connection).releaseConnection(guardOf(connection).connection);
    },
    destroy: async () => {
      if (generation) await generation.driver.destroy();
    },
  };
}

// postgres.js defers a write under 1 KiB to the next turn of the event loop. When the
// connection closes in between, the deferred write finds no socket and throws a
// TypeError from the timer, where no caller can catch it (porsager/postgres#1154 and
// #1208, open upstream), and Deno ends the process: a statement sent on a reserved
// connection whose session has just ended does it, before any error has told the guard
// above that the session is over. What tells that error apart is where it was thrown,
// the driver's deferred write (`nextWrite` in postgres's src/connection.js) at the top
// of its stack; the message is the engine's and says nothing of it.
const deferredWriteFrame = /^\s*at (?:\S+\.)?nextWrite \(\S*\/postgres\/(?:[^/]+\/)?src\/connection\.js:\d+:\d+\)$/;

export function isWriteAfterClose(error: unknown): boolean {
  if (!(error instanceof TypeError) || typeof error.stack !== "string") return false;
  const firstFrame = error.stack.split("\n").find((line) => /^\s*at /.test(line));
  return firstFrame !== undefined && deferredWriteFrame.test(firstFrame);
}

// Two failures of postgres.js that no request awaits, each of which would end the
// function's process while it holds other requests; both are logged and absorbed here,
// and anything else still ends the process.
//
// postgres.js runs a query of its own on every new connection before the connection's
// first statement: it reads the array types (fetchArrayTypes, connection.js), and drops
// that query's promise. When the connection is lost at that moment, as when a
// transaction pooler closes its clients while Postgres restarts, the rejection reaches
// no one, and Deno ends the process on an unhandled rejection. The request that opened
// the connection is not left waiting: its own statement fails with the connection. So a
// rejection no one handled that says the database is unavailable is absorbed.
//
// A deferred write after the close (above) leaves the statement it carried unanswered and
// its connection holding the unsent bytes, never to write again: the pool is replaced,
// which fails that statement at once (CONNECTION_DESTROYED) instead of at its deadline.
// Returns what removes the listeners.
export function absorbingOrphanedConnectionErrors(
  target: EventTarget,
  logger: Pick<Logger, "warn">,
  pool: RenewablePool,
): () => void {
  const absorbRejection = (event: Event) => {
    const { reason } = event as PromiseRejectionEvent;
    if (!isDatabaseUnavailable(reason)) return;
    event.preventDefault();
    const { code } = fieldsOf(reason);
    logger.warn("a database connection was lost under a query no request awaited", {
      code,
      reason: reason instanceof Error ? reason.message : String(reason),
    });
  };
  const absorbError = (event: Event) => {
    const { error } = event as ErrorEvent;
    if (!isWriteAfterClose(error)) return;
    event.preventDefault();
    logger.warn("the database driver wrote to a connection that had closed; the pool is replaced", {
      reason: (error as TypeError).message,
    });
    pool.renew(pool.current);
  };
  target.addEventListener("unhandledrejection", absorbRejection);
  target.addEventListener("error", absorbError);
  return () => {
    target.removeEventListener("unhandledrejection", absorbRejection);
    target.removeEventListener("error", absorbError);
  };
}
