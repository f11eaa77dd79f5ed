// The documents' curl walk-throughs, run exactly as written with bash, curl and jq against
// the local stack, so the documents cannot drift from the API: the README's first
// walk-through signs up, sets up a stay, checks it in, runs the notifications worker as the
// schedule does and sees the welcome email delivered; docs/api.md's integration
// walk-through and its lists' counts continue it in the same shell. No line is replaced: the API's address is
// the README's default unless API is set in the environment (a stack on another
// PMS_PORT_BASE), which the first line allows for, and the walk-through reads the stack's
// keys and capture URL from `npm run stack:status` itself, from the checkout.
import assert from "node:assert/strict";
import { Cleanup } from "../support/api.ts";
import { docBlock, runDocBlock } from "../support/doc-blocks.ts";
import { adminSql } from "../support/session.ts";
import { stack } from "../support/stack.ts";

const walkThrough = () => docBlock("README.md#A first walk-through: from sign-up to a booking and a delivered notification");
// They continue the first one, with its variables.
const integrationWalkThrough = () => docBlock("docs/api.md#An integration's walk-through with curl");
const countsWalkThrough = () => docBlock("docs/api.md#Lists: pages and counts");

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
    const result = await runDocBlock(script, env);
    const { stdout, stderr } = result;
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

// What the first walk-through prints, line by line, as its comments say.
const FIRST_LINES = 10;
function checkFirstWalkThrough(lines: string[]): void {
  assert.equal(lines[0], "8", "eight weekend days of June priced");
  assert.equal(lines[1], '{"code":"DBL","available":1,"total":42000}', "the double is free, at 120.00 + 150.00 + 150.00");
  assert.equal(lines[2], "42000", "the stay is priced from the calendar");
  assert.equal(lines[3], '"checked_in"');
  assert.equal(lines[4], '{"events":1,"sent":1}', "the worker made the check-in's event its email and sent it");
  assert.equal(lines[5], "sent: Welcome to Seaside House, Ana", "the worker sent it");
  assert.equal(lines[6], "delivered", "SendGrid's double reported it delivered");
  assert.equal(lines[7], "ana@example.com", "the double took the mail for the guest");
  assert.equal(lines[8], '"checked_out"');
  assert.match(lines[9]!, /^"Clean Room 1 after [0-9A-Z]{8}"$/);
}

Deno.test("the README's first walk-through: sign up, a double priced and found free, booked and checked in, its welcome email sent by the worker and delivered, checked out, its cleaning task", async () => {
  const script = await walkThrough();
  const sql = adminSql();
  await run(script, async (lines, ownerId) => {
    assert.equal(lines.length, FIRST_LINES, lines.join("\n"));
    checkFirstWalkThrough(lines);
    // The database agrees: one checkin_reminder email, sent, delivered by the provider's
    // verified report, to the guest's address; and the capture server holds that one mail.
    const notifications = await sql<{ id: string; status: string; delivery_state: string | null; channel: string }[]>`
      select n.id, n.status, n.delivery_state, n.channel from public.notifications n
      join public.tenant_memberships m on m.tenant_id = n.tenant_id
      where m.user_id = ${ownerId} and n.template_key = 'checkin_reminder'`;
    assert.deepEqual(notifications.map(({ status, delivery_state, channel }) => ({ status, delivery_state, channel })), [
      { status: "sent", delivery_state: "delivered", channel: "email" },
    ]);
    const events = await sql<{ event: string }[]>`
      select event from public.notification_events where notification_id = ${notifications[0]!.id} order by event`;
    assert.deepEqual(events.map((row) => row.event), ["delivered", "processed"], "SendGrid's signed events, recorded once each");
    const mails = await (await fetch(`${stack.mailUrl}/_capture/messages`)).json() as {
      body: { custom_args?: { notification_id?: string }; personalizations: { to: { email: string }[] }[] };
    }[];
    const ours = mails.filter((mail) => mail.body.custom_args?.notification_id === notifications[0]!.id);
    assert.deepEqual(ours.map((mail) => mail.body.personalizations[0]!.to[0]!.email), ["ana@example.com"], "one mail, to the guest");
  }).finally(() => sql.end());
});

Deno.test("docs/api.md's integration walk-through: a key, the property's stay, a payment, its retry replayed, the balance settled", async () => {
  const script = `${await walkThrough()}\n${await integrationWalkThrough()}`;
  const sql = adminSql();
  await run(script, async (lines, ownerId) => {
    assert.equal(lines.length, FIRST_LINES + 4, lines.join("\n"));
    checkFirstWalkThrough(lines.slice(0, FIRST_LINES));
    assert.deepEqual(lines.slice(FIRST_LINES), ["42000", "201", "idempotent-replayed: true", "0"], lines.join("\n"));
    const payments = await sql`
      select p.external_reference, p.source from public.payments p
      join public.tenant_memberships m on m.tenant_id = p.tenant_id where m.user_id = ${ownerId}`;
    assert.deepEqual(payments.map((row) => ({ ...row })), [{ external_reference: "acme-1001", source: "external" }], "one payment");
  }).finally(() => sql.end());
});

Deno.test("docs/api.md's lists: no count, the count applied, and an estimate that is what the last page shows", async () => {
  const script = `${await walkThrough()}\n${await countsWalkThrough()}`;
  await run(script, async (lines) => {
    assert.equal(lines.length, FIRST_LINES + 3, lines.join("\n"));
    checkFirstWalkThrough(lines.slice(0, FIRST_LINES));
    assert.deepEqual(lines.slice(FIRST_LINES), ['{"limit":1,"offset":0,"total":null,"hasMore":false}', "preference-applied: count=estimated", "1"]);
  });
});
