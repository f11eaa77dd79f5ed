// The Kysely types over the generated database types, checked by the compiler, and
// createDb's refusal of a pool that would read rows unlike them. No database: a pool
// connects on its first query, and these make none.
import assert from "node:assert/strict";
import type { Insertable, Selectable, Updateable } from "kysely";
import { createDb, type DB } from "../../src/db/database.ts";
import { createPool } from "../../src/db/pool.ts";

// A database URL nothing is asked of.
const NOWHERE = "postgresql://nobody@127.0.0.1:9/none";

type Is<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

// Checked by the compiler: each entry only type-checks as `true` if the mapping is right.
const mapping: [
  Is<Selectable<DB["reservations"]>["balance"], number | null>,
  Is<"balance" | "stay" extends keyof Insertable<DB["reservations"]> ? true : false, false>,
  Is<Extract<"balance" | "stay", keyof Updateable<DB["reservations"]>>, never>,
  Is<Pick<Insertable<DB["tenants"]>, "id" | "name">, { id?: string | undefined; name: string }>,
  Is<Selectable<DB["tenant_memberships"]>["role"], "owner" | "admin" | "staff">,
] = [true, true, true, true, true];

Deno.test("the Kysely types follow the generated Row, Insert and Update types", () => {
  assert.deepEqual(mapping, [true, true, true, true, true]);
});

Deno.test("createDb refuses a pool whose rows would not match the generated types", async () => {
  // The pool connects on its first query, which never comes.
  const sql = createPool(NOWHERE, { max: 1 });
  try {
    assert.throws(() => createDb(sql), TypeError);
    assert.doesNotThrow(() => createDb(createPool(NOWHERE, { max: 1, generatedTypes: true })));
  } finally {
    await sql.end();
  }
});

