// The pool of Supabase Auth users the pgTAP suites borrow (supabase/tests/helpers/setup.psql):
// made through Auth's admin API, left alone where they already exist. scripts/test.sh runs
// it before pg_prove; against `supabase start`, run it with the URL and service_role key
// `supabase status` prints, then `supabase test db`:
//   deno run --allow-net --allow-env test/support/pgtap-users.ts
// with SUPABASE_URL (the project URL) and SUPABASE_SERVICE_ROLE_KEY set.
const POOL_SIZE = 24;

const projectUrl = Deno.env.get("SUPABASE_URL");
const serviceKey = Deno.env.get("SUPABASE_SERVICE_ROLE_KEY");
if (!projectUrl || !serviceKey) throw new Error("set SUPABASE_URL and SUPABASE_SERVICE_ROLE_KEY");

for (let n = 1; n <= POOL_SIZE; n++) {
  const email = `pgtap-pool-${String(n).padStart(2, "0")}@tests.local`;
  const response = await fetch(`${projectUrl}/auth/v1/admin/users`, {
    method: "POST",
    headers: { apikey: serviceKey, authorization: `Bearer ${serviceKey}`, "content-type": "application/json" },
    body: JSON.stringify({ email, password: `pool-${crypto.randomUUID()}`, email_confirm: true }),
  });
  const body = await response.json() as { error_code?: string };
  if (!response.ok && body.error_code !== "email_exists") {
    throw new Error(`Supabase Auth answered ${response.status} for ${email}: ${JSON.stringify(body)}`);
  }
}
