// The documents' shell blocks that run on this machine (besides the curl walk-throughs,
// walkthrough.test.ts's), each run as written with bash from the checkout against the
// local stack, and checked for what it prints or does. A block names the stack's default
// address as `NAME=${NAME:-<default>}` on its first line; when the stack runs on another
// PMS_PORT_BASE the test sets NAME, as a reader would, and changes no line.
import assert from "node:assert/strict";
import { type BlockRun, docBlock, runDocBlock } from "../support/doc-blocks.ts";
import { adminSql } from "../support/session.ts";
import { stack } from "../support/stack.ts";

const root = new URL("../../", import.meta.url);

// A block that must succeed.
async function runBlock(script: string, env: Record<string, string> = {}): Promise<BlockRun> {
  const ran = await runDocBlock(script, env);
  assert.equal(ran.code, 0, `the block failed:\n${script}\n${ran.stderr}\n${ran.stdout}`);
  return ran;
}

// The block's own default for NAME, which must be the stack's default-base address.
function defaultOf(script: string, name: string): string {
  const found = new RegExp(`\\b${name}=\\$\\{${name}:-([^}]+)\\}`).exec(script)?.[1];
  assert.ok(found, `the block defaults ${name}`);
  return found;
}

async function clearCapture(url: string): Promise<void> {
  const response = await fetch(`${url}/_capture`, { method: "DELETE" });
  await response.body?.cancel();
  assert.equal(response.status, 204);
}

Deno.test("docs/local-stack.md: one folder of Deno tests, run by hand, passes", async () => {
  const { stdout, stderr } = await runBlock(await docBlock("docs/local-stack.md#One folder or file of Deno tests"));
  const summary = /^ok \| (\d+) passed(?: \([^)]*\))? \| 0 failed/m.exec(stdout + stderr);
  assert.ok(summary, `Deno's summary: ${stdout}\n${stderr}`);
  assert.ok(Number(summary[1]) >= 1, "it ran tests");
});

// The block a reader runs against any Supabase Auth, run here against the stack's Auth
// directly on its own port (no gateway), as one would against `supabase start`'s.
Deno.test("docs/local-stack.md: the Auth contract suite, given an Auth by URL and its keys, passes", async () => {
  const script = await docBlock("docs/local-stack.md#Supabase Auth: the local double");
  assert.equal(defaultOf(script, "AUTH_URL"), "http://127.0.0.1:54321/auth/v1");
  const { stdout, stderr } = await runBlock(script, {
    AUTH_URL: stack.authUrl, AUTH_ANON_KEY: stack.anonKey, AUTH_SERVICE_ROLE_KEY: stack.serviceRoleKey, AUTH_DB_URL: stack.dbUrl,
  });
  const summary = /^ok \| (\d+) passed(?: \([^)]*\))? \| 0 failed/m.exec(stdout + stderr);
  assert.ok(summary, `Deno's summary: ${stdout}\n${stderr}`);
  assert.ok(Number(summary[1]) >= 15, `the whole suite ran: ${summary[1]}`);
});

Deno.test("docs/local-stack.md: one pgTAP file with pg_prove against the local database passes", async () => {
  const script = await docBlock("docs/local-stack.md#One pgTAP file");
  assert.equal(defaultOf(script, "DB_URL"), "postgresql://postgres:postgres@127.0.0.1:54322/postgres");
  const { stdout } = await runBlock(script, { DB_URL: stack.dbUrl });
  assert.match(stdout, /^All tests successful\./m);
  assert.match(stdout, /^Files=1, Tests=[1-9]/m);
  assert.match(stdout, /^Result: PASS$/m);
});

Deno.test("docs/local-stack.md: pushing the migrations again finds the database up to date, one recorded version per file", async () => {
  const script = await docBlock("docs/local-stack.md#The migrations by hand");
  assert.equal(defaultOf(script, "DB_URL"), "postgresql://postgres:postgres@127.0.0.1:54322/postgres");
  const { stdout, stderr } = await runBlock(script, { DB_URL: stack.dbUrl });
  // The CLI calls a database on 127.0.0.1:54322 local, one on another port remote.
  assert.match(stdout + stderr, /(?:Local|Remote) database is up to date\./);
  const files: string[] = [];
  for await (const entry of Deno.readDir(new URL("supabase/migrations/", root))) {
    if (entry.name.endsWith(".sql")) files.push(entry.name.split("_")[0]!);
  }
  const sql = adminSql();
  try {
    const versions = await sql<{ version: string }[]>`select version from supabase_migrations.schema_migrations order by version`;
    assert.deepEqual(versions.map((row) => row.version), files.sort());
  } finally {
    await sql.end();
  }
});

Deno.test("docs/operations.md: the queue's health, read with psql against the local database", async () => {
  const script = await docBlock("docs/operations.md#Notifications: the queue, what failed, what bounced");
  assert.equal(defaultOf(script, "DB_URL"), "postgresql://postgres:postgres@127.0.0.1:54322/postgres");
  const { stdout } = await runBlock(script, { DB_URL: stack.dbUrl });
  const [header, , row, count] = stdout.split("\n").map((line) => line.trim());
  assert.deepEqual(header!.split(/\s*\|\s*/), ["depth", "visible_now", "oldest_message_age_seconds", "read_more_than_once"]);
  assert.match(row!, /^\d+ \| +\d+ \| +[\d.]* \| +\d+$/);
  assert.equal(count, "(1 row)");
});

Deno.test("docs/notifications-delivery.md: the doubles take the scripted fates, queued in order", async () => {
  const script = await docBlock("docs/notifications-delivery.md#The local doubles");
  assert.equal(defaultOf(script, "MAIL"), "http://127.0.0.1:54324");
  assert.equal(defaultOf(script, "SMS"), "http://127.0.0.1:54326");
  await clearCapture(stack.mailUrl);
  await clearCapture(stack.smsUrl);
  try {
    const { stdout } = await runBlock(script, { MAIL: stack.mailUrl, SMS: stack.smsUrl });
    // Two fates queued at the mail double, one address refused and one answer scripted there,
    // one fate at the SMS double: each valid, or it would be a 400.
    assert.equal(stdout, '{"pending":1}{"pending":2}{"refused":1}{"pending":1}{"pending":1}');
  } finally {
    await clearCapture(stack.mailUrl);
    await clearCapture(stack.smsUrl);
  }
});

Deno.test("docs/notifications-push.md: the push double takes the scripted answers", async () => {
  const script = await docBlock("docs/notifications-push.md#The local push double");
  assert.equal(defaultOf(script, "PUSH"), "http://127.0.0.1:54327");
  await clearCapture(stack.pushUrl);
  try {
    const { stdout } = await runBlock(script, { PUSH: stack.pushUrl });
    // One answer queued for the subscription abc, one for any subscription.
    assert.equal(stdout, '{"pending":1}{"pending":1}');
  } finally {
    await clearCapture(stack.pushUrl);
  }
});

Deno.test("docs/notifications-push.md: generate-vapid-keys makes a P-256 key pair in the form the functions read", async () => {
  const { stdout } = await runBlock(await docBlock("docs/notifications-push.md#VAPID keys for a hosted project"));
  const keys = JSON.parse(stdout) as { publicKey: string; privateKey: string };
  assert.match(keys.publicKey, /^B[A-Za-z0-9_-]{86}$/, "65 bytes, uncompressed, unpadded base64url");
  assert.match(keys.privateKey, /^[A-Za-z0-9_-]{43}$/, "32 bytes, unpadded base64url");
  // The two halves are one pair: what the private key signs, the public key verifies.
  const point = Uint8Array.from(atob(keys.publicKey.replace(/-/g, "+").replace(/_/g, "/") + "="), (c) => c.charCodeAt(0));
  const b64url = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  const jwk = { kty: "EC", crv: "P-256", x: b64url(point.slice(1, 33)), y: b64url(point.slice(33, 65)) };
  const algorithm = { name: "ECDSA", namedCurve: "P-256" };
  const privateKey = await crypto.subtle.importKey("jwk", { ...jwk, d: keys.privateKey }, algorithm, false, ["sign"]);
  const publicKey = await crypto.subtle.importKey("jwk", jwk, algorithm, false, ["verify"]);
  const data = new TextEncoder().encode("a push");
  const signature = await crypto.subtle.sign({ name: "ECDSA", hash: "SHA-256" }, privateKey, data);
  assert.ok(await crypto.subtle.verify({ name: "ECDSA", hash: "SHA-256" }, publicKey, signature, data));
});

Deno.test("docs/deploy.md: the Management API stand-in, run by hand, serves the deploy's routes and refuses a request without the token", async () => {
  const script = await docBlock("docs/deploy.md#How the bundle is checked");
  const ref = /--ref (\S+)/.exec(script)?.[1];
  const token = /--token (\S+)/.exec(script)?.[1];
  const record = /--record (\S+)/.exec(script)?.[1];
  assert.ok(ref && token && record, "the block names its project ref, token and record folder");
  // In a session of its own, so that the whole group (bash and the server it starts) is ended after.
  const child = new Deno.Command("setsid", {
    args: ["bash", "-euo", "pipefail", "-c", script],
    cwd: root,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stderr = child.stderr.pipeThrough(new TextDecoderStream());
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  try {
    let printed = "";
    const deadline = Date.now() + 60_000;
    while (!/listening (\d+)\n/.test(printed)) {
      assert.ok(Date.now() < deadline, `the stand-in did not say it listens: ${printed}`);
      const { value, done } = await reader.read();
      assert.ok(!done, `the stand-in ended: ${printed}`);
      printed += value;
    }
    const port = /listening (\d+)\n/.exec(printed)![1];
    const functions = `http://127.0.0.1:${port}/v1/projects/${ref}/functions`;
    const refused = await fetch(functions);
    await refused.body?.cancel();
    assert.equal(refused.status, 401, "no token, no answer");
    const listed = await fetch(functions, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(listed.status, 200);
    assert.deepEqual(await listed.json(), [], "a new project has no functions");
    const recorded = (await Deno.readTextFile(`${record}/requests.jsonl`)).trim().split("\n");
    assert.ok(recorded.length >= 2, "it recorded the requests");
  } finally {
    try {
      Deno.kill(-child.pid, "SIGTERM");
    } catch {
      // already gone
    }
    await reader.cancel().catch(() => {});
    await stderr.cancel().catch(() => {});
    await child.status;
  }
});

Deno.test("docs/browser-clients.md: the preflight from the front desk's origin is granted, one from elsewhere is not", async () => {
  const script = await docBlock("docs/browser-clients.md#Seeing it");
  assert.equal(defaultOf(script, "API"), "http://127.0.0.1:54321/functions/v1/api/v1");
  assert.equal(defaultOf(script, "ORIGIN"), "http://127.0.0.1:54323");
  const [allowed] = stack.corsAllowedOrigins;
  assert.ok(allowed, "the stack grants an origin");
  const granted = await runBlock(script, { API: stack.v1, ORIGIN: allowed });
  assert.equal(granted.stdout.trim().toLowerCase(), `access-control-allow-origin: ${allowed}`.toLowerCase());
  // grep finds nothing, so the block as written fails: the refusal is a 403 with no grant.
  const refused = await runDocBlock(script, { API: stack.v1, ORIGIN: "https://elsewhere.example" });
  assert.equal(refused.stdout.trim(), "");
  assert.notEqual(refused.code, 0, "grep found no grant");
});
