import assert from "node:assert/strict";

const root = new URL("../../", import.meta.url);
const committedPath = "src/db/database.types.ts";

function firstDifference(expected: string, actual: string): string {
  const want = expected.split("\n");
  const got = actual.split("\n");
  const at = want.findIndex((line, i) => line !== got[i]);
  const line = at === -1 ? want.length : at;
  return `first difference at line ${line + 1}:\n  committed: ${want[line] ?? "(end of file)"}\n  schema:    ${got[line] ?? "(end of file)"}`;
}

// The same script `npm run db:types` writes with, so a pass means the file is what it would write.
Deno.test("the committed database types match the local database's schema", async () => {
  const output = await new Deno.Command("bash", {
    args: ["scripts/db-types.sh"],
    cwd: root,
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(120_000),
  }).output();
  const decoder = new TextDecoder();
  assert.equal(output.code, 0, `scripts/db-types.sh failed:\n${decoder.decode(output.stderr)}`);
  const generated = decoder.decode(output.stdout);
  assert.match(generated, /export type Database = \{/, "the generator printed no Database type");

  const committed = await Deno.readTextFile(new URL(committedPath, root));
  assert.ok(
    committed === generated,
    `${committedPath} does not match the schema; run \`npm run db:types\` and commit the result.\n` +
      firstDifference(committed, generated),
  );
});
