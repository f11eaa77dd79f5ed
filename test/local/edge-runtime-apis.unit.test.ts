// What the functions' code may use in Supabase's Edge Runtime, checked in the source: the
// runtime runs a function in an isolate of its own on the Deno 2.1 line, where some Deno and
// node APIs throw, do nothing, or ignore options they accept. A use of one fails this test
// with the place and the reason; the facts and where each comes from are beside each rule.
// The code checked is every TypeScript file the deployed functions are made of: src/ and
// supabase/functions/*/index.ts.
import assert from "node:assert/strict";

const root = new URL("../../", import.meta.url);

type Rule = { pattern: RegExp; why: string };

const RULES: Rule[] = [
  {
    pattern: /from\s+["']node:https?["']|import\(\s*["']node:https?["']\s*\)/,
    why: "the runtime's node:http and node:https clients are built on fetch: the `lookup` option throws " +
      "(notImplemented ClientRequest.options.lookup), `createConnection` is ignored with a warning, an agent's sockets " +
      "are never used and a per-request `ca` is ignored (supabase/edge-runtime ext/node/polyfills/http.ts); use fetch, " +
      "or Deno.connect and Deno.startTls where the address must be chosen",
  },
  {
    pattern: /from\s+["']node:(child_process|worker_threads|vm|cluster)["']/,
    why: "no processes, workers or vm contexts in the runtime (Edge Functions limits: Web Worker and node vm APIs are not available; " +
      "allow_run is not granted, crates/base/src/runtime/permissions.rs)",
  },
  {
    pattern: /\bDeno\.(Command|run|dlopen)\b/,
    why: "Deno.Command throws \"Spawning subprocesses is not allowed on Supabase Edge Runtime.\" and Deno.run and " +
      "Deno.dlopen do not exist there (ext/os/os.js, ext/runtime/js/denoOverrides.js)",
  },
  {
    pattern: /\bnew\s+Worker\s*\(/,
    why: "Web Workers are not available in the runtime (Edge Functions limits)",
  },
  {
    pattern: /\bDeno\.(listen|listenTls|listenDatagram)\s*\(/,
    why: "a function cannot listen: Deno.listen is a placeholder behind the runtime's router, and TLS, UDP and Unix " +
      "listeners are not supported (ext/runtime/ops/net.rs); serve with Deno.serve",
  },
  {
    pattern: /\bDeno\.(openKv|cron)\b/,
    why: "Deno KV and Deno.cron are not exposed to functions",
  },
  {
    pattern: /\bDeno\.(chmod|chown|copyFile|rename|symlink|link|truncate|utime|readLink|makeTempFile|openSync|createSync|chdir)(Sync)?\s*\(/,
    why: "these Deno file system APIs throw \"Deno.<name> is blocklisted\" in the runtime (ext/runtime/js/denoOverrides.js)",
  },
  {
    pattern: /\bSharedArrayBuffer\b/,
    why: "the runtime deletes SharedArrayBuffer, so that no memory escapes a worker's limit",
  },
  {
    pattern: /\bcpuUsage\s*\(/,
    why: "process.cpuUsage is not implemented on the Deno 2.1 line (it warns and answers zeros)",
  },
  {
    pattern: /\bECDH\.convertKey\b/,
    why: "crypto.ECDH.convertKey throws ERR_NOT_IMPLEMENTED on the Deno 2.1 line",
  },
];

async function* typeScriptFiles(folder: URL): AsyncGenerator<string> {
  for await (const entry of Deno.readDir(folder)) {
    const url = new URL(entry.name + (entry.isDirectory ? "/" : ""), folder);
    if (entry.isDirectory && entry.name !== "static") yield* typeScriptFiles(url);
    else if (entry.isFile && entry.name.endsWith(".ts")) yield url.pathname.slice(root.pathname.length);
  }
}

// Code, not what comments and strings say of it.
function withoutComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, "").split("\n").map((line) => line.replace(/(^|[^:])\/\/.*$/, "$1")).join("\n");
}

async function functionSources(): Promise<string[]> {
  const files: string[] = [];
  for await (const file of typeScriptFiles(new URL("src/", root))) files.push(file);
  for await (const entry of Deno.readDir(new URL("supabase/functions/", root))) {
    if (entry.isDirectory) {
      const index = `supabase/functions/${entry.name}/index.ts`;
      if (await Deno.stat(new URL(index, root)).then(() => true, () => false)) files.push(index);
    }
  }
  return files.sort();
}

Deno.test("the functions use no API the Edge Runtime lacks, refuses or ignores", async () => {
  const files = await functionSources();
  assert.ok(files.some((file) => file.startsWith("src/webhook-delivery/")) && files.includes("supabase/functions/api/index.ts"));
  const found: string[] = [];
  for (const file of files) {
    const lines = withoutComments(await Deno.readTextFile(new URL(file, root))).split("\n");
    lines.forEach((line, index) => {
      for (const rule of RULES) if (rule.pattern.test(line)) found.push(`${file}:${index + 1}: ${line.trim()}\n  ${rule.why}`);
    });
  }
  assert.deepEqual(found, []);
});

Deno.test("each rule catches what it names", () => {
  const samples: [string, number][] = [
    [`import https from "node:https";`, 0],
    [`import { spawn } from "node:child_process";`, 1],
    [`await new Deno.Command("ls").output();`, 2],
    [`const worker = new Worker(url);`, 3],
    [`const listener = Deno.listen({ port: 80 });`, 4],
    [`const kv = await Deno.openKv();`, 5],
    [`await Deno.rename(a, b);`, 6],
    [`const shared = new SharedArrayBuffer(8);`, 7],
    [`const used = process.cpuUsage();`, 8],
    [`ECDH.convertKey(bytes, "prime256v1");`, 9],
  ];
  for (const [line, rule] of samples) assert.ok(RULES[rule]!.pattern.test(line), line);
  assert.equal(samples.length, RULES.length);
  assert.ok(!RULES.some((rule) => rule.pattern.test(withoutComments(`// import https from "node:https";`))));
});

// The functions' own configuration, which the runtime reads (a deno.json's imports, a
// lockfile of version 4: deno_lockfile 0.23.2, which the runtime pins, reads no other),
// pins every package at the version the tests run it with (the top-level deno.json).
Deno.test("supabase/functions/deno.json: the tests' versions of the functions' packages, a version 4 lockfile that pins each", async () => {
  const functions = JSON.parse(await Deno.readTextFile(new URL("supabase/functions/deno.json", root)));
  const top = JSON.parse(await Deno.readTextFile(new URL("deno.json", root)));
  for (const [name, target] of Object.entries(functions.imports as Record<string, string>)) {
    assert.equal(top.imports[name], target, `${name}: the functions and the tests use one version`);
  }
  assert.deepEqual(functions.lock, { path: "./deno.lock", frozen: true });
  const lock = JSON.parse(await Deno.readTextFile(new URL("supabase/functions/deno.lock", root)));
  assert.equal(lock.version, "4");
  for (const target of Object.values(functions.imports as Record<string, string>)) {
    assert.ok(target in lock.specifiers, `the lockfile pins ${target}`);
  }
  // Every package the functions' code imports is in their import map: a name there, or a
  // subpath of one (kysely/readonly), which Deno resolves through the package's mapping.
  const imported = new Set<string>();
  for (const file of await functionSources()) {
    for (const match of (await Deno.readTextFile(new URL(file, root))).matchAll(/from\s+"([^".][^"]*)"/g)) {
      if (!match[1]!.startsWith("node:")) imported.add(match[1]!);
    }
  }
  const mapped = (name: string) => Object.keys(functions.imports).some((key) => name === key || name.startsWith(`${key}/`));
  assert.deepEqual([...imported].filter((name) => !mapped(name)), []);
});
