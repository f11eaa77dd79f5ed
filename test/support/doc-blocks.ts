// The shell blocks of the project's documents (README.md and docs/*.md), found the way a
// reader finds them: a fenced block whose language is a shell's, under a heading. Each has
// an id, `<file>#<heading>` (`#<heading> (2)` for a heading's second shell block and so
// on), by which a test asks for it with docBlock("<id>"), written out as a literal, so
// that test/docs/shell-blocks.test.ts can see which blocks some test runs.
import assert from "node:assert/strict";

const root = new URL("../../", import.meta.url);

// Fence languages that hold commands for a shell.
export const SHELL_LANGUAGES = new Set(["bash", "sh", "shell", "zsh", "console"]);
// The first line of a block that can run only against a hosted Supabase project.
export const HOSTED_MARK = "# needs a hosted Supabase project";
// The fence info string of a listing of the project's npm scripts (install, test, stack,
// bench): commands too long or too wide for a test to run, so the test checks that each
// names a script package.json has and that the files the script calls exist.
export const NPM_SCRIPTS_INFO = "sh npm-scripts";

export type ShellBlock = {
  file: string; // relative to the repository's root
  heading: string;
  id: string;
  info: string; // the fence's info string, as written
  text: string; // the block's lines, each ending with a newline
  line: number; // the fence's line, 1-based
};

// README.md and every docs/*.md, in a stable order.
export async function documentFiles(): Promise<string[]> {
  const files = ["README.md"];
  const docs: string[] = [];
  for await (const entry of Deno.readDir(new URL("docs/", root))) {
    if (entry.isFile && entry.name.endsWith(".md")) docs.push(`docs/${entry.name}`);
  }
  return [...files, ...docs.sort()];
}

export const readDocument = (file: string) => Deno.readTextFile(new URL(file, root));

// Every fenced block with a shell language in one document. Fences are ``` or longer at
// the start of a line; a block ends at a fence of at least its own length.
export function shellBlocks(file: string, markdown: string): ShellBlock[] {
  const blocks: ShellBlock[] = [];
  const perHeading = new Map<string, number>();
  let heading = "";
  let open: { fence: string; info: string; line: number; lines: string[] } | null = null;
  markdown.split("\n").forEach((line, index) => {
    if (open) {
      const close = /^(`{3,})\s*$/.exec(line);
      if (close && close[1]!.length >= open.fence.length) {
        const language = open.info.split(/\s+/)[0]!.toLowerCase();
        if (SHELL_LANGUAGES.has(language)) {
          const seen = (perHeading.get(heading) ?? 0) + 1;
          perHeading.set(heading, seen);
          blocks.push({
            file,
            heading,
            id: `${file}#${heading}${seen > 1 ? ` (${seen})` : ""}`,
            info: open.info,
            text: open.lines.map((l) => `${l}\n`).join(""),
            line: open.line,
          });
        }
        open = null;
      } else {
        // A fence with an info string inside a block is a block left open above it.
        assert.doesNotMatch(line, /^`{3,}\S/, `${file}:${index + 1}: a fence opens inside the block of line ${open.line}`);
        open.lines.push(line);
      }
      return;
    }
    const fence = /^(`{3,})(.*)$/.exec(line);
    if (fence) {
      open = { fence: fence[1]!, info: fence[2]!.trim(), line: index + 1, lines: [] };
      return;
    }
    const title = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (title) heading = title[1]!;
  });
  assert.equal(open, null, `${file}: a fenced block is never closed`);
  return blocks;
}

export async function allShellBlocks(): Promise<ShellBlock[]> {
  const blocks: ShellBlock[] = [];
  for (const file of await documentFiles()) blocks.push(...shellBlocks(file, await readDocument(file)));
  return blocks;
}

// One block by its id, exactly as written, for a test to run. Call it with the id as a
// string literal: test/docs/shell-blocks.test.ts reads the tests' sources for these calls.
// A listing of npm scripts (npm test among them) or a hosted-only block is never handed
// out to be run: a test that ran `npm test` would run the suite within itself.
export async function docBlock(id: string): Promise<string> {
  const file = id.slice(0, id.indexOf("#"));
  assert.ok(file, `a block id is <file>#<heading>: ${id}`);
  const found = shellBlocks(file, await readDocument(file)).filter((block) => block.id === id);
  assert.equal(found.length, 1, `${file} has one shell block ${id}`);
  const block = found[0]!;
  assert.notEqual(block.info, NPM_SCRIPTS_INFO, `${id} is a listing of npm scripts, not a block to run`);
  assert.notEqual(block.text.split("\n")[0], HOSTED_MARK, `${id} needs a hosted Supabase project`);
  assert.doesNotMatch(block.text, /\bnpm (test|t|run (test|bench|fuzz|stack:reset))\b/, `${id} would run the suite, the bench or a reset`);
  return block.text;
}

export type BlockRun = { code: number; stdout: string; stderr: string };

// Runs a block as a reader would: with bash, stopping at the first failing command or
// pipe, from the checkout, with `env` added to the environment. Says how it ended; the
// caller judges it.
export async function runDocBlock(script: string, env: Record<string, string> = {}): Promise<BlockRun> {
  const result = await new Deno.Command("bash", {
    args: ["-euo", "pipefail", "-c", script],
    cwd: root,
    env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  return { code: result.code, stdout: decoder.decode(result.stdout), stderr: decoder.decode(result.stderr) };
}

// The ids the tests in `folder` (relative to the root) run, with the file that runs each.
export async function claimedBlocks(folder: string): Promise<Map<string, string[]>> {
  const claims = new Map<string, string[]>();
  for await (const entry of Deno.readDir(new URL(folder, root))) {
    if (!entry.isFile || !entry.name.endsWith(".ts")) continue;
    const source = await Deno.readTextFile(new URL(`${folder}${entry.name}`, root));
    for (const match of source.matchAll(/docBlock\(\s*"((?:[^"\\]|\\.)*)"\s*\)/g)) {
      const id = JSON.parse(`"${match[1]}"`) as string;
      claims.set(id, [...(claims.get(id) ?? []), `${folder}${entry.name}`]);
    }
  }
  return claims;
}

// A shell script's simple commands, as words: quotes removed, `\`-newline joined, comments
// dropped, leading NAME=value assignments left out; commands end at a newline, `;`, `&`,
// `&&`, `||` and `|`. Expansions ($NAME, $(...)) stay as written, unexpanded: this reads a
// script, it runs nothing.
export function simpleCommands(script: string): string[][] {
  const commands: string[][] = [];
  let words: string[] = [];
  let word: string | null = null;
  const endWord = () => {
    if (word !== null) words.push(word);
    word = null;
  };
  const endCommand = () => {
    endWord();
    while (words.length > 0 && /^[A-Za-z_][A-Za-z0-9_]*(\+?=)/.test(words[0]!)) words.shift();
    if (words.length > 0) commands.push(words);
    words = [];
  };
  for (let i = 0; i < script.length; i++) {
    const c = script[i]!;
    if (c === "\\" && script[i + 1] === "\n") {
      i++;
      continue;
    }
    if (c === "\\") {
      word = (word ?? "") + (script[i + 1] ?? "");
      i++;
    } else if (c === "'") {
      const end = script.indexOf("'", i + 1);
      assert.ok(end > i, "an unclosed single quote");
      word = (word ?? "") + script.slice(i + 1, end);
      i = end;
    } else if (c === '"') {
      let j = i + 1;
      let text = "";
      for (; j < script.length && script[j] !== '"'; j++) {
        if (script[j] === "\\" && j + 1 < script.length) text += script[++j];
        else text += script[j];
      }
      assert.ok(j < script.length, "an unclosed double quote");
      word = (word ?? "") + text;
      i = j;
    } else if (c === "#" && word === null) {
      while (i + 1 < script.length && script[i + 1] !== "\n") i++;
    } else if (c === "\n" || c === ";" || c === "&" || c === "|") {
      endCommand();
      if ((c === "&" || c === "|") && script[i + 1] === c) i++;
    } else if (c === " " || c === "\t") {
      endWord();
    } else {
      word = (word ?? "") + c;
    }
  }
  endCommand();
  return commands;
}
