// The README's supabase-js example is the code supabase-js.test.ts runs against the
// stack: the same import and, between its markers, the same lines.
import assert from "node:assert/strict";

// The README's example and the test's copy of it, line by line, indentation aside.
function exampleLines(text: string): string[] {
  return text.split("\n").map((line) => line.trim()).filter((line) => line !== "");
}

Deno.test("the supabase-js example supabase-js.test.ts runs is the README's, as written", async () => {
  const readme = await Deno.readTextFile(new URL("../../README.md", import.meta.url));
  const section = readme.split("### From an app: supabase-js")[1];
  const block = section && /```ts\n([\s\S]*?)```/.exec(section)?.[1];
  assert.ok(block, "the README has the supabase-js example");
  const source = await Deno.readTextFile(new URL("./supabase-js.test.ts", import.meta.url));
  const copy = source.split("// --- README example\n")[1]?.split("// --- end of the README example")[0];
  assert.ok(copy, "supabase-js.test.ts marks its copy of the example");
  const [importLine, ...rest] = exampleLines(block);
  assert.equal(importLine, 'import { createClient, FunctionsHttpError } from "@supabase/supabase-js";');
  assert.ok(source.includes(importLine!), "the example's import is supabase-js.test.ts's");
  assert.deepEqual(exampleLines(copy), rest);
});
