// A function the bench starts itself, from this tree or from an earlier revision's work
// tree, on a port of its own (scripts/ports.sh: base + 18 to + 20), with only the settings
// it is given: so that two instances differ in what the bench means them to, and nothing
// else. Loaded there without the gateway and without the local Edge Runtime's limits.

// An earlier revision's work tree (`npm run bench -- --before REV`).
export type Before = { revision: string; root: URL };

export type Instance = { label: string; origin: string; process: Deno.ChildProcess };

const ROOT = new URL("../", import.meta.url);

export function benchPort(offset: 0 | 1 | 2): number {
  const port = Number(Deno.env.get("BENCH_FIRST_PORT"));
  if (!Number.isInteger(port) || port <= 0) throw new Error("BENCH_FIRST_PORT must be set: scripts/bench.sh takes it from scripts/ports.sh");
  return port + offset;
}

// Starts supabase/functions/<name>/index.ts of the tree at `root` (this one by default)
// with its own deno.json, PATH, HOME and DENO_DIR, and `env`.
export function startFunction(
  options: { label: string; name: string; port: number; env: Record<string, string>; root?: URL },
): Instance {
  const root = options.root ?? ROOT;
  const process = new Deno.Command(Deno.execPath(), {
    args: [
      "run", "--quiet", "--allow-net", "--allow-env", "--allow-read", "--allow-sys",
      "--config", new URL("deno.json", root).pathname,
      new URL(`supabase/functions/${options.name}/index.ts`, root).pathname,
    ],
    clearEnv: true,
    env: {
      PATH: Deno.env.get("PATH") ?? "",
      HOME: Deno.env.get("HOME") ?? "",
      DENO_DIR: Deno.env.get("DENO_DIR") ?? "",
      NO_COLOR: "1",
      DENO_SERVE_ADDRESS: `tcp:127.0.0.1:${options.port}`,
      ...options.env,
    },
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  return { label: options.label, origin: `http://127.0.0.1:${options.port}`, process };
}

// Waits until GET `path` on the instance answers `status`.
export async function untilServing(instance: Instance, path: string, status: number): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const answered = await fetch(`${instance.origin}${path}`).then(
      async (response) => (await response.body?.cancel(), response.status),
      () => 0,
    );
    if (answered === status) return;
    if (Date.now() > deadline) throw new Error(`the ${instance.label} instance did not answer on ${instance.origin}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

export async function stopAll(instances: Instance[]): Promise<void> {
  for (const instance of instances) {
    try {
      instance.process.kill("SIGTERM");
    } catch {
      // It had ended already.
    }
    await instance.process.status;
  }
}
