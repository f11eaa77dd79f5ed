// What the database's refusals become for a client (src/http/database-refusals.ts), against the
// constraints the migrations actually make: every name the table of messages knows
// exists, and real violations of a column's check, a named rule with a message and
// one without come back as the sentences a client reads.
import assert from "node:assert/strict";
import postgres from "postgres";
import { httpErrorFromDatabase, rules } from "../../src/http/database-refusals.ts";
import { stack } from "../support/stack.ts";

Deno.test("every rule the error table names is a constraint the database has or a rule its functions raise", async () => {
  const sql = postgres(stack.dbUrl, { max: 1, onnotice: () => {} });
  try {
    // A unique index reports its own name as the constraint's.
    const rows = await sql<{ name: string }[]>`
      select conname as name from pg_constraint where connamespace = 'public'::regnamespace
      union
      select relname from pg_class where relkind = 'i' and relnamespace = 'public'::regnamespace`;
    const functions = await sql<{ body: string }[]>`
      select prosrc as body from pg_proc where pronamespace in ('public'::regnamespace, 'private'::regnamespace)`;
    const raised = new Set(functions.flatMap(({ body }) => [...body.matchAll(/constraint\s*=\s*'([a-z_]+)'/g)].map(([, name]) => name!)));
    const known = new Set([...rows.map((row) => row.name), ...raised]);
    assert.deepEqual(Object.keys(rules).filter((name) => !known.has(name)), []);
    assert.deepEqual([...raised].filter((name) => !rules[name]), [], "a rule the functions raise that the table lacks");
  } finally {
    await sql.end();
  }
});

// The statement's error, from a transaction that is rolled back either way.
async function refusal(statement: string): Promise<unknown> {
  const sql = postgres(stack.dbUrl, { max: 1, onnotice: () => {} });
  try {
    return await sql.begin(async (trx) => {
      await trx.unsafe(statement);
      throw new Error(`not refused: ${statement}`);
    }).catch((error: unknown) => error);
  } finally {
    await sql.end();
  }
}

Deno.test("a violated check is a 422: a column's check names the field, a rule across columns says itself", async () => {
  // Check constraints are judged before the foreign keys, so no parent rows are needed.
  const cases: [string, string][] = [
    [
      "insert into public.tenants (name, sender_email) values ('Errors test', 'not an address')",
      "The value of senderEmail is not allowed.",
    ],
    [
      `insert into public.api_keys (tenant_id, all_properties, name, key_id, secret_hash, last_four, expires_at)
       values (gen_random_uuid(), true, 'k', 'aaaaaaaaaaaaaaaa', sha256('k'::bytea), 'abcd', now() - interval '1 day')`,
      "expiresAt must be later than now.",
    ],
    [
      `insert into public.notifications (tenant_id, recipient_id, recipient_type, template_key, channel, status)
       values (gen_random_uuid(), gen_random_uuid(), 'guest', 'checkin_reminder', 'email', 'sent')`,
      "The values break the rule notifications_sent_at_exactly_when_sent.",
    ],
  ];
  for (const [statement, detail] of cases) {
    const error = await refusal(statement);
    assert.equal((error as { code?: string }).code, "23514", String(error));
    const http = httpErrorFromDatabase(error);
    assert.deepEqual([http?.status, http?.detail], [422, detail], statement);
  }
});
