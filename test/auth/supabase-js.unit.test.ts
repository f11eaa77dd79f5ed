// docs/api.md's supabase-js example is the code supabase-js.test.ts runs against the
// stack: the same import and, between its markers, the same lines.
import assert from "node:assert/strict";

// The document's example and the test's copy of it, line by line, indentation aside.
function exampleLines(text: string): string[] {
  return text.split("\n").map((line) => line.trim()).filter((line) => line !== "");
}

Deno.test("the supabase-js example supabase-js.test.ts runs is docs/api.md's, as written", async () => {
  const document = await Deno.readTextFile(new URL("../../docs/api.md", import.meta.url));
  const section = document.split("## From an app: supabase-js")[1];
  const block = section && /```ts\n([\s\S]*?)```/.exec(section)?.[1];
  assert.ok(block, "docs/api.md has the supabase-js example");
  const source = await Deno.readTextFile(new URL("./supabase-js.test.ts", import.meta.url));
  const copy = source.split("// --- docs/api.md example\n")[1]?.split("// --- end of the docs/api.md example")[0];
  assert.ok(copy, "supabase-js.test.ts marks its copy of the example");
  const [importLine, ...rest] = exampleLines(block);
  assert.equal(importLine, 'import { createClient, FunctionsHttpError } from "@supabase/supabase-js";');
  assert.ok(source.includes(importLine!), "the example's import is supabase-js.test.ts's");
  assert.deepEqual(exampleLines(copy), rest);
});
