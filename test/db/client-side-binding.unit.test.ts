// src/db/client-side-binding.ts on its own: the literal written for each kind of value,
// the placeholders found where Postgres would find them and nowhere else, and every
// statement it cannot be sure of left with its parameters. What Postgres makes of the
// literals is client-side-binding.test.ts's.
import assert from "node:assert/strict";
import { CompiledQuery, type DatabaseConnection, type Driver, type QueryResult, sql } from "kysely";
import { bindingInClient, boundInClient, literal, withValuesWritten } from "../../src/db/client-side-binding.ts";
import { compileOnce } from "../../src/db/compile-once.ts";
import { AheadOfBegin, Prelude } from "../../src/db/pipelined-transactions.ts";

// Postgres's reading of an E'' string, for the cases below: a backslash escapes the next
// character, a doubled quote is one. Only what literal() can write is read.
function readEscapedString(text: string): string {
  assert.ok(text.startsWith("(E'") && text.endsWith("')"), text);
  const body = text.slice(3, -2);
  let value = "";
  for (let i = 0; i < body.length; i++) {
    const char = body[i]!;
    if (char === "\\") {
      const next = body[++i];
      assert.ok(next === "\\", `only doubled backslashes are written: ${text}`);
      value += next;
    } else if (char === "'") {
      assert.equal(body[++i], "'", `a quote inside is doubled: ${text}`);
      value += "'";
    } else {
      value += char;
    }
  }
  return value;
}

Deno.test("a string is written as an E'' literal that reads back as the string", () => {
  const strings = [
    "",
    "plain",
    "O'Brien",
    "''",
    "'",
    "\\",
    "\\'",
    "'\\",
    "ends with a backslash\\",
    "C:\\path\\to\\'file'",
    "\\x41 \\n \\t \\u0041 \\000",
    "$1 $$ $tag$ -- /* */ \" ;",
    "'); drop table guests; --",
    "Zoë 🏨 漢字 \u{1F600} \u200B",
    "line\nbreak\r\ttab",
    "\uD800 a lone surrogate",
  ];
  for (const value of strings) {
    assert.equal(readEscapedString(literal(value)!), value, JSON.stringify(value));
  }
});

Deno.test("a string with NUL is not written: it stays a parameter", () => {
  assert.equal(literal("a\u0000b"), null);
  assert.equal(literal("\u0000"), null);
  assert.equal(withValuesWritten("select $1", ["x\u0000"]), null);
});

Deno.test("a finite number is quoted as postgres.js writes it; a bigint is typed as postgres.js types it", () => {
  assert.equal(literal(42), "('42')");
  assert.equal(literal(-1.5), "('-1.5')");
  assert.equal(literal(0), "('0')");
  assert.equal(literal(-0), "('0')");
  assert.equal(literal(1e21), "('1e+21')");
  assert.equal(literal(5e-7), "('5e-7')");
  assert.equal(literal(Number.MAX_SAFE_INTEGER), "('9007199254740991')");
  assert.equal(literal(12345678901234567890n), "('12345678901234567890'::pg_catalog.int8)");
  assert.equal(literal(-3n), "('-3'::pg_catalog.int8)");
  for (const value of [NaN, Infinity, -Infinity]) assert.equal(literal(value), null, String(value));
});

Deno.test("a boolean and a Date are typed as postgres.js types them", () => {
  assert.equal(literal(true), "(true)");
  assert.equal(literal(false), "(false)");
  assert.equal(literal(new Date(0)), "('1970-01-01T00:00:00.000Z'::pg_catalog.timestamptz)");
  assert.equal(literal(new Date(Date.UTC(2027, 5, 1, 13, 45, 6, 789))), "('2027-06-01T13:45:06.789Z'::pg_catalog.timestamptz)");
  assert.equal(withValuesWritten("select $1 and $2", [true, false]), "select (true) and (false)");
});

Deno.test("every other kind of value stays a parameter", () => {
  const others: unknown[] = [
    null,
    undefined,
    new Date(Number.NaN),
    new Uint8Array([1, 2]),
    ["a", "b"],
    [],
    { a: 1 },
    Symbol("s"),
    () => 1,
    new String("boxed"),
    new Number(1),
  ];
  for (const value of others) {
    assert.equal(literal(value), null, String(value));
    assert.equal(withValuesWritten("select $1, $2", ["fine", value]), null, `one such value keeps them all: ${String(value)}`);
  }
});

Deno.test("placeholders are replaced in order, $10 apart from $1", () => {
  assert.equal(withValuesWritten("select $1, $2", ["a", 2]), "select (E'a'), ('2')");
  assert.equal(withValuesWritten("select $2, $1", ["a", 2]), "select ('2'), (E'a')");
  const ten = Array.from({ length: 11 }, (_, i) => `v${i + 1}`);
  const sql = "select " + ten.map((_, i) => `$${i + 1}`).reverse().join(",");
  assert.equal(
    withValuesWritten(sql, ten),
    "select (E'v11'),(E'v10'),(E'v9'),(E'v8'),(E'v7'),(E'v6'),(E'v5'),(E'v4'),(E'v3'),(E'v2'),(E'v1')",
  );
  assert.equal(withValuesWritten("select $1::uuid, $2::int", ["x", 3]), "select (E'x')::uuid, ('3')::int");
  assert.equal(withValuesWritten("select f($1)+$2-$3", ["a", 1, 2]), "select f((E'a'))+('1')-('2')");
  assert.equal(withValuesWritten("select 1$1", [1]), "select 1('1')", "a number ends before $");
});

Deno.test("a `$1` inside a string, an identifier, a comment or a dollar-quoted string is left alone", () => {
  const cases: [string, string][] = [
    ["select '$1', $1", "select '$1', (E'v')"],
    ["select 'it''s $1', $1", "select 'it''s $1', (E'v')"],
    ["select E'\\' $1', $1", "select E'\\' $1', (E'v')"],
    ["select e'\\\\', $1", "select e'\\\\', (E'v')"],
    ["select E'it''s $1', $1", "select E'it''s $1', (E'v')"],
    ["select \"$1\", $1", "select \"$1\", (E'v')"],
    ["select \"a\"\"$1\", $1", "select \"a\"\"$1\", (E'v')"],
    ["select U&'$1', $1", "select U&'$1', (E'v')"],
    ["select 1 -- $1\n, $1", "select 1 -- $1\n, (E'v')"],
    ["select 1 -- $1 ' \" $$\r, $1", "select 1 -- $1 ' \" $$\r, (E'v')"],
    ["select /* $1 */ $1", "select /* $1 */ (E'v')"],
    ["select /* a /* nested $1 */ still $1 */ $1", "select /* a /* nested $1 */ still $1 */ (E'v')"],
    ["select /* ' */ $1", "select /* ' */ (E'v')"],
    ["select $$ $1 ' $$, $1", "select $$ $1 ' $$, (E'v')"],
    ["select $tag$ $1 $$ $ta $tag$, $1", "select $tag$ $1 $$ $ta $tag$, (E'v')"],
    ["select $_é1$ $1 $_é1$, $1", "select $_é1$ $1 $_é1$, (E'v')"],
    ["select a$1b, $1", "select a$1b, (E'v')"],
    ["select é$1, $1", "select é$1, (E'v')"],
    ["select x.$1", "select x.(E'v')"],
    ["select 'a'\n'b', $1", "select 'a'\n'b', (E'v')"],
  ];
  for (const [sql, written] of cases) assert.equal(withValuesWritten(sql, ["v"]), written, sql);
});

Deno.test("SQL the scanner cannot be sure of is left with its parameters", () => {
  const unsure = [
    "select '$1", // unterminated string
    "select 'a'' $1", // its quote doubled: still open
    "select E'\\' $1", // an escaped quote: still open
    "select \"$1", // unterminated identifier
    "select /* $1", // unterminated comment
    "select /* /* */ $1", // a nested comment still open
    "select $$ $1", // unterminated dollar quote
    "select $a$ $1 $b$", // a dollar quote closed by another tag
    "select 'a\\b', $1", // a backslash in a standard string: standard_conforming_strings decides
    "select $ 1, $1", // a lone $
    "select $a, $1", // a $ opening nothing
    "select $2", // out of range
    "select $0, $1", // no $0
    "select $01", // not what Kysely writes
    "select $1a", // trailing junk
    "select $1$", // trailing junk
    "select $1, $1", // a parameter used twice
    "select 1", // a parameter never used
    "select a$1", // inside an identifier, so never used
  ];
  for (const sql of unsure) assert.equal(withValuesWritten(sql, ["v"]), null, sql);
  assert.equal(withValuesWritten("select $1", ["a", "b"]), null, "the second is never used");
});

Deno.test("a compiled query comes back with no parameters, a plain query that keeps its id", () => {
  const query = compileOnce((db) =>
    db.selectFrom("guests").select(["id", "first_name"]).where("id", "=", "1b6f3c39-0a1f-4a36-9d0f-6d7b6e2b8f11")
      .where("last_name", "like", "O'%").limit(20).offset(40).compile()
  )();
  const bound = boundInClient(query);
  assert.deepEqual(bound.parameters, []);
  assert.equal(bound.queryId, query.queryId);
  assert.equal(bound.query, query.query);
  assert.match(bound.sql, /"id" = \(E'1b6f3c39-0a1f-4a36-9d0f-6d7b6e2b8f11'\)/);
  assert.match(bound.sql, /like \(E'O''%'\) limit \('20'\) offset \('40'\)$/);

  const prelude = new Prelude(compileOnce((db) => sql<{ one: string }>`select set_config('app.x', ${"v"}, true) as one`.compile(db))());
  const ahead = new AheadOfBegin(compileOnce((db) => sql`select ${1}::int`.compile(db))());
  for (const special of [prelude, ahead]) {
    const plain = boundInClient(special);
    assert.ok(!(plain instanceof Prelude) && !(plain instanceof AheadOfBegin), "what reaches postgres.js is a plain query");
    assert.deepEqual(plain.parameters, []);
  }
});

Deno.test("a query with nothing to write, or that cannot be written, is passed on as it is", () => {
  const none = CompiledQuery.raw("select 1");
  assert.equal(boundInClient(none), none);
  const withBytes = CompiledQuery.raw("select $1", [new Uint8Array([1])]);
  assert.equal(boundInClient(withBytes), withBytes);
  const prelude = new Prelude(CompiledQuery.raw("select $1", [null]));
  assert.equal(boundInClient(prelude), prelude);
});

Deno.test("the driver sends every statement through boundInClient and hands back the connection it was given", async () => {
  const sent: CompiledQuery[] = [];
  const released: DatabaseConnection[] = [];
  const inner: DatabaseConnection = {
    executeQuery: <R>(query: CompiledQuery) => (sent.push(query), Promise.resolve({ rows: [] } as QueryResult<R>)),
    // deno-lint-ignore require-yield
    streamQuery: async function* <R>(query: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
      sent.push(query);
    },
  };
  const driver: Driver = {
    init: () => Promise.resolve(),
    acquireConnection: () => Promise.resolve(inner),
    beginTransaction: (connection) => connection.executeQuery(CompiledQuery.raw("begin")).then(() => {}),
    commitTransaction: () => Promise.resolve(),
    rollbackTransaction: () => Promise.resolve(),
    releaseConnection: (connection) => (released.push(connection), Promise.resolve()),
    destroy: () => Promise.resolve(),
  };
  const bound = bindingInClient(driver);
  const connection = await bound.acquireConnection();
  await bound.beginTransaction(connection, {});
  await connection.executeQuery(CompiledQuery.raw("select $1, $2", ["x", 2]));
  for await (const _ of connection.streamQuery(CompiledQuery.raw("select $1", ["y"]), 10));
  await connection.executeQuery(CompiledQuery.raw("select $1", [null]));
  await bound.releaseConnection(connection);
  assert.deepEqual(sent.map(({ sql, parameters }) => [sql, parameters]), [
    ["begin", []],
    ["select (E'x'), ('2')", []],
    ["select (E'y')", []],
    ["select $1", [null]],
  ]);
  assert.deepEqual(released, [inner]);
});
