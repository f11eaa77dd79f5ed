// The pool's parsers on their own, on text as Postgres writes it: dates and timestamps
// as RFC 3339, bigint as a number that must be exact. pool.test.ts reads the same values
// from the database itself. No database here: a pool connects on its first query.
import assert from "node:assert/strict";
import { createPool, parsesAsGeneratedTypes, writesValuesIntoSql } from "../../src/db/pool.ts";

const NOWHERE = "postgresql://nobody@127.0.0.1:9/none";
const oid = { int8: 20, date: 1082, timestamp: 1114, timestamptz: 1184 };

function parsers() {
  const sql = createPool(NOWHERE, { max: 1, generatedTypes: true });
  const all = sql.options.parsers as Record<number, (raw: string) => unknown>;
  const parser = (type: number) => {
    const parse = all[type];
    assert.ok(parse, `a parser for type ${type}`);
    return parse;
  };
  return { sql, timestamptz: parser(oid.timestamptz), timestamp: parser(oid.timestamp), date: parser(oid.date), int8: parser(oid.int8) };
}

Deno.test("a pool made with the generated types parses as they describe; one without does not", async () => {
  const { sql } = parsers();
  const plain = createPool(NOWHERE, { max: 1 });
  try {
    assert.equal(parsesAsGeneratedTypes(sql), true);
    assert.equal(parsesAsGeneratedTypes(plain), false);
  } finally {
    await sql.end();
    await plain.end();
  }
});

Deno.test("timestamps become RFC 3339: a T between date and time, the offset with minutes; dates stay as they are", async () => {
  const { sql, timestamptz, timestamp, date } = parsers();
  try {
    assert.equal(timestamptz("2026-11-22 09:30:00.123456+00"), "2026-11-22T09:30:00.123456+00:00");
    assert.equal(timestamptz("2026-11-22 04:30:00-05"), "2026-11-22T04:30:00-05:00");
    assert.equal(timestamptz("2026-11-22 15:00:00+05:30"), "2026-11-22T15:00:00+05:30");
    assert.equal(timestamp("2026-11-22 09:30:00.5"), "2026-11-22T09:30:00.5");
    assert.equal(date("2026-11-22"), "2026-11-22");
    assert.equal(timestamptz("infinity"), "infinity");
  } finally {
    await sql.end();
  }
});

Deno.test("bigint becomes a number while it is exact, and is refused past 2^53", async () => {
  const { sql, int8 } = parsers();
  try {
    assert.equal(int8("12000"), 12000);
    assert.equal(int8("-9007199254740991"), -9007199254740991);
    assert.throws(() => int8("9007199254740993"), RangeError);
  } finally {
    await sql.end();
  }
});

Deno.test("a pool through a transaction pooler prepares nothing; a session's prepares as postgres.js does by default", async () => {
  const transaction = createPool(NOWHERE, { max: 1, mode: "transaction" });
  const session = createPool(NOWHERE, { max: 1, mode: "session" });
  const unsaid = createPool(NOWHERE, { max: 1 });
  try {
    assert.equal(transaction.options.prepare, false);
    assert.equal(session.options.prepare, true);
    assert.equal(unsaid.options.prepare, true);
  } finally {
    await Promise.all([transaction.end(), session.end(), unsaid.end()]);
  }
});

Deno.test("values are written into the SQL of a pool that does not prepare, and only in UTF-8", async () => {
  const pools = {
    transaction: createPool(NOWHERE, { max: 1, mode: "transaction" }),
    session: createPool(NOWHERE, { max: 1, mode: "session" }),
    utf8: createPool(`${NOWHERE}?client_encoding=UTF8`, { max: 1, mode: "transaction" }),
    sjis: createPool(`${NOWHERE}?client_encoding=SJIS`, { max: 1, mode: "transaction" }),
  };
  try {
    const written = Object.fromEntries(Object.entries(pools).map(([name, sql]) => [name, writesValuesIntoSql(sql)]));
    assert.deepEqual(written, { transaction: true, session: false, utf8: true, sjis: false });
  } finally {
    await Promise.all(Object.values(pools).map((sql) => sql.end()));
  }
});
