// The pool of Supabase Auth users the pgTAP suites borrow (supabase/tests/helpers/setup.psql):
// made once per stack through Auth's admin API, left alone where they already exist.
// Run by scripts/test.sh before pg_prove.
import { ensureAuthUser } from "./session.ts";

const POOL_SIZE = 24;

for (let n = 1; n <= POOL_SIZE; n++) {
  const email = `pgtap-pool-${String(n).padStart(2, "0")}@tests.local`;
  await ensureAuthUser({ email, password: `pool-${crypto.randomUUID()}` });
}
