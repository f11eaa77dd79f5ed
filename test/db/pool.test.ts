// The pool's parsers, on values as real Postgres writes them.
import assert from "node:assert/strict";
import { createPool, openConnections } from "../../src/db/pool.ts";
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
