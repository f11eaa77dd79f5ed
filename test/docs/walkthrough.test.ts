// The README's curl walk-throughs, run exactly as written with bash, curl and jq against
// the local stack, so the README cannot drift from the API: they sign up, sign in with
// Supabase Auth and go on from there. No line is replaced; the API's address is the
// README's default unless API is set in the environment (a stack on another
// PMS_PORT_BASE), which the walk-through's first line allows for.
import assert from "node:assert/strict";
import { Cleanup } from "../support/api.ts";
import { adminSql } from "../support/session.ts";
import { stack } from "../support/stack.ts";

const readme = await Deno.readTextFile(new URL("../../README.md", import.meta.url));

function bashBlockAfter(heading: string): string {
  const section = readme.split(heading)[1];
  assert.ok(section, `the README has its section ${heading}`);
  const script = /```bash\n([\s\S]*?)```/.exec(section)?.[1];
  assert.ok(script, `${heading} has a bash block`);
  return script;
}

const walkThrough = () => bashBlockAfter("### A walk-through with curl");
// It continues the first one, with its variables.
const integrationWalkThrough = () => bashBlockAfter("### An integration's walk-through with curl");

const DEFAULT_API = "http://127.0.0.1:54321/functions/v1/api/v1";
const SIGN_UP_EMAIL = /^EMAIL=owner-\$RANDOM\$RANDOM@example\.com/m;

// Runs `script`; the user it signed up (and so the tenant it made) is removed afterwards.
async function run(script: string, check: (lines: string[], ownerId: string) => Promise<void>): Promise<void> {
  assert.match(script, /^API=\$\{API:-http:\/\/127\.0\.0\.1:54321\/functions\/v1\/api\/v1\}$/m);
  assert.match(script, SIGN_UP_EMAIL, "the walk-through signs up a new address");
  assert.match(script, /\$API\/auth\/sign-up /, "the walk-through signs up");
  assert.match(script, /^TOKEN=\$\(curl -s \$API\/auth\/sign-in /m, "and then signs in");
  const env: Record<string, string> = stack.v1 === DEFAULT_API ? {} : { API: stack.v1 };
  const sql = adminSql();
  const cleanup = new Cleanup();
  const [{ started }] = await sql<[{ started: Date }]>`select now() as started`;
  try {
    const result = await new Deno.Command("bash", {
      args: ["-euo", "pipefail", "-c", script],
      env,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stdout = new TextDecoder().decode(result.stdout);
    const stderr = new TextDecoder().decode(result.stderr);
    // The address it signs up with is its own (SIGN_UP_EMAIL): the one user of that shape made since it began.
    const owners = await sql<{ id: string }[]>`
      select id from auth.users where email like 'owner-%@example.com' and created_at >= ${started}`;
    for (const owner of owners) cleanup.users.add(owner.id);
    assert.equal(result.code, 0, `the walk-through failed: ${stderr}\n${stdout}`);
    assert.equal(owners.length, 1, "the walk-through signed up one user with Supabase Auth");
    const owner = owners[0]!;
    await check(stdout.trim().split("\n"), owner.id);
  } finally {
    try {
      await cleanup.run(sql);
    } finally {
      await sql.end();
    }
  }
}

Deno.test("the README's curl walk-through: sign up, sign in, a tenant, a property, a unit, a guest, a stay checked in and out, its cleaning task", () =>
  run(walkThrough(), async (lines) => {
    // The three lines the README says it prints, in order.
    assert.equal(lines.length, 3, lines.join("\n"));
    assert.equal(lines[0], '"checked_in"');
    assert.equal(lines[1], '"checked_out"');
    assert.match(lines[2]!, /^"Clean Room 1 after [0-9A-Z]{8}"$/);
  }));

Deno.test("the README's integration walk-through: a key, the property's stay, a payment, its retry replayed, the balance settled", () => {
  const sql = adminSql();
  return run(`${walkThrough()}\n${integrationWalkThrough()}`, async (lines, ownerId) => {
    assert.deepEqual(lines.slice(3), ["36000", "204", "idempotent-replayed: true", "0"], lines.join("\n"));
    const payments = await sql`
      select p.external_reference, p.source from public.payments p
      join public.tenant_memberships m on m.tenant_id = p.tenant_id where m.user_id = ${ownerId}`;
    assert.deepEqual(payments.map((row) => ({ ...row })), [{ external_reference: "acme-1001", source: "external" }], "one payment");
  }).finally(() => sql.end());
});
