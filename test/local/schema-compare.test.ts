// scripts/schema-compare.sh on fixed commits of this repository's history: the chain
// of one file per domain against the 31 migrations it was folded from, which build the
// same schema, and two chains that differ in one function's body, which it must name.
// Each run makes two throwaway clusters of its own and takes a few seconds.
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../../", import.meta.url));
const decoder = new TextDecoder();

// The last commit with the 31 migrations, and the one that folded them into one file per domain.
const thirtyOneMigrations = "1d097337c7d4cb011c9393dbda6a0a7ad50fc52a";
const onePerDomain = "1d42fbe9bfb471f5fb48b9710563a9bedbc88f04";
// The commit that moved the notification job to pgmq.send's base form, and the one before it.
const baseFormSend = "e9c8e35f3f37ccdfa44647f58c4ec59f45f6762a";

async function compare(oldRef: string, newRef: string) {
  const output = await new Deno.Command("bash", {
    args: ["scripts/schema-compare.sh", oldRef, newRef],
    cwd: root,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { code: output.code, stdout: decoder.decode(output.stdout), stderr: decoder.decode(output.stderr) };
}

Deno.test("the migrations folded into one file per domain build the schema the 31 migrations built", async () => {
  const result = await compare(thirtyOneMigrations, onePerDomain);
  assert.equal(result.code, 0, `${result.stdout}\n${result.stderr}`);
  assert.equal(result.stdout.trim(), `schemas identical: ${thirtyOneMigrations} = ${onePerDomain}`);
  assert.match(result.stderr, /31 migrations\)/);
  assert.match(result.stderr, /11 migrations\)/);
});

Deno.test("two chains that differ in one function's body differ in that function alone", async () => {
  const result = await compare(`${baseFormSend}^`, baseFormSend);
  assert.equal(result.code, 1, `${result.stdout}\n${result.stderr}`);
  const changed = result.stdout.split("\n")
    .filter((line) => /^[-+][^-+]/.test(line))
    .map((line) => line.slice(0, line.indexOf(")") + 1));
  assert.deepEqual(changed, [
    "-CREATE FUNCTION private.send_notification_job(notification_id uuid, tenant uuid)",
    "+CREATE FUNCTION private.send_notification_job(notification_id uuid, tenant uuid)",
  ]);
  assert.match(result.stdout, /^\+.*null::jsonb, clock_timestamp\(\)\);/m);
});
