// The local stack as a user meets it: the Auth double and the schema it makes, the status
// block naming it, and the whole stack coming up from a checkout inside a folder closed to
// other users.
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import postgres from "postgres";
import { SCHEMA_VERSION } from "../../local/auth/schema.ts";
import type { Schemas } from "../support/api.ts";
import { stack } from "../support/stack.ts";

const root = fileURLToPath(new URL("../../", import.meta.url));
const decoder = new TextDecoder();

async function run(command: string, args: string[], options: { cwd?: string; env?: Record<string, string> } = {}) {
  const output = await new Deno.Command(command, { args, stdin: "null", stdout: "piped", stderr: "piped", ...options })
    .output();
  return { code: output.code, stdout: decoder.decode(output.stdout), stderr: decoder.decode(output.stderr) };
}

Deno.test("Auth's schema is the double's, made by it as supabase_auth_admin, and closed to the API roles", async () => {
  const sql = postgres(stack.dbUrl, { max: 1, onnotice: () => {} });
  try {
    const applied = await sql<{ version: string }[]>`select version from auth.schema_migrations order by version`;
    assert.deepEqual(applied.map((row) => row.version), [SCHEMA_VERSION]);
    // Every table in the auth schema belongs to Auth's role: none was made by the baseline as postgres.
    const owners = await sql<{ owner: string }[]>`
      select distinct tableowner as owner from pg_tables where schemaname = 'auth'`;
    assert.deepEqual(owners.map((row) => row.owner), ["supabase_auth_admin"]);
    const tables = await sql<{ name: string; rls: boolean }[]>`
      select c.relname as name, c.relrowsecurity as rls from pg_class c
      where c.relnamespace = 'auth'::regnamespace and c.relkind = 'r' order by 1`;
    assert.deepEqual(tables.map((table) => table.name), [
      "audit_log_entries", "identities", "instances", "mfa_amr_claims", "refresh_tokens", "schema_migrations", "sessions", "users",
    ]);
    assert.ok(tables.every((table) => table.rls), "row-level security is on for every auth table");
    const [granted] = await sql<{ count: number }[]>`
      select count(*)::int as count from information_schema.role_table_grants
      where table_schema = 'auth' and grantee in ('anon', 'authenticated', 'service_role')`;
    assert.equal(granted!.count, 0, "the API roles may not touch Auth's tables");
  } finally {
    await sql.end();
  }
});

// pg_cron runs each job over a libpq connection of its own to cron.host. The cluster asks
// for a password over TCP, which pg_cron does not have; over its socket the postgres role
// is trusted. So the stack points pg_cron at the socket, and a job's connection, made the
// way pg_cron makes it (no password), gets in.
Deno.test("pg_cron's jobs can connect: cron.host is the cluster's socket, where postgres gets in without a password, and no run since the start failed to connect", async () => {
  const sql = postgres(stack.dbUrl, { max: 1, onnotice: () => {} });
  try {
    const [settings] = await sql<{ host: string; sockets: string; port: string; failed: number }[]>`
      select current_setting('cron.host') as host, current_setting('unix_socket_directories') as sockets,
             current_setting('port') as port,
             (select count(*)::int from cron.job_run_details
              where return_message = 'connection failed' and start_time > pg_postmaster_start_time()) as failed`;
    assert.ok(settings!.sockets.split(",").map((dir) => dir.trim()).includes(settings!.host),
      `cron.host ${settings!.host} is one of the socket directories ${settings!.sockets}`);
    assert.equal(settings!.failed, 0, "no pg_cron run since the cluster started failed to connect");
    const job = await run("psql", ["-h", settings!.host, "-p", settings!.port, "-U", "postgres", "-d", "postgres", "-w", "-Atc", "select 1"],
      { env: { PGPASSWORD: "" } });
    assert.deepEqual([job.code, job.stdout.trim()], [0, "1"], job.stderr);
  } finally {
    await sql.end();
  }
});

Deno.test("the status block names the Auth double and the settings it runs with", async () => {
  const status = await run("bash", ["scripts/stack.sh", "status"], { cwd: root });
  assert.equal(status.code, 0, status.stderr);
  assert.match(status.stdout, /^ +Auth: local double of Supabase Auth's HTTP API, running \(local\/auth\)$/m);
  assert.match(status.stdout, /sign-up on, email confirmations off, site URL http:\/\/127\.0\.0\.1:3000/);
  assert.match(status.stdout, /JWT expiry 3600s, refresh token rotation on \(reuse interval 10s\)/);
  assert.match(status.stdout, new RegExp(`^ +Pooler URL: ${RegExp.escape(stack.poolerUrl)} \\(PgBouncer, transaction mode`, "m"));
});

Deno.test("no test, script or walk-through writes Auth's users or sessions, or signs a session token itself", async () => {
  const tracked = (await run("git", ["ls-files"], { cwd: root })).stdout.split("\n")
    .filter((file) => /\.(ts|sql|psql|sh|md)$/.test(file) && !file.startsWith("bench/results/"));
  const offenders: string[] = [];
  // Tests of the verifier's own refusals (expired, tampered, wrong key) may sign tokens;
  // the stack signs its anon and service_role API keys as `supabase start` does; the push
  // double's test signs VAPID tokens (no session's) that the push double must refuse.
  const maySign = new Set(["local/keys.ts", "test/auth/access-token.test.ts", "test/auth/verifier.unit.test.ts",
    "test/tenancy/request-context.test.ts", "bench/verify.bench.ts", "test/local/push-capture.test.ts"]);
  for (const file of tracked) {
    // Auth itself, the local double, writes its own tables and signs its own tokens.
    if (file === "test/local/stack.test.ts" || file.startsWith("local/auth/")) continue;
    const text = await Deno.readTextFile(join(root, file));
    if (/insert\s+into\s+auth\.(users|sessions)\b/i.test(text)) offenders.push(`${file}: inserts into auth`);
    if (!maySign.has(file) && /\b(signHs256|SignJWT)\b/.test(text)) offenders.push(`${file}: signs a token`);
  }
  assert.deepEqual(offenders, []);
});

// Supabase Auth is served by no package registry, so nothing here may build it, clone it or
// fetch its source: the stack runs the double (local/auth) in its place. The patterns are
// put together here so that this file does not match them itself.
Deno.test("nothing in the repository builds, clones or downloads Supabase Auth's source", async () => {
  const patterns = [["go", "build"].join(" "), ["github.com", "supabase", "auth"].join("/"), ["AUTH", "SOURCE", "ARCHIVE"].join("_"),
    ["shared", "vendor"].join("/")];
  const found = await run("git", ["grep", "-n", "-I", "-F", ...patterns.flatMap((pattern) => ["-e", pattern]), "--", ".", ":!bench/results"], { cwd: root });
  assert.equal(found.stdout, "", "files that name a build or clone of Auth's source");
  assert.equal(found.code, 1, "git grep found nothing (and did not fail)");
});

// As root the cluster runs as the postgres user, who cannot enter such a folder; the
// stack then keeps the cluster's files where that user can reach them.
Deno.test({
  name: "the whole stack comes up from a checkout inside a folder closed to other users, its demo owner signs in and sees the demo tenant, and it cleans up after itself",
  sanitizeResources: false,
  fn: async () => {
    const closed = await Deno.makeTempDir({ prefix: "pms-closed-" });
    await Deno.chmod(closed, 0o700);
    const checkout = join(closed, "pms");
    // Ports of its own beside this stack's (the API is at base + 1), above the range Linux
    // hands out to outgoing connections (32768-60999), of which the suite makes thousands.
    const stackBase = Number(new URL(stack.apiUrl).port) - 1;
    const base = stackBase + 8000 <= 65400 ? stackBase + 8000 : stackBase - 8000;
    const env = { PMS_PORT_BASE: String(base) };
    const v1 = `http://127.0.0.1:${base + 1}/functions/v1/api/v1`;
    try {
      // The working tree as it is (uncommitted changes too), without its state or packages.
      await Deno.mkdir(checkout);
      const copy = await run("bash", ["-c", 'tar -C "$0" --exclude=./.git --exclude=./.stack --exclude=./node_modules -cf - . | tar -C "$1" -xf -', root, checkout]);
      assert.equal(copy.code, 0, copy.stderr);
      await Deno.symlink(join(root, "node_modules"), join(checkout, "node_modules"));

      const up = await run("bash", ["scripts/stack.sh", "up"], { cwd: checkout, env });
      assert.equal(up.code, 0, `stack.sh up failed:\n${up.stderr}`);
      assert.match(up.stdout, /^ +Auth: local double of Supabase Auth's HTTP API, running/m);

      const health = await fetch(`${v1}/health`);
      assert.deepEqual(await health.json(), { status: "ok", checks: { database: "ok", auth: "ok" } });
      const signIn = await fetch(`${v1}/auth/sign-in`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ email: "owner@demo.test", password: "demo-password-1" }),
      });
      assert.equal(signIn.status, 200, await signIn.clone().text());
      // The demo owner, on this fresh cluster, sees the demo tenant the seed gave them.
      const { accessToken } = await signIn.json() as Schemas["Session"];
      const me = await fetch(`${v1}/me`, {
        headers: { authorization: `Bearer ${accessToken}` },
      });
      const { memberships } = await me.json() as Schemas["Me"];
      assert.deepEqual(memberships.map(({ name, role }) => ({ name, role })), [{ name: "Harbour View Hotels", role: "owner" }]);
    } finally {
      const clean = await run("bash", ["scripts/stack.sh", "clean"], { cwd: checkout, env });
      await Deno.remove(closed, { recursive: true });
      assert.equal(clean.code, 0, clean.stderr);
    }
  },
});
