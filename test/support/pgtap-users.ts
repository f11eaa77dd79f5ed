// The pool of Supabase Auth users the pgTAP suites borrow (supabase/tests/helpers/setup.psql):
// made through Auth's admin API, left alone where they already exist, each signed in once
// so that it has a session in auth.sessions, as a user who calls the API has (tests.act_as
// puts that session's id in the user's claims). scripts/test.sh runs it before pg_prove;
// against `supabase start`, run it with the URL and service_role key `supabase status`
// prints, then `supabase test db`:
//   deno run --allow-net --allow-env test/support/pgtap-users.ts
// with SUPABASE_URL (the project URL) and SUPABASE_SERVICE_ROLE_KEY set.
const POOL_SIZE = 24;
const PREFIX = "pgtap-pool-";

const projectUrl = Deno.env.get("SUPABASE_URL");
const serviceKey = Deno.env.get("SUPABASE_SERVICE_ROLE_KEY");
if (!projectUrl || !serviceKey) throw new Error("set SUPABASE_URL and SUPABASE_SERVICE_ROLE_KEY");

async function auth(method: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${projectUrl}/auth/v1${path}`, {
    method,
    headers: { apikey: serviceKey!, authorization: `Bearer ${serviceKey}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : {} };
}

for (let n = 1; n <= POOL_SIZE; n++) {
  const email = `${PREFIX}${String(n).padStart(2, "0")}@tests.local`;
  const created = await auth("POST", "/admin/users", { email, password: `pool-${crypto.randomUUID()}`, email_confirm: true });
  if (created.status >= 300 && created.body.error_code !== "email_exists") {
    throw new Error(`Supabase Auth answered ${created.status} for ${email}: ${JSON.stringify(created.body)}`);
  }
}

// A pool user who has never signed in gets a password of this run's and signs in with it;
// the session stays (pool users never sign out), so later runs find them signed in.
type PoolUser = { id: string; email: string; last_sign_in_at: string | null };
const listed = await auth("GET", `/admin/users?filter=${PREFIX}&per_page=${POOL_SIZE * 4}`);
const pool = ((listed.body.users ?? []) as PoolUser[]).filter((user) => user.email.startsWith(PREFIX));
if (pool.length < POOL_SIZE) throw new Error(`Supabase Auth lists ${pool.length} of the ${POOL_SIZE} pool users`);
for (const user of pool.filter((user) => !user.last_sign_in_at)) {
  const password = `pool-${crypto.randomUUID()}`;
  const updated = await auth("PUT", `/admin/users/${user.id}`, { password });
  if (updated.status >= 300) throw new Error(`Supabase Auth answered ${updated.status} updating ${user.email}`);
  const signedIn = await auth("POST", "/token?grant_type=password", { email: user.email, password });
  if (signedIn.status >= 300) throw new Error(`Supabase Auth answered ${signedIn.status} signing ${user.email} in`);
}
