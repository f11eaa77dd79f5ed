// The pool of Supabase Auth users the pgTAP suites borrow (supabase/tests/helpers/setup.psql):
// made once per stack through Auth's admin API, left alone where they already exist.
// Run by scripts/test.sh before pg_prove.
import { stack } from "./stack.ts";

const POOL_SIZE = 24;

for (let n = 1; n <= POOL_SIZE; n++) {
  const email = `pgtap-pool-${String(n).padStart(2, "0")}@tests.local`;
  const response = await fetch(`${stack.apiUrl}/auth/v1/admin/users`, {
    method: "POST",
    headers: {
      apikey: stack.serviceRoleKey,
      authorization: `Bearer ${stack.serviceRoleKey}`,
      "content-type": "application/json",
    },
    body: JSON.stringify({ email, password: `pool-${crypto.randomUUID()}`, email_confirm: true }),
  });
  const body = await response.json() as { error_code?: string };
  if (!response.ok && body.error_code !== "email_exists") {
    throw new Error(`Supabase Auth answered ${response.status} for ${email}: ${JSON.stringify(body)}`);
  }
}
