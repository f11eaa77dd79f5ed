// The committed API types are what `npm run api:types` would write now: generated in this
// process the same way (scripts/api-types.ts), from the document this checkout builds.
// There is one copy, the front-desk example's; the tests import it.
import assert from "node:assert/strict";
import { API_TYPES_FILE, apiTypes } from "../../scripts/api-types.ts";

function firstDifference(expected: string, actual: string): string {
  const want = expected.split("\n");
  const got = actual.split("\n");
  const at = want.findIndex((line, i) => line !== got[i]);
  const line = at === -1 ? want.length : at;
  return `first difference at line ${line + 1}:\n  committed: ${want[line] ?? "(end of file)"}\n  document:  ${got[line] ?? "(end of file)"}`;
}

Deno.test(`the committed API types in ${API_TYPES_FILE} match the OpenAPI document`, async () => {
  const types = await apiTypes();
  assert.match(types, /^export interface paths \{$/m, "the generator wrote no paths");
  assert.match(types, /^export interface components \{$/m, "the generator wrote no components");
  const committed = await Deno.readTextFile(new URL(`../../${API_TYPES_FILE}`, import.meta.url));
  assert.ok(
    committed === types,
    `${API_TYPES_FILE} does not match the OpenAPI document; run \`npm run api:types\` and commit the result.\n` +
      firstDifference(committed, types),
  );
});
