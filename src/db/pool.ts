import net from "node:net";
import postgres from "postgres";
import { parse as parseArray } from "postgres-array";

export type Sql = postgres.Sql;

// What the pool's connections reach (src/db/connection.ts decides it for the functions):
// - "session": Postgres itself, or a session-mode pooler. A connection is one server
//   session for its whole life, and postgres.js prepares each statement once per
//   connection (named prepared statements, postgres.js's default) and then only binds it.
// - "transaction": a transaction pooler (Supavisor's port 6543, PgBouncer in transaction
//   mode). A server connection is this connection's only until its transaction ends;
//   the next transaction, or the next statement outside one, may meet another server
//   connection that never saw a statement prepared on the first (PgBouncer 1.18 does
//   not carry them over, and Supavisor's documentation says to turn them off). So
//   nothing is prepared: every statement is parsed as the unnamed statement, which
//   lives only until the next Parse, in the same transaction. The pool-wide setting
//   wins over a query's own `prepare: true` (kysely-postgres-js's, the worker's).
//   postgres.js would then have each statement with parameters described before binding
//   it, a round trip more per such statement, so createDb writes the values of such a
//   pool's statements into their SQL (src/db/client-side-binding.ts).
// Whatever the mode, the request's state is transaction-local: set_config(…, true)
// only, never SET, LISTEN, session advisory locks or temporary tables.
export type PoolMode = "session" | "transaction";

export type PoolOptions = {
  max?: number;
  applicationName?: string;
  // Parse values the way src/db/database.types.ts describes them; the Kysely pool needs this.
  generatedTypes?: boolean;
  // "session" unless said: what tests and tools connecting directly get.
  mode?: PoolMode;
};

const oid = { int8: 20, date: 1082, timestamp: 1114, timestamptz: 1184, textArray: 1009, uuidArray: 2951 };

// The generated types describe values as PostgREST puts them in JSON: dates and timestamps
// as strings, bigint as a number. postgres.js by default makes the former Dates and leaves
// bigint a string, and the types would lie about every such column read through them.
const generatedTypeParsers = {
  timestamp: {
    to: oid.timestamptz,
    from: [oid.date, oid.timestamp, oid.timestamptz],
    // A Date still binds as before; a string goes as written, in the offset it names.
    serialize: (value: string | Date): string => value instanceof Date ? value.toISOString() : value,
    parse: toRfc3339,
  },
  bigint: {
    to: oid.int8,
    from: [oid.int8],
    serialize: (value: number): string => String(value),
    parse: parseSafeInteger,
  },
  // postgres.js 3.4.9 learns the array types from a query of its own, the first thing it
  // sends on each new connection. When that query fails and the server then closes the
  // connection (PgBouncer's "server login has been failing" while Postgres restarts), the
  // connection reconnects by itself with the failed query still taken for in flight: the
  // next startup settles it, and the connection is open from then on without ever fetching
  // the types. A pool whose connections all came back so would read every array as its
  // text ('{a,b}') and send a JavaScript array as 'a,b', which Postgres refuses. So the
  // arrays the schema holds are known here (test/db/pool.test.ts holds the list to the
  // schema's array columns, and reproduces the failure).
  textArray: {
    to: oid.textArray,
    from: [oid.textArray],
    serialize: arrayLiteral,
    parse: parseElements,
  },
  uuidArray: {
    to: oid.uuidArray,
    from: [oid.uuidArray],
    serialize: arrayLiteral,
    parse: parseElements,
  },
} satisfies Record<string, postgres.PostgresType>;

// The array types the generated-types pool reads and writes without that query.
export const knownArrayTypes = ["text[]", "uuid[]"] as const;

function parseElements(raw: string): (string | null)[] {
  return parseArray(raw);
}

// An array's text form: each element quoted, its backslashes and quotes escaped; null as NULL.
function arrayLiteral(values: readonly (string | null)[]): string {
  return `{${values.map((value) => value === null ? "NULL" : `"${value.replace(/[\\"]/g, "\\$&")}"`).join(",")}}`;
}

// Postgres writes `2026-11-22 09:30:00.123456+00`; JSON clients expect RFC 3339, which
// differs only in the `T` and the offset's minutes. A date (`2026-11-22`) has neither.
// Plain string operations rather than regular expressions: every timestamp of every row
// a list answers passes through here, and the replaces showed in the function's profile.
function toRfc3339(raw: string): string {
  const space = raw.indexOf(" ");
  if (space === -1) return raw;
  const iso = `${raw.slice(0, space)}T${raw.slice(space + 1)}`;
  const end = iso.length;
  const sign = iso.charCodeAt(end - 3);
  const hoursOnlyOffset = (sign === PLUS || sign === MINUS) && isDigit(iso.charCodeAt(end - 2)) && isDigit(iso.charCodeAt(end - 1));
  return hoursOnlyOffset ? `${iso}:00` : iso;
}

const PLUS = 43;
const MINUS = 45;
const isDigit = (code: number) => code >= 48 && code <= 57;

// Amounts are bigint minor units; past 2^53 a number silently rounds, so the query fails instead.
function parseSafeInteger(raw: string): number {
  const value = Number(raw);
  if (!Number.isSafeInteger(value)) throw new RangeError(`bigint ${raw} does not fit in a JavaScript number`);
  return value;
}

// Whether createDb (src/db/database.ts) writes the values of the pool's statements into
// their SQL (src/db/client-side-binding.ts): when the pool does not prepare them (transaction
// mode), and speaks UTF-8, as postgres.js asks unless the URL names another client_encoding
// (`?client_encoding=…`). In an encoding such as SJIS or BIG5 a multibyte character's second
// byte may be a backslash, and would swallow the one that doubles it.
export function writesValuesIntoSql(sql: Sql): boolean {
  const encoding = sql.options.connection.client_encoding;
  return !sql.options.prepare && (encoding === undefined || /^utf-?8$/i.test(String(encoding)));
}

export function parsesAsGeneratedTypes(sql: Sql): boolean {
  const { parsers } = sql.options;
  return parsers[oid.int8] === generatedTypeParsers.bigint.parse &&
    [oid.date, oid.timestamp, oid.timestamptz].every((type) => parsers[type] === generatedTypeParsers.timestamp.parse) &&
    [oid.textArray, oid.uuidArray].every((type) => parsers[type] === parseElements);
}

// One pool per function instance, created by the entrypoint at start-up.
export function createPool(url: string, options: PoolOptions = {}): Sql {
  const settings = {
    max: options.max ?? 10,
    idle_timeout: 30,
    connect_timeout: 10,
    onnotice: () => {},
    prepare: (options.mode ?? "session") === "session",
    // Every timestamp leaves the database in UTC, whatever the server's default. Both
    // are startup parameters, which PgBouncer keeps per client and sets on whichever
    // server connection the client is given (test/db/pooler.test.ts); docs/database-connection.md
    // says what is known of a hosted pooler.
    connection: { application_name: options.applicationName ?? "pms", TimeZone: "UTC" },
    socket: withoutNagle(),
  };
  return options.generatedTypes ? postgres(url, { ...settings, types: generatedTypeParsers }) : postgres(url, settings);
}

// postgres.js writes what it sends in one write while that is under 1 KiB, and writes it
// out at once each time it reaches 1 KiB. With Nagle's algorithm on, as node:net's sockets
// have it unless told otherwise, a write behind one that is not yet acknowledged waits
// for the acknowledgement, and the server sends that with its answer: a pipelined batch
// over 1 KiB (a read whose request context carries the claims written into its SQL,
// src/db/client-side-binding.ts) would wait a round trip in its middle. So the pool's
// sockets are TCP_NODELAY, as node-postgres's and libpq's are; postgres.js offers no
// setting for it, only the socket (test/db/client-side-binding.test.ts counts the round
// trips). The hosts of a URL that names several are taken in turn, as postgres.js does.
function withoutNagle() {
  let next = 0;
  return ({ host: hosts, port: ports, path }: { host: string[]; port: number[]; path: string | false }) => {
    if (path) return net.connect(path);
    const at = next++ % hosts.length;
    const [host, port] = [hosts[at]!, ports[at] ?? ports[0]!];
    const socket = net.connect({ host, port });
    socket.setNoDelay(true);
    // postgres.js names the server for TLS by the socket's host, as its own sockets carry it.
    return Object.assign(socket, { host, port });
  };
}

// The entrypoint's pool, replaced by a new one when the database went away under it.
// After a lost connection postgres.js can keep a connection it reconnects from ever
// sending its startup message (a write left pending at the close stays queued), so a pool
// that lost connections is ended rather than trusted to heal (src/db/connection-loss.ts).
export type RenewablePool = {
  readonly current: Sql;
  // `broken` is the pool the failure came from: a failure reported late, from a pool
  // already replaced, replaces nothing.
  renew(broken: Sql): void;
};

export function renewablePool(open: () => Sql): RenewablePool {
  let current = open();
  return {
    get current() {
      return current;
    },
    renew(broken) {
      if (broken !== current) return;
      current = open();
      // No grace period: whatever still waits on the old pool's connections is settled
      // with an error now rather than left to hang.
      broken.end({ timeout: 0 }).catch(() => {});
    },
  };
}

// Opens up to `count` of the pool's connections now, each with a statement of nothing,
// rather than on the first requests that find none free: a connection is a TCP and a
// SCRAM handshake, whose key derivation is milliseconds of the function's CPU, and a
// fresh worker's first requests arrive together. A connection that cannot open now is
// opened when a request needs it, as it would have been.
export async function openConnections(sql: Sql, count: number): Promise<number> {
  const opened = await Promise.allSettled(Array.from({ length: count }, () => sql`select`.execute()));
  return opened.filter((result) => result.status === "fulfilled").length;
}

// A pool that is never replaced, for code handed a plain pool.
export function fixedPool(sql: Sql): RenewablePool {
  return { current: sql, renew() {} };
}
