// Every rule of docs/contract.md points at the test that proves it; this keeps the
// pointers true: each names a file that exists and a test that file defines.
import assert from "node:assert/strict";

const root = new URL("../../", import.meta.url);

Deno.test("every test docs/contract.md points at exists, under the name it gives", async () => {
  const contract = await Deno.readTextFile(new URL("docs/contract.md", root));
  const pointers = [...contract.matchAll(/^- `([^`]+)`: "(.*)"$/gm)].map(([, file, name]) => ({ file: file!, name: name! }));
  const files = [...contract.matchAll(/^- `([^`]+)` \(pgTAP\)/gm)].map(([, file]) => file!);
  assert.ok(pointers.length >= 40, `only ${pointers.length} pointers`);
  const missing: string[] = [];
  for (const { file, name } of pointers) {
    const source = await Deno.readTextFile(new URL(file, root)).catch(() => null);
    if (source === null) missing.push(`${file}: no such file`);
    else if (!source.includes(`Deno.test(${JSON.stringify(name)}`)) missing.push(`${file}: no test "${name}"`);
  }
  for (const file of files) {
    if (!(await Deno.stat(new URL(file, root)).then(() => true, () => false))) missing.push(`${file}: no such file`);
  }
  assert.deepEqual(missing, []);
});
