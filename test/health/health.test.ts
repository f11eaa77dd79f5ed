import assert from "node:assert/strict";
import postgres from "postgres";
import { stack } from "../support/stack.ts";

async function authAnswers(): Promise<boolean> {
  try {
    const response = await fetch(`${stack.authUrl}/health`);
    await response.body?.cancel();
    return response.ok;
  } catch {
    return false;
  }
}

// Health must tell the truth about each dependency, whatever state the stack is in.
Deno.test("health reports the database and Supabase Auth as they really are", async () => {
  const sql = postgres(stack.dbUrl, { max: 1 });
  const [row] = await sql<{ one: number }[]>`select 1 as one`;
  await sql.end();
  assert.equal(row?.one, 1);
  const authUp = await authAnswers();

  const response = await fetch(`${stack.v1}/health`);
  const body = await response.json();
  assert.equal(body.checks.database, "ok");
  assert.equal(body.checks.auth, authUp ? "ok" : "unreachable");
  assert.equal(response.status, authUp ? 200 : 503);
  if (!authUp) assert.equal(response.headers.get("content-type"), "application/problem+json");
});

Deno.test("health needs no credentials", async () => {
  const response = await fetch(`${stack.v1}/health`);
  await response.body?.cancel();
  assert.notEqual(response.status, 401);
});
