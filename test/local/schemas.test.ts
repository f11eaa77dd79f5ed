// The schema files (supabase/schemas, in config.toml's schema_paths order) build the
// database the migration chain builds: scripts/schema-compare.sh --schemas makes a
// throwaway cluster of each, as the stack prepares its own, and diffs their schemas,
// roles, pg_cron jobs, pgmq queues and extensions, whatever order things were created in.
// A change made in one and not the other fails here, naming what differs. Takes seconds.
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../../", import.meta.url));
const decoder = new TextDecoder();

Deno.test("the schema files build the database the migrations build", async () => {
  const output = await new Deno.Command("bash", {
    args: ["scripts/schema-compare.sh", "--schemas"],
    cwd: root,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const [stdout, stderr] = [decoder.decode(output.stdout), decoder.decode(output.stderr)];
  assert.equal(output.code, 0, `${stdout}\n${stderr}`);
  assert.equal(stdout.trim(), "schemas identical: migrations (the working tree) = schemas (the working tree)");
  assert.match(stderr, /applying \d+ schema files/);
});
