// The Data API (PostgREST) stays off in supabase/config.toml, and the schemas it would
// serve if an operator turned it on are the ones supabase/tests/security checks as served
// (tests.data_api_schemas in supabase/tests/helpers/security.psql).
import assert from "node:assert/strict";
import { parse } from "smol-toml";

const root = new URL("../../", import.meta.url);

async function apiSettings(): Promise<{ enabled?: unknown; schemas?: unknown }> {
  const config = parse(await Deno.readTextFile(new URL("supabase/config.toml", root)));
  return (config.api ?? {}) as { enabled?: unknown; schemas?: unknown };
}

Deno.test("config.toml keeps the Data API off", async () => {
  assert.equal((await apiSettings()).enabled, false);
});

Deno.test("the pgTAP security suites treat every schema config.toml lists for the Data API as served", async () => {
  const { schemas } = await apiSettings();
  assert.ok(Array.isArray(schemas) && schemas.length > 0, "config.toml's [api] schemas is a list");
  const helper = await Deno.readTextFile(new URL("supabase/tests/helpers/security.psql", root));
  const listed = /n\.nspname = any \(array\[([^\]]*)\]::name\[\]/.exec(helper)?.[1];
  assert.ok(listed !== undefined, "tests.data_api_schemas names its schemas in one array");
  const checked = [...listed.matchAll(/'([^']+)'/g)].map(([, name]) => name);
  assert.deepEqual(schemas.filter((name) => !checked.includes(String(name))), []);
});
