// The currencies the document lists (src/http/schemas.ts) are exactly those the database
// accepts (private.is_iso_currency): a request the document allows is never refused for
// its currency code, and none it refuses would have been stored.
import assert from "node:assert/strict";
import postgres from "postgres";
import { isoCurrencies } from "../../src/http/schemas.ts";
import { stack } from "../support/stack.ts";

Deno.test("the document's currency codes are exactly the ones the database accepts", async () => {
  const sql = postgres(stack.dbUrl, { max: 1, onnotice: () => {} });
  try {
    // Every three capital letters, AAA to ZZZ.
    const rows = await sql<{ code: string }[]>`
      with letters as (select chr(ascii('A') + n) as letter from generate_series(0, 25) as n)
      select a.letter || b.letter || c.letter as code
      from letters a, letters b, letters c
      where private.is_iso_currency(a.letter || b.letter || c.letter)
      order by 1`;
    assert.deepEqual(rows.map((row) => row.code), [...isoCurrencies].sort());
  } finally {
    await sql.end();
  }
});
