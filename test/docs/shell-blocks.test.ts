// Every shell block in README.md and docs/*.md is proved, as written, one of three ways:
//
// 1. Run by a test. A test in test/docs/ asks for the block by its id, `<file>#<heading>`,
//    with a call of docBlock (test/support/doc-blocks.ts), runs it with bash against the local stack and checks what
//    it printed or did. This file reads those tests' sources for the calls, so a block no
//    test asks for fails here, and so does a call naming a block that is gone.
// 2. Marked `# needs a hosted Supabase project` on its first line: it can run only against a
//    hosted project (supabase link, secrets set, functions deploy), which no test here can
//    reach. Such a block must parse (`bash -n`), must consist of `supabase` commands alone
//    (anything else could run here, and belongs in a block of the first kind), and each of
//    its commands must be one the pinned CLI has, with flags it lists: the CLI's own
//    `--help` for every subcommand named, walked from the top, so a misspelt subcommand or
//    flag fails.
// 3. Fenced as ```sh npm-scripts: a listing of the project's npm scripts (npm install,
//    npm test, npm run bench, ...), which a test cannot run (the test suite itself, a
//    ten-minute benchmark, an install). Each line must be `npm install`, `npm test` or
//    `npm run <script>`, optionally after NAME=value settings and before arguments; the
//    script must be in package.json, and every file its command names (scripts/*.sh,
//    *.ts) must exist. `npm ci` is refused: the lock does not allow it (README, The two
//    commands).
//
// Any other shell block (```bash, ```sh, ```shell, ```console) fails this test.
import assert from "node:assert/strict";
import {
  allShellBlocks,
  claimedBlocks,
  HOSTED_MARK,
  NPM_SCRIPTS_INFO,
  type ShellBlock,
  simpleCommands,
} from "../support/doc-blocks.ts";

const root = new URL("../../", import.meta.url);

const isHosted = (block: ShellBlock) => block.text.split("\n")[0] === HOSTED_MARK;
const isScriptListing = (block: ShellBlock) => block.info === NPM_SCRIPTS_INFO;

async function parses(script: string): Promise<string | null> {
  const child = new Deno.Command("bash", { args: ["-n"], stdin: "piped", stdout: "null", stderr: "piped" }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(script));
  await writer.close();
  const { code, stderr } = await child.output();
  return code === 0 ? null : new TextDecoder().decode(stderr);
}

// ---------------------------------------------------------------- the pinned Supabase CLI

type Help = { usage: string; subcommands: Set<string>; flags: Set<string> };
const helps = new Map<string, Promise<Help>>();

async function readHelp(path: string[]): Promise<Help> {
  // From an empty folder, so that no project's config is read.
  const cwd = await Deno.makeTempDir();
  try {
    const result = await new Deno.Command(new URL("node_modules/.bin/supabase", root).pathname, {
      args: [...path, "--help"],
      cwd,
      env: { SUPABASE_TELEMETRY_DISABLED: "1", DO_NOT_TRACK: "1" },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(result.stdout) + new TextDecoder().decode(result.stderr);
    assert.equal(result.code, 0, `supabase ${path.join(" ")} --help failed: ${text}`);
    const sections = new Map<string, string[]>();
    let current = "";
    for (const line of text.split("\n")) {
      if (/^[A-Z][A-Z ]+$/.test(line)) current = line;
      else sections.set(current, [...(sections.get(current) ?? []), line]);
    }
    const usage = (sections.get("USAGE") ?? []).map((line) => line.trim()).find((line) => line !== "") ?? "";
    const subcommands = new Set<string>();
    for (const line of sections.get("SUBCOMMANDS") ?? []) {
      // "  migration, migrations Manage ..." names two.
      const names = /^\s+([a-z][\w-]*(?:, [a-z][\w-]*)*)/.exec(line)?.[1];
      for (const name of names?.split(", ") ?? []) subcommands.add(name);
    }
    const flags = new Set<string>();
    for (const [name, lines] of sections) {
      if (!name.endsWith("FLAGS")) continue;
      for (const line of lines) {
        const head = /^\s+(-[^ ]+(?:, -[^ ]+)*)/.exec(line)?.[1] ?? "";
        for (const flag of head.matchAll(/--?[A-Za-z][\w-]*/g)) flags.add(flag[0]);
      }
    }
    return { usage, subcommands, flags };
  } finally {
    await Deno.remove(cwd, { recursive: true });
  }
}

function help(path: string[]): Promise<Help> {
  const key = path.join(" ");
  if (!helps.has(key)) helps.set(key, readHelp(path));
  return helps.get(key)!;
}

// What is wrong with one `supabase ...` command, for the pinned CLI; [] when nothing is.
async function cliProblems(words: string[]): Promise<string[]> {
  assert.equal(words[0], "supabase");
  const problems: string[] = [];
  const path: string[] = [];
  const flags: string[] = [];
  let current = await help(path);
  let argumentsStarted = false;
  for (const word of words.slice(1)) {
    if (word.startsWith("-")) {
      flags.push(word.split("=")[0]!);
      continue;
    }
    if (!argumentsStarted && current.usage.includes("<subcommand>")) {
      if (!current.subcommands.has(word)) {
        problems.push(`\`supabase ${[...path, word].join(" ")}\`: the CLI has no such subcommand`);
        return problems;
      }
      path.push(word);
      current = await help(path);
      continue;
    }
    argumentsStarted = true;
    if (!/<[^>]+>/.test(current.usage.replace(/<subcommand>/, ""))) {
      problems.push(`\`supabase ${path.join(" ")}\` takes no argument, but is given ${word}`);
    }
  }
  if (current.usage.includes("<subcommand>") && !argumentsStarted) {
    problems.push(`\`supabase ${path.join(" ")}\` needs a subcommand`);
  }
  for (const flag of flags) {
    if (!current.flags.has(flag)) problems.push(`\`supabase ${path.join(" ")}\` has no flag ${flag}`);
  }
  return problems;
}

async function hostedBlockProblems(block: ShellBlock): Promise<string[]> {
  const problems: string[] = [];
  const syntax = await parses(block.text);
  if (syntax) problems.push(`does not parse: ${syntax}`);
  if (syntax) return problems;
  const commands = simpleCommands(block.text);
  if (!commands.some((words) => words[0] === "supabase")) problems.push("runs no supabase command");
  for (const words of commands) {
    if (words[0] !== "supabase") {
      problems.push(`\`${words.join(" ")}\` is not a supabase command: it can run here, in a block a test runs`);
    } else {
      problems.push(...await cliProblems(words));
    }
  }
  return problems;
}

// ---------------------------------------------------------------- the npm scripts

const packageJson = JSON.parse(await Deno.readTextFile(new URL("package.json", root))) as {
  scripts: Record<string, string>;
};

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(new URL(path, root));
    return true;
  } catch {
    return false;
  }
}

async function scriptListingProblems(block: ShellBlock): Promise<string[]> {
  const problems: string[] = [];
  const syntax = await parses(block.text);
  if (syntax) return [`does not parse: ${syntax}`];
  const commands = simpleCommands(block.text);
  if (commands.length === 0) problems.push("lists nothing");
  for (const words of commands) {
    const [npm, verb, name] = words;
    if (npm !== "npm") {
      problems.push(`\`${words.join(" ")}\` is not an npm command`);
      continue;
    }
    if (verb === "install") {
      if (!await exists("package-lock.json")) problems.push("npm install, but there is no package-lock.json");
      continue;
    }
    const script = verb === "test" ? "test" : verb === "run" ? name : undefined;
    if (script === undefined) {
      problems.push(`\`${words.join(" ")}\`: only npm install, npm test and npm run <script> are listed`);
      continue;
    }
    const command = packageJson.scripts[script];
    if (command === undefined) {
      problems.push(`package.json has no script ${script}`);
      continue;
    }
    for (const file of command.split(/\s+/).filter((word) => /^[\w./-]+\.(sh|ts)$/.test(word))) {
      if (!await exists(file)) problems.push(`the script ${script} calls ${file}, which does not exist`);
    }
  }
  return problems;
}

// ---------------------------------------------------------------- the tests

const blocks = await allShellBlocks();
const claims = await claimedBlocks("test/docs/");

Deno.test("the documents have shell blocks, and each id names one block", () => {
  assert.ok(blocks.length >= 10, `found ${blocks.length} shell blocks`);
  const ids = blocks.map((block) => block.id);
  assert.deepEqual(ids.filter((id, at) => ids.indexOf(id) !== at), [], "ids are unique");
});

Deno.test("every shell block in the README and docs/ is run by a test, or marked as hosted-only, or a listing of npm scripts", () => {
  const unproved = blocks.filter((block) => !claims.has(block.id) && !isHosted(block) && !isScriptListing(block));
  assert.deepEqual(
    unproved.map((block) => `${block.file}:${block.line} (${block.id})`),
    [],
    "each of these needs a test in test/docs/ that runs it through docBlock(id), or the hosted mark, or the npm-scripts fence",
  );
});

Deno.test("every block a test asks for exists, and no test asks for a hosted-only block or a listing", () => {
  assert.ok(!claims.has(""), "no empty id");
  for (const [id, files] of claims) {
    const found = blocks.filter((block) => block.id === id);
    assert.equal(found.length, 1, `${files.join(", ")} asks for ${id}, which no document has`);
    assert.ok(!isHosted(found[0]!) && !isScriptListing(found[0]!), `${id} is not run, so no test may claim to run it`);
  }
});

Deno.test("every block a test runs parses as bash", async () => {
  for (const block of blocks.filter((block) => claims.has(block.id))) {
    assert.equal(await parses(block.text), null, block.id);
  }
});

Deno.test("hosted-only blocks parse, run only supabase commands, and each command and flag is the pinned CLI's", async () => {
  const hosted = blocks.filter(isHosted);
  assert.ok(hosted.length > 0, "the deploy commands are among them");
  for (const block of hosted) {
    assert.deepEqual(await hostedBlockProblems(block), [], `${block.file}:${block.line} (${block.id})`);
  }
});

Deno.test("the hosted-block check refuses a misspelt subcommand, an unknown flag, a missing subcommand and a command of another kind", async () => {
  const problems = (text: string) =>
    hostedBlockProblems({ file: "x.md", heading: "x", id: "x.md#x", info: "bash", text: `${HOSTED_MARK}\n${text}`, line: 1 });
  assert.deepEqual(await problems("supabase db push\n"), []);
  assert.match((await problems("supabase db pussh\n")).join("\n"), /no such subcommand/);
  assert.match((await problems("supabase link --project-reff abcdefghijklmnopqrst\n")).join("\n"), /has no flag --project-reff/);
  assert.match((await problems("supabase secrets\n")).join("\n"), /needs a subcommand/);
  assert.match((await problems("supabase config push extra\n")).join("\n"), /takes no argument/);
  assert.match((await problems("supabase db push\ncurl -s http://127.0.0.1/\n")).join("\n"), /not a supabase command/);
  assert.match((await problems("supabase db push 'unclosed\n")).join("\n"), /does not parse/);
});

Deno.test("npm-script listings name scripts package.json has, whose files exist", async () => {
  const listings = blocks.filter(isScriptListing);
  assert.ok(listings.some((block) => block.file === "README.md"), "the README's two commands are one");
  for (const block of listings) {
    assert.deepEqual(await scriptListingProblems(block), [], `${block.file}:${block.line} (${block.id})`);
  }
  const problems = (text: string) =>
    scriptListingProblems({ file: "x.md", heading: "x", id: "x.md#x", info: NPM_SCRIPTS_INFO, text, line: 1 });
  assert.match((await problems("npm run no-such-script\n")).join("\n"), /no script no-such-script/);
  assert.match((await problems("npm ci\n")).join("\n"), /only npm install/);
});
