// docs/benchmarks.md shows the latest run of npm run bench, and no other: the section
// between its two markers is bench/results/latest.md as the bench wrote it, and names
// that run's file in bench/results/; bench/report.ts's withLatestResults is what the
// bench rewrites the section with after each run.
import assert from "node:assert/strict";
import { LATEST_RESULTS_END, LATEST_RESULTS_START, withLatestResults } from "../../bench/report.ts";

const root = new URL("../../", import.meta.url);
const read = (path: string) => Deno.readTextFile(new URL(path, root));

Deno.test("docs/benchmarks.md's latest results are bench/results/latest.md, the run its marker names", async () => {
  const page = await read("docs/benchmarks.md");
  const start = LATEST_RESULTS_START.exec(page);
  assert.ok(start, "the page has the latest-results marker");
  const end = page.indexOf(LATEST_RESULTS_END);
  assert.ok(end > start.index, "and its end marker after it");
  const shown = page.slice(start.index + start[0].length, end);
  const latest = await read("bench/results/latest.md");
  assert.equal(shown, latest.replace(/\n*$/, "\n"), "the section is bench/results/latest.md");
  assert.equal(await read(`bench/results/${start[1]}.md`), latest, `the marker names the run: bench/results/${start[1]}.md`);
  // Only that run: no other run's tables on the page.
  assert.equal(page.match(/^Run \d{4}-\d\d-\d\dT/gm)?.length, 1, "one run on the page");
});

Deno.test("withLatestResults replaces the section and its marker, and nothing else", () => {
  const page = "intro\n<!-- bench: the latest results, bench/results/old.md; npm run bench rewrites this section -->\n" +
    "old table\n<!-- bench: end of the latest results -->\nafter\n";
  assert.equal(
    withLatestResults(page, "2027-01-01-abc", "new table\n\n"),
    "intro\n<!-- bench: the latest results, bench/results/2027-01-01-abc.md; npm run bench rewrites this section -->\n" +
      "new table\n<!-- bench: end of the latest results -->\nafter\n",
  );
  assert.throws(() => withLatestResults("no markers\n", "x", "t"), /no latest-results markers/);
});
