// The README's and docs/'s links between the project's own files resolve: every relative
// link names a file of the checkout, and every #anchor a heading of the page it points
// into, with the anchor GitHub makes of that heading. Links out of the checkout (http,
// mailto) are not followed.
import assert from "node:assert/strict";
import { documentFiles, readDocument } from "../support/doc-blocks.ts";

const root = new URL("../../", import.meta.url);

// GitHub's anchor for a heading: lower case, markup and punctuation dropped, spaces to
// hyphens; a repeated heading gets -1, -2, ...
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const found = new Set<string>();
  let fenced = false;
  for (const line of markdown.split("\n")) {
    if (/^`{3,}/.test(line)) fenced = !fenced;
    const heading = fenced ? null : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (!heading) continue;
    const base = heading.toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, "").replace(/\s/g, "-");
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    found.add(count === 0 ? base : `${base}-${count}`);
  }
  return found;
}

// The Markdown links of a page outside its code: [text](target).
function links(markdown: string): string[] {
  const prose = markdown.replace(/^(`{3,}).*\n[\s\S]*?^\1\s*$/gm, "").replace(/`[^`\n]*`/g, "");
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1]!);
}

async function exists(url: URL): Promise<boolean> {
  try {
    await Deno.stat(url);
    return true;
  } catch {
    return false;
  }
}

Deno.test("every link between the README, docs/ and the checkout's files resolves, anchors included", async () => {
  const broken: string[] = [];
  for (const file of await documentFiles()) {
    const page = new URL(file, root);
    for (const target of links(await readDocument(file))) {
      if (/^[a-z]+:/.test(target)) continue;
      const [path, anchor] = target.split("#") as [string, string | undefined];
      const url = path === "" ? page : new URL(path, page);
      const relative = url.href.slice(root.href.length);
      if (!await exists(url)) {
        broken.push(`${file}: ${target} (no such file)`);
        continue;
      }
      if (anchor !== undefined && relative.endsWith(".md") && !anchors(await Deno.readTextFile(url)).has(anchor)) {
        broken.push(`${file}: ${target} (no such heading)`);
      }
    }
  }
  assert.deepEqual(broken, []);
});


Deno.test("GitHub's anchors, as this test makes them", () => {
  assert.deepEqual(
    [...anchors("# A first walk-through: from sign-up to a delivered notification\n## Tests of the database (pgTAP, `supabase/tests`)\n## Tests\n## Tests\n")],
    ["a-first-walk-through-from-sign-up-to-a-delivered-notification", "tests-of-the-database-pgtap-supabasetests", "tests", "tests-1"],
  );
});
