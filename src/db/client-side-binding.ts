// Client-side binding, for a pool that does not prepare its statements (a transaction
// pooler's, src/db/pool.ts): a statement's values are written into its SQL as literals,
// and it goes to postgres.js with no parameters.
//
// Why: postgres.js 3.4 sends a statement with parameters that it does not prepare as
// Parse, Describe and Flush, and binds it only once Postgres has described its
// parameters: a round trip more per such statement, and nothing written after it until
// that answer is in, so the pipelined writes of src/db/pipelined-transactions.ts (a read
// is BEGIN, the request context, the statement and COMMIT in one write) would be split at
// each statement with parameters. A statement without parameters is sent as Parse, Bind,
// Execute and Sync at once. psycopg does the same through PgBouncer (ClientCursor).
//
// What is written, and why it means what the parameter meant:
// - A string, as E'…' with every backslash and every quote doubled. In an E'' string a
//   backslash always escapes and '' is a quote, whatever standard_conforming_strings says,
//   so the literal's text is the string's. The connection's encoding is UTF-8 (createDb
//   binds in the client only then: writesValuesIntoSql, src/db/pool.ts), where no byte of
//   a multibyte character is a quote or a backslash. A string with NUL is not written: the SQL goes as a NUL-terminated string.
// - A finite number, quoted, as postgres.js writes it ('' + value).
//   postgres.js sends strings and numbers as parameters of no type (inferType gives 0), so
//   Postgres resolves their type from where they stand; a quoted literal has no type
//   either, and Postgres resolves it the same way (a column's type, an operator's other
//   side, text where nothing says).
// - A bigint, as a literal of type int8: postgres.js sends a bigint as an int8 parameter.
// - A boolean, as true or false: postgres.js sends one as a bool parameter.
// - A valid Date, as its ISO text typed timestamptz: postgres.js sends a Date as a
//   timestamptz parameter, serialized with toISOString. An invalid one stays a parameter,
//   for postgres.js to refuse as it would.
// Each literal is put in parentheses, which Postgres's grammar takes wherever it takes a
// parameter, so that it never runs into the text beside it (a quote, a subscript).
//
// Anything else goes as it came, with its parameters: null and undefined (postgres.js
// sends null as a parameter of no type, and `= NULL` is not that under
// transform_null_equals; undefined it refuses), bytes, arrays, objects (postgres.js types
// and serializes these itself). So does a statement whose SQL this
// scanner cannot read for certain (below), or which uses a parameter twice or never: a
// parameter used twice has one type, two literals may each get their own.
//
// One difference remains, from postgres.js: once Postgres has described a parameter,
// postgres.js serializes the value by the described type, and for json and jsonb that is
// JSON.stringify (a string becomes a JSON string), for boolean 't' or 'f' (any string is
// 'f'), for bytea hex. A literal is read as the string itself, as postgres.js's own first
// run of a prepared statement sends it. So a string for such a column or cast is cast
// from text first (`${json}::text::jsonb`, as the code does), where both agree.
//
// The values are in the statement's text: Postgres's log line of a failed statement
// (log_min_error_statement) and pg_stat_activity show them, where with parameters they
// show `$1` (docs/database-connection.md).
//
// The scanner is written here because neither postgres.js nor Kysely offers one for
// parameters of unknown type: Kysely's compiler writes `$n` and keeps the values apart,
// and postgres.js only ever sends them apart.
import type { AbortableOperationOptions, CompiledQuery, DatabaseConnection, Driver, QueryResult } from "kysely";

// The driver, with every statement's values written into its SQL where they can be.
export function bindingInClient(driver: Driver): Driver {
  return {
    init: () => driver.init(),
    acquireConnection: async () => new ClientBoundConnection(await driver.acquireConnection()),
    beginTransaction: (connection, settings) => driver.beginTransaction(connection, settings),
    commitTransaction: (connection) => driver.commitTransaction(connection),
    rollbackTransaction: (connection) => driver.rollbackTransaction(connection),
    savepoint: (connection, name, compile) => driver.savepoint!(connection, name, compile),
    rollbackToSavepoint: (connection, name, compile) => driver.rollbackToSavepoint!(connection, name, compile),
    releaseSavepoint: (connection, name, compile) => driver.releaseSavepoint!(connection, name, compile),
    releaseConnection: (connection) => driver.releaseConnection((connection as ClientBoundConnection).connection),
    destroy: () => driver.destroy(),
  };
}

class ClientBoundConnection implements DatabaseConnection {
  constructor(readonly connection: DatabaseConnection) {}

  executeQuery<R>(query: CompiledQuery, options?: AbortableOperationOptions): Promise<QueryResult<R>> {
    return this.connection.executeQuery<R>(boundInClient(query), options);
  }

  streamQuery<R>(query: CompiledQuery, chunkSize: number, options?: AbortableOperationOptions): AsyncIterableIterator<QueryResult<R>> {
    return this.connection.streamQuery<R>(boundInClient(query), chunkSize, options);
  }
}

// The query with its values in its SQL and no parameters, or the query itself when it has
// none or they cannot all be written. A new plain object: the query may be of a class of
// its own (Prelude, AheadOfBegin), which the layers above have already read.
export function boundInClient<R>(query: CompiledQuery<R>): CompiledQuery<R> {
  if (query.parameters.length === 0) return query;
  const sql = withValuesWritten(query.sql, query.parameters);
  return sql === null ? query : { sql, parameters: [], query: query.query, queryId: query.queryId };
}

// The literal for a value, or null for one that is sent as a parameter.
export function literal(value: unknown): string | null {
  if (typeof value === "string") {
    return value.includes("\u0000") ? null : `(E'${value.replaceAll("\\", "\\\\").replaceAll("'", "''")}')`;
  }
  if (typeof value === "number") return Number.isFinite(value) ? `('${"" + value}')` : null;
  if (typeof value === "bigint") return `('${value}'::pg_catalog.int8)`;
  if (typeof value === "boolean") return value ? "(true)" : "(false)";
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : `('${value.toISOString()}'::pg_catalog.timestamptz)`;
  return null;
}

// `sql` with each `$n` replaced by the literal of parameters[n - 1], or null when that
// cannot be done for certain. The placeholders are found as Postgres's lexer finds them:
// outside quoted strings, quoted identifiers, comments and dollar-quoted strings, and
// not inside an identifier (`a$1` is one).
export function withValuesWritten(sql: string, parameters: readonly unknown[]): string | null {
  const literals = parameters.map(literal);
  if (literals.includes(null)) return null;
  const used = new Array<boolean>(parameters.length).fill(false);
  let written = "";
  let copiedTo = 0;
  let at = 0;
  while (at < sql.length) {
    const code = sql.charCodeAt(at);
    if (code === QUOTE) {
      at = endOfQuoted(sql, at, "standard");
    } else if (code === DOUBLE_QUOTE) {
      at = endOfQuoted(sql, at, "identifier");
    } else if (code === MINUS && sql.charCodeAt(at + 1) === MINUS) {
      at = endOfLine(sql, at);
    } else if (code === SLASH && sql.charCodeAt(at + 1) === STAR) {
      at = endOfComment(sql, at);
    } else if (code === DOLLAR && isDigit(sql.charCodeAt(at + 1))) {
      let end = at + 1;
      while (isDigit(sql.charCodeAt(end))) end++;
      const digits = sql.slice(at + 1, end);
      const index = Number(digits) - 1;
      // `$01` and `$1a` are not what Kysely writes: leave them to Postgres.
      if (digits.startsWith("0") || isIdentifierPart(sql.charCodeAt(end))) return null;
      if (!(index < parameters.length) || used[index]) return null;
      used[index] = true;
      written += sql.slice(copiedTo, at) + literals[index]!;
      copiedTo = at = end;
    } else if (code === DOLLAR) {
      at = endOfDollarQuoted(sql, at);
    } else if (isIdentifierStart(code)) {
      const start = at;
      while (isIdentifierPart(sql.charCodeAt(at))) at++;
      // E'…': a string whose backslashes escape, whatever standard_conforming_strings says.
      if (at - start === 1 && (code === 69 || code === 101) && sql.charCodeAt(at) === QUOTE) at = endOfQuoted(sql, at, "escaped");
    } else if (isDigit(code)) {
      // A number (1, 1.5e3, 0x1F, 1_000): no `$` in it, unlike an identifier.
      while (isDigit(sql.charCodeAt(at)) || isAsciiLetter(sql.charCodeAt(at)) || sql.charCodeAt(at) === 95 || sql.charCodeAt(at) === 46) at++;
    } else {
      at++;
    }
    if (at === UNSURE) return null;
  }
  if (used.includes(false)) return null;
  return written + sql.slice(copiedTo);
}

// What an end-of-token function answers when the SQL is not what it expects.
const UNSURE = -1;

const QUOTE = 39;
const DOUBLE_QUOTE = 34;
const BACKSLASH = 92;
const DOLLAR = 36;
const MINUS = 45;
const SLASH = 47;
const STAR = 42;

const isDigit = (code: number) => code >= 48 && code <= 57;
const isAsciiLetter = (code: number) => (code >= 65 && code <= 90) || (code >= 97 && code <= 122);
// Postgres's ident_start and ident_cont: any character past ASCII counts as a letter.
const isIdentifierStart = (code: number) => isAsciiLetter(code) || code === 95 || code >= 128;
const isIdentifierPart = (code: number) => isIdentifierStart(code) || isDigit(code) || code === DOLLAR;

// From the opening quote at `at` to just past the closing one; a doubled quote is one
// inside. In a standard string a backslash is literal or an escape as
// standard_conforming_strings says, which is not known here: unsure. Unterminated: unsure.
function endOfQuoted(sql: string, at: number, kind: "standard" | "escaped" | "identifier"): number {
  const quote = sql.charCodeAt(at);
  for (let i = at + 1; i < sql.length; i++) {
    const code = sql.charCodeAt(i);
    if (code === BACKSLASH && kind === "escaped") {
      i++;
    } else if (code === BACKSLASH && kind === "standard") {
      return UNSURE;
    } else if (code === quote) {
      if (sql.charCodeAt(i + 1) !== quote) return i + 1;
      i++;
    }
  }
  return UNSURE;
}

// A `--` comment runs to the end of its line.
function endOfLine(sql: string, at: number): number {
  for (let i = at; i < sql.length; i++) {
    const code = sql.charCodeAt(i);
    if (code === 10 || code === 13) return i;
  }
  return sql.length;
}

// `/* … */`, which nest in Postgres.
function endOfComment(sql: string, at: number): number {
  let depth = 0;
  for (let i = at; i < sql.length - 1; i++) {
    if (sql.charCodeAt(i) === SLASH && sql.charCodeAt(i + 1) === STAR) {
      depth++;
      i++;
    } else if (sql.charCodeAt(i) === STAR && sql.charCodeAt(i + 1) === SLASH) {
      depth--;
      i++;
      if (depth === 0) return i + 1;
    }
  }
  return UNSURE;
}

// `$tag$ … $tag$` (the tag may be empty). A `$` that opens no such string: unsure.
function endOfDollarQuoted(sql: string, at: number): number {
  let end = at + 1;
  if (isIdentifierStart(sql.charCodeAt(end))) {
    while (isIdentifierPart(sql.charCodeAt(end)) && sql.charCodeAt(end) !== DOLLAR) end++;
  }
  if (sql.charCodeAt(end) !== DOLLAR) return UNSURE;
  const tag = sql.slice(at, end + 1);
  const close = sql.indexOf(tag, end + 1);
  return close === -1 ? UNSURE : close + tag.length;
}
