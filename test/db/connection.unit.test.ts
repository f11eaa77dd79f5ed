// Which database a function's pool connects to, and whether a transaction pooler is in
// between (src/db/connection.ts): the rule docs/database-connection.md states.
import assert from "node:assert/strict";
import { databaseConnection } from "../../src/db/connection.ts";

const direct = "postgresql://postgres:secret@db.abcdefghijklmnop.supabase.co:5432/postgres";
const transactionPooler = "postgresql://postgres.abcdefghijklmnop:secret@aws-0-eu-west-1.pooler.supabase.com:6543/postgres";
const sessionPooler = "postgresql://postgres.abcdefghijklmnop:secret@aws-0-eu-west-1.pooler.supabase.com:5432/postgres";
const localPooler = "postgresql://postgres:postgres@127.0.0.1:54329/postgres";

const from = (env: Record<string, string>) => databaseConnection((name) => env[name]);

Deno.test("the platform's SUPABASE_DB_URL alone is a direct connection: session mode, statements prepared", () => {
  assert.deepEqual(from({ SUPABASE_DB_URL: direct }), { url: direct, mode: "session" });
});

Deno.test("DATABASE_URL wins over SUPABASE_DB_URL, and Supavisor's port 6543 is transaction mode", () => {
  assert.deepEqual(from({ SUPABASE_DB_URL: direct, DATABASE_URL: transactionPooler }), { url: transactionPooler, mode: "transaction" });
  // Supavisor's session mode, on 5432 of the same host, keeps a server connection per client.
  assert.deepEqual(from({ SUPABASE_DB_URL: direct, DATABASE_URL: sessionPooler }), { url: sessionPooler, mode: "session" });
});

Deno.test("DATABASE_POOL_MODE names the mode a port does not tell, and wins over the port", () => {
  assert.deepEqual(from({ SUPABASE_DB_URL: direct, DATABASE_URL: localPooler, DATABASE_POOL_MODE: "transaction" }), {
    url: localPooler,
    mode: "transaction",
  });
  assert.deepEqual(from({ SUPABASE_DB_URL: localPooler }), { url: localPooler, mode: "session" });
  assert.deepEqual(from({ DATABASE_URL: transactionPooler, DATABASE_POOL_MODE: "session" }).mode, "session");
});

Deno.test("an unknown mode or no URL at all stops the function at start-up", () => {
  assert.throws(() => from({ SUPABASE_DB_URL: direct, DATABASE_POOL_MODE: "statement" }), /DATABASE_POOL_MODE must be transaction or session/);
  assert.throws(() => from({}), /SUPABASE_DB_URL \(or DATABASE_URL\) must name the database/);
  // Empty counts as unset, as a secret set to nothing would be.
  assert.deepEqual(from({ SUPABASE_DB_URL: direct, DATABASE_URL: "", DATABASE_POOL_MODE: "" }), { url: direct, mode: "session" });
});

Deno.test("a URL with several hosts names no one port: session unless the mode is named", () => {
  const multihost = "postgresql://postgres:secret@db1:5432,db2:6543/postgres";
  assert.equal(from({ SUPABASE_DB_URL: multihost }).mode, "session");
  assert.equal(from({ SUPABASE_DB_URL: multihost, DATABASE_POOL_MODE: "transaction" }).mode, "transaction");
});
