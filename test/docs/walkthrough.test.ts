// The README's curl walk-through, run as written with bash, curl and jq against the
// local stack, so the README cannot drift from the API. One substitution: sign-in
// needs Supabase Auth, which cannot be built here yet (issue 2), so the command that
// signs in is replaced by a token for a user made the way test/support/session.ts
// makes them, and when the stack runs on another port base (PMS_PORT_BASE) the
// README's API URL names that stack's. Every later line runs unchanged.
import assert from "node:assert/strict";
import { withFixture } from "../support/api.ts";
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

// The README's address of the API, on the default ports.
const API_LINE = /^API=http:\/\/127\.0\.0\.1:54321\/functions\/v1\/api\/v1$/m;

const SIGN_IN = /^TOKEN=\$\(curl -s \$API\/auth\/sign-in [\s\S]*?\| jq -r \.accessToken\)$/m;

async function runAs(token: string, script: string): Promise<string[]> {
  assert.match(script, SIGN_IN, "the walk-through signs in first");
  assert.match(script, API_LINE, "the walk-through names the API on the default ports");
  const runnable = script.replace(API_LINE, `API=${stack.v1}`).replace(SIGN_IN, `TOKEN=${token}`);
  const run = await new Deno.Command("bash", {
    args: ["-euo", "pipefail", "-c", runnable],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stdout = new TextDecoder().decode(run.stdout);
  assert.equal(run.code, 0, `the walk-through failed: ${new TextDecoder().decode(run.stderr)}\n${stdout}`);
  return stdout.trim().split("\n");
}

Deno.test("the README's curl walk-through: a tenant, a property, a unit, a guest, a stay checked in and out, its cleaning task", () =>
  withFixture(async ({ user }) => {
    const owner = await user("walkthrough");
    const lines = await runAs(owner.token, walkThrough());

    // The three lines the README says it prints, in order.
    assert.equal(lines.length, 3, lines.join("\n"));
    assert.equal(lines[0], '"checked_in"');
    assert.equal(lines[1], '"checked_out"');
    assert.match(lines[2]!, /^"Clean Room 1 after [0-9A-Z]{8}"$/);
  }));

Deno.test("the README's integration walk-through: a key, the property's stay, a payment, its retry replayed, the balance settled", () =>
  withFixture(async ({ sql, user }) => {
    const owner = await user("integration-walkthrough");
    const lines = await runAs(owner.token, `${walkThrough()}\n${integrationWalkThrough()}`);
    assert.deepEqual(lines.slice(3), ["36000", "204", "idempotent-replayed: true", "0"], lines.join("\n"));
    const payments = await sql`
      select p.external_reference, p.source from public.payments p
      join public.tenant_memberships m on m.tenant_id = p.tenant_id where m.user_id = ${owner.id}`;
    assert.deepEqual(payments.map((row) => ({ ...row })), [{ external_reference: "acme-1001", source: "external" }], "one payment");
  }));
