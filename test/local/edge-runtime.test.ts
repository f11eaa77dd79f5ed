// The local Edge Runtime (local/edge-runtime) holds a function to the hosted runtime's
// limits as the runtime does: a fixture function (fixtures/limits-function.ts) spends CPU,
// memory, wall clock and the request's idle time past small limits, and each test watches
// the answer the client gets and the line the runtime logs. docs/local-stack.md says where
// each rule comes from.
import assert from "node:assert/strict";
import { freePort } from "../support/auth-process.ts";

const root = new URL("../../", import.meta.url);
const path = (relative: string) => new URL(relative, root).pathname;
const EDGE_DENO = path(`node_modules/deno-edge-runtime-linux-${Deno.build.arch === "aarch64" ? "arm64" : "x64"}/deno`);

type Limits = { cpuSoftMs: number; cpuHardMs: number; memoryMb: number; wallClockMs: number; idleTimeoutMs: number };
const SMALL: Limits = { cpuSoftMs: 300, cpuHardMs: 600, memoryMb: 64, wallClockMs: 60_000, idleTimeoutMs: 30_000 };

type Runtime = {
  url: string;
  logs: () => Record<string, unknown>[];
  waitForLog: (pattern: RegExp, timeoutMs?: number) => Promise<Record<string, unknown>>;
  [Symbol.asyncDispose]: () => Promise<void>;
};

async function startRuntime(limits: Partial<Limits> = {}): Promise<Runtime> {
  const chosen = { ...SMALL, ...limits };
  const port = freePort();
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run", "--quiet", "--allow-all", path("local/edge-runtime/main.ts"), "--name", "limits", "--port", String(port),
      "--entrypoint", path("test/local/fixtures/limits-function.ts"), "--deno", EDGE_DENO,
      "--deno-dir", path(".stack/deno-edge"), "--config", path("supabase/functions/deno.json"),
      "--cpu-soft-ms", String(chosen.cpuSoftMs), "--cpu-hard-ms", String(chosen.cpuHardMs),
      "--memory-mb", String(chosen.memoryMb), "--wall-clock-ms", String(chosen.wallClockMs),
      "--idle-timeout-ms", String(chosen.idleTimeoutMs),
    ],
    stdin: "null",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const lines: Record<string, unknown>[] = [];
  const reading = (async () => {
    let partial = "";
    for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
      partial += chunk;
      const complete = partial.split("\n");
      partial = complete.pop()!;
      for (const line of complete) {
        try {
          lines.push(JSON.parse(line));
        } catch {
          // a line of the function's own
        }
      }
    }
  })();
  const waitForLog = async (pattern: RegExp, timeoutMs = 10_000) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = lines.find((line) => pattern.test(String(line.msg)));
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`no log line matches ${pattern}: ${JSON.stringify(lines)}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  const url = `http://127.0.0.1:${port}`;
  await waitForLog(/^worker ready/, 60_000);
  return {
    url,
    logs: () => lines,
    waitForLog,
    [Symbol.asyncDispose]: async () => {
      child.kill("SIGTERM");
      await child.status;
      await reading;
    },
  };
}

async function get(runtime: Runtime, route: string): Promise<{ status: number; body: Record<string, unknown>; headers: Headers }> {
  const response = await fetch(`${runtime.url}${route}`);
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : {}, headers: response.headers };
}

Deno.test("workers run under the Deno release the hosted runtime implements, and may not spawn programs", async () => {
  await using runtime = await startRuntime();
  const whoami = await get(runtime, "/whoami");
  assert.equal(whoami.body.deno, "2.1.4");
  const spawn = await get(runtime, "/spawn");
  assert.deepEqual(spawn.body, { spawned: false, error: "Spawning subprocesses is not allowed on Supabase Edge Runtime." });
});

Deno.test("past the CPU soft limit the worker answers what it holds, takes nothing new, and ends (EarlyDrop); the next request gets a new worker", async () => {
  await using runtime = await startRuntime();
  const first = await get(runtime, "/burn?ms=200");
  const second = await get(runtime, "/burn?ms=200");
  assert.deepEqual([first.status, second.status], [200, 200], "the request that crossed the soft limit is answered");
  assert.equal(first.body.pid, second.body.pid);
  const retired = await runtime.waitForLog(/^CPU time soft limit reached: isolate: /);
  const dropped = await runtime.waitForLog(/^early termination has been triggered: isolate: /);
  assert.equal(dropped.reason, "EarlyDrop");
  assert.equal(String(dropped.msg).split(": ").pop(), String(retired.msg).split(": ").pop(), "the same worker");
  const third = await get(runtime, "/whoami");
  assert.equal(third.status, 200);
  assert.notEqual(third.body.pid, first.body.pid, "a new worker");
});

Deno.test("past the CPU hard limit the worker is killed: the request it held is answered 546 WORKER_LIMIT, and the log says CPUTime", async () => {
  await using runtime = await startRuntime();
  const killed = await get(runtime, "/burn?ms=2000");
  assert.equal(killed.status, 546);
  assert.deepEqual(killed.body, {
    code: "WORKER_LIMIT",
    message: "Function failed due to not having enough compute resources (please check logs)",
  });
  assert.equal(killed.headers.get("sb-error-code"), "WORKER_LIMIT");
  const line = await runtime.waitForLog(/^CPU time hard limit reached: isolate: /);
  assert.equal(line.reason, "CPUTime");
  assert.ok(Number(line.cpuTimeMs) >= 600 && Number(line.cpuTimeMs) < 1500, `killed soon after the limit: ${line.cpuTimeMs} ms`);
  assert.equal((await get(runtime, "/whoami")).status, 200, "the next request is served by a new worker");
});

Deno.test("past the memory limit the worker is killed (546, Memory); past half of it, retired", async () => {
  await using runtime = await startRuntime();
  const half = await get(runtime, "/hold?mb=40&ms=200");
  assert.equal(half.status, 200);
  await runtime.waitForLog(/^memory usage reached half the limit: isolate: /);
  await runtime.waitForLog(/^early termination has been triggered: isolate: /);
  const killed = await get(runtime, "/hold?mb=100&ms=2000");
  assert.equal(killed.status, 546);
  const line = await runtime.waitForLog(/^memory limit reached for the worker: isolate: /);
  assert.equal(line.reason, "Memory");
});

Deno.test("the wall clock: retired at half of it, killed at the whole with the requests it holds answered 546", async () => {
  await using runtime = await startRuntime({ wallClockMs: 3000 });
  const started = Date.now();
  const held = get(runtime, "/wait?ms=10000");
  await runtime.waitForLog(/^wall clock duration warning: isolate: /, 5000);
  const answer = await held;
  assert.equal(answer.status, 546);
  const line = await runtime.waitForLog(/^wall clock duration reached: isolate: .* \(in_flight_req_exists = true\)$/);
  assert.equal(line.reason, "WallClockTime");
  assert.ok(Date.now() - started < 6000, "killed at the wall clock, not when the function would have answered");
});

Deno.test("a request the worker does not begin to answer within the idle timeout is answered 504 IDLE_TIMEOUT", async () => {
  await using runtime = await startRuntime({ idleTimeoutMs: 500 });
  const answer = await get(runtime, "/wait?ms=3000");
  assert.equal(answer.status, 504);
  assert.equal(answer.body.code, "IDLE_TIMEOUT");
  assert.equal(answer.headers.get("sb-error-code"), "IDLE_TIMEOUT");
});

Deno.test("methods the platform does not pass to a function are its own 405", async () => {
  await using runtime = await startRuntime();
  const connection = await Deno.connect({ hostname: "127.0.0.1", port: Number(new URL(runtime.url).port) });
  await connection.write(new TextEncoder().encode("TRACE /whoami HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
  const text = new TextDecoder().decode(await new Response(connection.readable).arrayBuffer());
  assert.match(text, /^HTTP\/1\.1 405 /);
  assert.match(text, /\r\nallow: GET, POST, PUT, PATCH, DELETE, OPTIONS\r\n/i);
});
