// `supabase functions deploy`, proven without a hosted project: the pinned CLI's real
// deploy (--use-api, which uploads the sources and needs no Docker) talks to
// local/management-api, a stand-in for the Management API, and both run in a network
// namespace of their own where only loopback exists. Each upload must be exactly the
// function's module graph (as `deno info` sees it with the same import map) plus that
// import map and its static files, carry the config's verify_jwt, and, unpacked alone in an empty folder,
// resolve every import from the Deno cache with no network. docs/deploy.md.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url)).replace(/\/$/, "");
const DENO = Deno.execPath();
const CLI = join(ROOT, "node_modules/.bin/supabase");
const DENO_DIR = Deno.env.get("DENO_DIR") || join(ROOT, ".stack/deno");

// The functions a deploy takes, with the verify_jwt supabase/config.toml gives each,
// and the test-only ones it must leave out. Every folder of supabase/functions with an
// index.ts is in one list or the other.
// The api function also takes its static files (config.toml's static_files): the reference
// page's renderer, which the function reads at run time, not imports.
const DEPLOYED: Record<string, { verifyJwt: boolean; staticPatterns?: string[]; staticFiles?: string[] }> = {
  api: {
    verifyJwt: false,
    staticPatterns: ["supabase/functions/api/static/*"],
    staticFiles: ["supabase/functions/api/static/api-reference.js"],
  },
  "notifications-worker": { verifyJwt: false },
  "webhooks-worker": { verifyJwt: false },
};
const TEST_ONLY = ["bench-ceiling"];
// Where config.toml points every deployed function's import map (./functions/deno.json
// from supabase/), as the upload names it.
const IMPORT_MAP = "supabase/functions/deno.json";

// A project ref is 20 lowercase letters; a personal access token is sbp_ and 40 hex digits.
const REF = "abcdefghijklmnopqrst";
const TOKEN = `sbp_${"0123456789abcdef".repeat(3).slice(0, 40)}`;
// Anything that tries the network through a proxy meets a closed port (outside a namespace too).
const DEAD_PROXY = "http://127.0.0.1:9";

type Run = { code: number; stdout: string; stderr: string };

async function run(command: string[], options: { env?: Record<string, string>; clearEnv?: boolean; cwd?: string } = {}): Promise<Run> {
  const [program, ...args] = command;
  const output = await new Deno.Command(program!, {
    args,
    env: options.env,
    clearEnv: options.clearEnv,
    cwd: options.cwd,
    stdin: "null",
    signal: AbortSignal.timeout(180_000),
  }).output();
  const decoder = new TextDecoder();
  return { code: output.code, stdout: decoder.decode(output.stdout), stderr: decoder.decode(output.stderr) };
}

// How the CLI and the stand-in are kept from the network: a new network namespace (as
// root), else a user and network namespace, else loopback alone.
type Isolation = { note: string; start: (command: string[]) => string[]; enter: (pid: number, command: string[]) => string[] };

async function chooseIsolation(): Promise<Isolation> {
  const forced = Deno.env.get("DEPLOY_BUNDLE_ISOLATION");
  const namespaces = [
    { name: "netns", unshare: ["--net"], nsenter: ["--net"], note: "a new network namespace (unshare --net)" },
    { name: "userns", unshare: ["-r", "-n"], nsenter: ["--user", "--net", "--preserve-credentials"], note: "a new user and network namespace (unshare -rn)" },
  ];
  for (const ns of namespaces) {
    if (forced !== undefined && forced !== ns.name) continue;
    const probe = await run(["unshare", ...ns.unshare, "--", "sh", "-c", "ip link set lo up"]).catch(() => undefined);
    if (probe?.code !== 0) continue;
    return {
      note: `the CLI and the stand-in run in ${ns.note}: only loopback exists there`,
      start: (command) => ["unshare", ...ns.unshare, "--", "sh", "-c", 'ip link set lo up && exec "$@"', "sh", ...command],
      enter: (pid, command) => ["nsenter", `--target=${pid}`, ...ns.nsenter, "--", ...command],
    };
  }
  return {
    note: "no network namespace could be made here: the CLI and the stand-in run on this host's loopback, with a dead proxy for anything else",
    start: (command) => command,
    enter: (_pid, command) => command,
  };
}

// The Deno environment of every `deno` run: the test's cache, no package.json (the
// platform bundles with DENO_NO_PACKAGE_JSON too), no lock file (none is uploaded).
const denoEnv = { DENO_DIR, NO_COLOR: "1", DENO_NO_PACKAGE_JSON: "1" };

type Graph = { files: string[]; external: string[]; errors: string[] };

type DenoInfo = {
  modules: {
    specifier: string;
    error?: string;
    dependencies?: { specifier: string; code?: { error?: string }; type?: { error?: string } }[];
  }[];
};

// The module graph of base/<entrypoint> with base/<importMap> as its config: its local
// files relative to base, every other module (npm:, node:), and anything unresolved.
async function moduleGraph(base: string, entrypoint: string, importMap: string, wrap: (c: string[]) => string[] = (c) => c): Promise<Graph> {
  const result = await run(
    wrap([DENO, "info", "--json", "--no-lock", "--config", join(base, importMap), join(base, entrypoint)]),
    { env: { ...denoEnv, HTTPS_PROXY: DEAD_PROXY, HTTP_PROXY: DEAD_PROXY }, cwd: base },
  );
  if (result.code !== 0) return { files: [], external: [], errors: [`deno info exited ${result.code}: ${result.stderr.trim()}`] };
  const info: DenoInfo = JSON.parse(result.stdout);
  const files: string[] = [];
  const external: string[] = [];
  const errors: string[] = [];
  for (const module of info.modules) {
    if (module.error) errors.push(`${module.specifier}: ${module.error}`);
    for (const dependency of module.dependencies ?? []) {
      for (const error of [dependency.code?.error, dependency.type?.error]) {
        if (error) errors.push(`${module.specifier} imports ${dependency.specifier}: ${error}`);
      }
    }
    if (!module.specifier.startsWith("file://")) {
      external.push(module.specifier);
      continue;
    }
    const path = relative(base, fileURLToPath(module.specifier));
    if (path.startsWith("..")) errors.push(`${module.specifier} lies outside ${base}`);
    files.push(path);
  }
  return { files: files.sort(), external: external.sort(), errors };
}

type Recorded = {
  method: string;
  path: string;
  query: Record<string, string>;
  status: number;
  metadata?: { name?: string; entrypoint_path?: string; import_map_path?: string; static_patterns?: string[]; verify_jwt?: boolean };
  files?: { name: string; sha256: string }[];
  unpackedTo?: string;
  body?: { slug: string }[];
  error?: string;
};

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");
const entrypointOf = (slug: string) => `supabase/functions/${slug}/index.ts`;
// The project lookup the CLI makes after a deploy, best effort, to cache the project's
// name in supabase/.temp; unanswered (404) here, so nothing is written into the checkout.
const isProjectLookup = (r: Recorded) => r.method === "GET" && r.path === `/v1/projects/${REF}`;

// What a deploy prints about files it skipped or could not read, or import maps it fell
// back to (its list of uploaded files aside, checked against the graph).
function warnings(output: string, allowed: RegExp[] = []): string[] {
  return output.split("\n").filter((line) =>
    !line.startsWith("Uploading asset (") && !allowed.some((a) => a.test(line)) &&
    /warn|skipping|failed|error|no such file|not a directory|fallback|deprecated/i.test(line)
  );
}

Deno.test("deploy bundle: the pinned CLI deploys each function to a stand-in Management API, offline", async (t) => {
  const isolation = await chooseIsolation();
  console.log(`deploy bundle: ${isolation.note}`);

  const slugs = Object.keys(DEPLOYED);
  // The cache the unpacked bundles resolve from, filled here while the registry is reachable.
  const cached = await run([DENO, "cache", "--no-lock", "--config", join(ROOT, IMPORT_MAP), ...slugs.map((s) => join(ROOT, entrypointOf(s)))], { env: denoEnv, cwd: ROOT });
  assert.equal(cached.code, 0, `deno cache failed:\n${cached.stderr}`);
  const local = new Map<string, Graph>();
  for (const slug of slugs) {
    const graph = await moduleGraph(ROOT, entrypointOf(slug), IMPORT_MAP);
    assert.deepEqual(graph.errors, [], `the local graph of ${slug} does not resolve`);
    local.set(slug, graph);
  }

  const work = await Deno.makeTempDir({ prefix: "pms-deploy-bundle-" });
  const record = join(work, "record");
  const home = join(work, "home");
  await Deno.mkdir(home);
  const [program, ...args] = isolation.start([
    DENO, "run", "--quiet", "--no-lock", "--allow-net=127.0.0.1", "--allow-read", `--allow-write=${record}`,
    join(ROOT, "local/management-api/main.ts"), "--port", "0", "--ref", REF, "--token", TOKEN, "--record", record,
  ]);
  const standIn = new Deno.Command(program!, { args, env: denoEnv, stdin: "null", stdout: "piped", stderr: "inherit" }).spawn();
  try {
    // Its first line is `listening <port>`; it prints nothing after.
    let started = "";
    const reader = standIn.stdout.pipeThrough(new TextDecoderStream()).getReader();
    while (!started.includes("\n")) {
      const { value, done } = await reader.read();
      if (done) break;
      started += value;
    }
    await reader.cancel();
    const port = Number(/^listening (\d+)$/m.exec(started)?.[1] ?? 0);
    assert.ok(port, `the stand-in did not start: ${started}`);
    const inside = (command: string[]) => isolation.enter(standIn.pid, command);

    // The CLI reaches the API named by its profile: a profile file names the stand-in.
    const profile = join(work, "profile.yaml");
    await Deno.writeTextFile(profile, [
      "name: pms-stand-in",
      `api_url: http://127.0.0.1:${port}`,
      `dashboard_url: http://127.0.0.1:${port}/dashboard`,
      "project_host: stand-in.test",
      "",
    ].join("\n"));

    let seen = 0;
    // One `supabase functions deploy`, with nothing of this shell's environment: its
    // output and the requests the stand-in got for it.
    const deploy = async (names: string[]): Promise<{ output: string; requests: Recorded[] }> => {
      const result = await run(inside([
        CLI, "functions", "deploy", ...names, "--use-api", `--remote=${REF}`, "--workdir", ROOT,
        "--profile", profile, "--agent", "no", "--yes",
      ]), {
        clearEnv: true,
        cwd: ROOT,
        env: {
          PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
          HOME: home,
          NO_COLOR: "1",
          SUPABASE_ACCESS_TOKEN: TOKEN,
          SUPABASE_TELEMETRY_DISABLED: "1",
          DO_NOT_TRACK: "1",
          SUPABASE_NO_UPDATE_NOTIFIER: "1",
          HTTPS_PROXY: DEAD_PROXY,
          HTTP_PROXY: DEAD_PROXY,
          NO_PROXY: "127.0.0.1",
        },
      });
      const output = `${result.stdout}${result.stderr}`;
      assert.equal(result.code, 0, `supabase functions deploy ${names.join(" ")} exited ${result.code}:\n${output}`);
      const log = (await Deno.readTextFile(join(record, "requests.jsonl")).catch(() => "")).split("\n").filter(Boolean);
      const requests = log.slice(seen).map((line) => JSON.parse(line) as Recorded);
      seen = log.length;
      return { output, requests };
    };

    // One upload: metadata, the exact file list and bytes, and the unpacked folder resolving alone.
    const checkUpload = async (slug: string, upload: Recorded) => {
      assert.equal(upload.status, 201, `the stand-in refused ${slug}: ${upload.error}`);
      assert.deepEqual(upload.metadata, {
        name: slug,
        entrypoint_path: entrypointOf(slug),
        import_map_path: IMPORT_MAP,
        static_patterns: DEPLOYED[slug]!.staticPatterns ?? [],
        verify_jwt: DEPLOYED[slug]!.verifyJwt,
      }, `the metadata of ${slug}`);
      const graph = local.get(slug)!;
      const uploaded = (upload.files ?? []).map((file) => file.name);
      assert.deepEqual(
        [...uploaded].sort(),
        [...graph.files, IMPORT_MAP, ...DEPLOYED[slug]!.staticFiles ?? []].sort(),
        `${slug}: the upload is its module graph, its import map and its static files`,
      );
      for (const file of upload.files ?? []) {
        assert.equal(file.sha256, sha256(await Deno.readFile(join(ROOT, file.name))), `${slug}: ${file.name} is uploaded as it is`);
      }
      const unpacked = await moduleGraph(upload.unpackedTo!, entrypointOf(slug), IMPORT_MAP, inside);
      assert.deepEqual(unpacked.errors, [], `${slug}: the unpacked upload does not resolve`);
      assert.deepEqual(unpacked.files, graph.files, `${slug}: the unpacked upload is the same graph`);
      assert.deepEqual(unpacked.external, graph.external, `${slug}: the unpacked upload imports the same npm and node modules`);
    };

    await t.step("every folder of supabase/functions is either deployed or kept out of a deploy", async () => {
      const folders: string[] = [];
      for await (const entry of Deno.readDir(join(ROOT, "supabase/functions"))) {
        if (entry.isDirectory && (await Deno.stat(join(ROOT, entrypointOf(entry.name))).catch(() => null))?.isFile) folders.push(entry.name);
      }
      assert.deepEqual(folders.sort(), [...slugs, ...TEST_ONLY].sort());
    });

    for (const slug of slugs) {
      await t.step(`${slug}: the upload is its module graph with ${IMPORT_MAP}, verify_jwt ${DEPLOYED[slug]!.verifyJwt}, and resolves unpacked alone`, async () => {
        const { output, requests } = await deploy([slug]);
        assert.deepEqual(warnings(output), [], `the deploy of ${slug} warned:\n${output}`);
        const calls = requests.filter((r) => !isProjectLookup(r));
        // verify_jwt comes from config.toml, so the CLI has no reason to read the remote list.
        assert.deepEqual(calls.map((r) => `${r.method} ${r.path} ${JSON.stringify(r.query)}`),
          [`POST /v1/projects/${REF}/functions/deploy {"slug":"${slug}"}`], `the calls for ${slug}`);
        await checkUpload(slug, calls[0]!);
      });
    }

    await t.step(`a plain deploy bundles ${slugs.join(" and ")}, makes them live in one bulk update and skips ${TEST_ONLY.join(", ")}`, async () => {
      const { output, requests } = await deploy([]);
      const skipped = TEST_ONLY.map((slug) => new RegExp(`^Skipping disabled Function: ${slug}$`));
      for (const line of skipped) assert.match(output, new RegExp(line.source, "m"));
      assert.deepEqual(warnings(output, skipped), [], `the plain deploy warned:\n${output}`);
      const calls = requests.filter((r) => !isProjectLookup(r));
      const uploads = calls.filter((r) => r.path.endsWith("/functions/deploy"));
      assert.deepEqual(uploads.map((r) => r.query).sort((a, b) => a.slug!.localeCompare(b.slug!)),
        [...slugs].sort().map((slug) => ({ slug, bundleOnly: "true" })), "one upload for each deployed function, none for the others");
      for (const upload of uploads) await checkUpload(upload.query.slug!, upload);
      const bulk = calls.filter((r) => !r.path.endsWith("/functions/deploy"));
      assert.deepEqual(bulk.map((r) => [r.method, r.path, r.status]), [["PUT", `/v1/projects/${REF}/functions`, 200]]);
      assert.deepEqual(bulk[0]!.body!.map((f) => f.slug).sort(), [...slugs].sort());
    });

    await t.step("the unpacked check fails an upload that lacks its import map", async () => {
      // The api's graph without deno.json, as a deploy with no import map uploads it.
      const bare = join(work, "without-import-map");
      for (const file of local.get("api")!.files) {
        await Deno.mkdir(join(bare, file, ".."), { recursive: true });
        await Deno.copyFile(join(ROOT, file), join(bare, file));
      }
      await Deno.writeTextFile(join(bare, "empty.json"), "{}");
      const unpacked = await moduleGraph(bare, entrypointOf("api"), "empty.json", inside);
      assert.ok(unpacked.errors.some((error) => /imports kysely\b/.test(error)), `expected kysely to be unresolved, got:\n${unpacked.errors.join("\n")}`);
    });
  } finally {
    standIn.kill("SIGTERM");
    await standIn.status;
    await Deno.remove(work, { recursive: true });
  }
});
