// docs/benchmarks.md shows the latest run of npm run bench, and no other: the section
// between its two markers is bench/results/latest.md as the bench wrote it, and names
// that run, whose row is in bench/results/history.md; bench/results keeps nothing else.
// bench/report.ts's withLatestResults and withHistoryRow are what the bench writes them with.
import assert from "node:assert/strict";
import { HISTORY_HEADER, LATEST_RESULTS_END, LATEST_RESULTS_START, withHistoryRow, withLatestResults } from "../../bench/report.ts";

const root = new URL("../../", import.meta.url);
const read = (path: string) => Deno.readTextFile(new URL(path, root));

Deno.test("docs/benchmarks.md's latest results are bench/results/latest.md, the run its marker names and the history's last row", async () => {
  const page = await read("docs/benchmarks.md");
  const start = LATEST_RESULTS_START.exec(page);
  assert.ok(start, "the page has the latest-results marker");
  const end = page.indexOf(LATEST_RESULTS_END);
  assert.ok(end > start.index, "and its end marker after it");
  const shown = page.slice(start.index + start[0].length, end);
  const latest = await read("bench/results/latest.md");
  assert.equal(shown, latest.replace(/\n*$/, "\n"), "the section is bench/results/latest.md");
  // Only that run: no other run's tables on the page.
  assert.equal(page.match(/^Run \d{4}-\d\d-\d\dT/gm)?.length, 1, "one run on the page");

  const history = await read("bench/results/history.md");
  assert.ok(history.startsWith(HISTORY_HEADER), "the history has its header");
  const rows = history.slice(HISTORY_HEADER.length).trim().split("\n");
  assert.ok(rows.length > 1, `${rows.length} runs in the history`);
  assert.ok(rows.at(-1)!.startsWith(`| ${start[1]} |`), `the last row is the run the page shows, ${start[1]}`);
  const report = JSON.parse(await read("bench/results/latest.json")) as { commit: string; date: string };
  assert.ok(latest.startsWith(`Run ${report.date} at commit \`${report.commit}\``), "latest.md and latest.json are one run");
  assert.equal(start[1], `${report.date.slice(0, 10)}-${report.commit}`);

  const kept = [];
  for await (const entry of Deno.readDir(new URL("bench/results/", root))) kept.push(entry.name);
  assert.deepEqual(kept.sort(), ["history.md", "latest.json", "latest.md"], "the latest run and the history, nothing else");
});

Deno.test("withLatestResults replaces the section and its marker, and nothing else", () => {
  const page = "intro\n<!-- bench: the latest results, run old (bench/results/latest.md); npm run bench rewrites this section -->\n" +
    "old table\n<!-- bench: end of the latest results -->\nafter\n";
  assert.equal(
    withLatestResults(page, "2027-01-01-abc", "new table\n\n"),
    "intro\n<!-- bench: the latest results, run 2027-01-01-abc (bench/results/latest.md); npm run bench rewrites this section -->\n" +
      "new table\n<!-- bench: end of the latest results -->\nafter\n",
  );
  assert.throws(() => withLatestResults("no markers\n", "x", "t"), /no latest-results markers/);
});

Deno.test("withHistoryRow adds a run's row after the others, or replaces the row of the same run", () => {
  const first = withHistoryRow("", "2027-01-01-abc", "| 2027-01-01-abc | one |\n");
  assert.equal(first, `${HISTORY_HEADER}| 2027-01-01-abc | one |\n`);
  const second = withHistoryRow(first, "2027-01-02-def", "| 2027-01-02-def | two |");
  assert.equal(second, `${HISTORY_HEADER}| 2027-01-01-abc | one |\n| 2027-01-02-def | two |\n`);
  assert.equal(withHistoryRow(second, "2027-01-01-abc", "| 2027-01-01-abc | again |"), `${HISTORY_HEADER}| 2027-01-02-def | two |\n| 2027-01-01-abc | again |\n`);
});
