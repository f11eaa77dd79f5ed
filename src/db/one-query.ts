// Two statements in one Query message, for a pool that writes its values into the SQL (a
// transaction pooler's, src/db/pool.ts): a read's request context and its statement
// (src/db/pipelined-transactions.ts).
//
// Why: through the pooler nothing is prepared, so each statement the extended protocol
// carries is Parse, Bind, Describe, Execute and Sync, and Postgres answers each Sync with a
// ReadyForQuery of its own. A read was BEGIN, the context, the statement and COMMIT that
// way: four statements, four answers to write, for the pooler to relay and for the client
// to read. The simple protocol's one Query message takes several statements separated by
// semicolons, and Postgres runs them as one transaction (an implicit transaction block),
// answering once at the end; `set_config(…, true)` lasts to its end, as it lasted to COMMIT,
// and statement_timeout set by the first applies to the second (Postgres arms it for each
// statement of the message). So a read is two statements and one answer; the pooler
// hands the server connection back at that answer, as it did at COMMIT's; what that buys
// through the pooler is measured in docs/benchmarks.md.
//
// The simple protocol has no parameters, so only statements whose values are all written
// into the SQL go this way (src/db/client-side-binding.ts); the rest go as before.
// What differs: a statement's failure fails the message, and postgres.js gives no result
// for the statements before it, so both statements report the same error.
import type { CompiledQuery, QueryResult } from "kysely";
import { boundInClient } from "./client-side-binding.ts";
import type { Sql } from "./pool.ts";

// kysely-postgres-js sends every statement with the extended protocol (`simple: false`),
// which takes one statement per message. The pool's reserved connections send a text
// that begins with this comment as one Query message instead (simpleProtocolForOneQueries).
const ONE_QUERY = "/* one query */ ";

// The statements as one query, or null when one of them keeps a parameter.
export function oneQuery(statements: readonly CompiledQuery[]): CompiledQuery | null {
  const bound = statements.map(boundInClient);
  if (bound.some((statement) => statement.parameters.length > 0)) return null;
  const last = bound[bound.length - 1]!;
  return { sql: ONE_QUERY + bound.map((statement) => statement.sql).join(";\n"), parameters: [], query: last.query, queryId: last.queryId };
}

// postgres.js answers a Query message of several statements with one result per
// statement that returned rows, which kysely-postgres-js hands on as the rows of one.
export function resultsOfOneQuery(answer: QueryResult<unknown>, expected: number): QueryResult<unknown>[] {
  const results = answer.rows;
  if (results.length !== expected || !results.every(Array.isArray)) {
    throw new Error(`one query of ${expected} statements answered ${results.length} results`);
  }
  return results.map((rows) => ({ rows: Array.from(rows as unknown[]) }));
}

// The pool, with reserved connections that send a one-query text with the simple protocol.
// Every statement of a transaction goes through its connection's `unsafe`, so the
// replacement is made once per reservation, not once per statement.
export function simpleProtocolForOneQueries(sql: Sql): Sql {
  return new Proxy(sql, {
    get(target, key, receiver) {
      if (key !== "reserve") return Reflect.get(target, key, receiver);
      return async () => {
        const reserved = await target.reserve();
        const unsafe: Sql["unsafe"] = <T extends unknown[]>(...[text, parameters, options]: Parameters<Sql["unsafe"]>) =>
          text.startsWith(ONE_QUERY) ? reserved.unsafe<T>(text).simple() : reserved.unsafe<T>(text, parameters, options);
        return new Proxy(reserved, {
          get: (connection, name, self) => name === "unsafe" ? unsafe : Reflect.get(connection, name, self),
        });
      };
    },
  });
}
