// The pool's parsers, on values as real Postgres writes them.
import assert from "node:assert/strict";
import { absorbingOrphanedConnectionErrors } from "../../src/db/connection-loss.ts";
import { createPool, fixedPool, knownArrayTypes, openConnections } from "../../src/db/pool.ts";
import { refusingPooler } from "../support/refusing-pooler.ts";
import { stack } from "../support/stack.ts";

Deno.test("dates and timestamps leave the pool as RFC 3339 text, in UTC", async () => {
  const sql = createPool(stack.dbUrl, { max: 1, generatedTypes: true });
  try {
    const [row] = await sql<Record<string, string>[]>`
      select timestamptz '2026-11-22 09:30:00.123456+00' as fraction,
             timestamptz '2026-11-22 09:30:00+00' as whole,
             timestamptz '2026-11-22 04:30:00-05' as west,
             timestamptz '2026-11-22 15:00:00+05:30' as half_hour,
             timestamp '2026-11-22 09:30:00.5' as local,
             date '2026-11-22' as day,
             timestamptz 'infinity' as endless`;
    assert.deepEqual(row, {
      fraction: "2026-11-22T09:30:00.123456+00:00",
      whole: "2026-11-22T09:30:00+00:00",
      west: "2026-11-22T09:30:00+00:00",
      half_hour: "2026-11-22T09:30:00+00:00",
      local: "2026-11-22T09:30:00.5",
      day: "2026-11-22",
      endless: "infinity",
    });
    // And every one of them parses as the instant or day it names.
    assert.equal(new Date(row!.fraction!).toISOString(), "2026-11-22T09:30:00.123Z");
  } finally {
    await sql.end();
  }
});

Deno.test("a session in another time zone keeps its offset, written with minutes", async () => {
  const sql = createPool(stack.dbUrl, { max: 1, generatedTypes: true });
  const inZone = (zone: string) =>
    sql.begin(async (tx) => {
      await tx`select set_config('TimeZone', ${zone}, true)`;
      const [row] = await tx<{ at: string }[]>`select timestamptz '2026-11-22 09:30:00+00' as at`;
      return row!.at;
    });
  try {
    assert.equal(await inZone("America/New_York"), "2026-11-22T04:30:00-05:00");
    assert.equal(await inZone("Asia/Kolkata"), "2026-11-22T15:00:00+05:30");
  } finally {
    await sql.end();
  }
});

Deno.test("a pool's connections open before any request needs them, and an unreachable database only counts fewer", async () => {
  const name = `pms-open-${crypto.randomUUID().slice(0, 8)}`;
  const sql = createPool(stack.dbUrl, { max: 4, applicationName: name });
  const admin = createPool(stack.dbUrl, { max: 1 });
  try {
    assert.equal(await openConnections(sql, 3), 3);
    const [row] = await admin<{ open: number }[]>`
      select count(*)::int as open from pg_stat_activity where application_name = ${name}`;
    assert.equal(row!.open, 3, "three server sessions of the pool, before its first query of work");
  } finally {
    await sql.end();
    await admin.end();
  }
  const nowhere = createPool("postgresql://postgres:postgres@127.0.0.1:1/postgres", { max: 2 });
  try {
    assert.equal(await openConnections(nowhere, 2), 0);
  } finally {
    await nowhere.end({ timeout: 0 });
  }
});

Deno.test("arrays of text and uuid leave the pool as arrays, even on a connection whose array-type query failed", async () => {
  // The first connection's array-type query is refused as PgBouncer refuses it while
  // Postgres restarts; the connection then comes back by itself to Postgres.
  const pooler = refusingPooler({ relayLaterTo: new URL(stack.dbUrl) });
  const sql = createPool(pooler.url, { max: 1, generatedTypes: true, mode: "transaction" });
  // The array-type query's rejection, which no one awaits (src/db/connection-loss.ts).
  const stopAbsorbing = absorbingOrphanedConnectionErrors(globalThis, { warn: () => {} }, fixedPool(sql));
  try {
    // The first statement meets the refusal; the connection then comes back by itself.
    await sql`select 1`.catch(() => {});
    let row: { texts: unknown; ids: unknown; none: unknown } | undefined;
    for (let attempt = 0; attempt < 5 && row === undefined; attempt++) {
      row = await sql<{ texts: unknown; ids: unknown; none: unknown }[]>`
        select array['plain', 'with space', 'a "quote", a \\ and a comma', null, '', 'NULL']::text[] as texts,
               array['5f0c6bd2-3a8e-4c55-9f4e-0d6f2b3c1a77']::uuid[] as ids,
               '{}'::text[] as none`.then(([first]) => first, () => undefined);
    }
    assert.deepEqual(row, {
      texts: ["plain", "with space", 'a "quote", a \\ and a comma', null, "", "NULL"],
      ids: ["5f0c6bd2-3a8e-4c55-9f4e-0d6f2b3c1a77"],
      none: [],
    });
    // And a JavaScript array sent as a parameter arrives as the array it is.
    const sent = ["plain", 'a "quote", a \\ and a comma', null, "", "NULL", "{braces}"];
    const [echoed] = await sql<{ texts: unknown; count: number }[]>`
      select ${sent}::text[] as texts, cardinality(${sent}::text[]) as count`;
    assert.deepEqual(echoed, { texts: sent, count: sent.length });
  } finally {
    stopAbsorbing();
    await sql.end({ timeout: 0 });
    await pooler.close();
  }
});

Deno.test("every array type a table or view of the schema holds is one the pool knows without asking", async () => {
  const sql = createPool(stack.dbUrl, { max: 1 });
  try {
    const rows = await sql<{ type: string; columns: string[] }[]>`
      select format_type(a.atttypid, null) as type, array_agg(c.relname || '.' || a.attname order by 1) as columns
      from pg_attribute a
      join pg_class c on c.oid = a.attrelid
      join pg_namespace n on n.oid = c.relnamespace
      join pg_type t on t.oid = a.atttypid
      where n.nspname in ('public', 'private') and c.relkind in ('r', 'v', 'm', 'p')
        and a.attnum > 0 and not a.attisdropped and t.typcategory = 'A'
      group by 1`;
    assert.ok(rows.length > 0, "the schema holds arrays");
    const unknown = rows.filter((row) => !(knownArrayTypes as readonly string[]).includes(row.type));
    assert.deepEqual(unknown, [], "array columns of a type src/db/pool.ts does not parse itself");
  } finally {
    await sql.end();
  }
});
