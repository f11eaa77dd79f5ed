// The local stand-in for Supabase's Edge Runtime, for one function: the router in front of
// it and the supervisor of its workers, holding the function to the hosted runtime's
// rules (docs/local-stack.md, The Edge Runtime's limits, says where each comes from).
//
// A worker is the function's entrypoint in a Deno process of its own, under the Deno
// release line the runtime implements (local/edge-runtime/worker.ts). Requests go to the
// one active worker, side by side, as the runtime's per_worker policy sends them; a
// worker is started when none is active. The supervisor reads each worker's CPU time
// (its JavaScript thread's, from /proc) and memory, and its age:
//   - CPU past the soft limit, memory past half its limit, or half the wall clock: the
//     worker is retired. It takes no new request (the next starts a new worker), answers
//     what it holds, and ends once it holds nothing ("EarlyDrop").
//   - CPU past the hard limit, memory past its limit, or the whole wall clock: the worker
//     is killed at once, and every request it still holds is answered 546 with the
//     runtime's body, or, when its answer had begun, cut off.
// A request a worker has not begun to answer within the idle timeout is answered 504.
// Each event is logged with the runtime's wording and the shutdown reason (CPUTime,
// Memory, WallClockTime, EarlyDrop). The CPU and memory a worker spends starting (Deno's
// own start and loading the modules) are not counted: the runtime starts a function from
// a prepared bundle in an isolate, at a small part of that cost.
//   main.ts --name <function> --port <port> --entrypoint <index.ts> --deno <path>
//           --deno-dir <its cache> --config <deno.json> [--cpu-soft-ms 1000] [--cpu-hard-ms 2000]
//           [--memory-mb 256] [--wall-clock-ms 150000] [--idle-timeout-ms 150000]
import { readFlags, requireFlag } from "../args.ts";

const flags = readFlags(Deno.args);
const name = requireFlag(flags, "name");
const limits = {
  cpuSoftMs: Number(flags.get("cpu-soft-ms") ?? 1000),
  cpuHardMs: Number(flags.get("cpu-hard-ms") ?? 2000),
  memoryMb: Number(flags.get("memory-mb") ?? 256),
  wallClockMs: Number(flags.get("wall-clock-ms") ?? 150_000),
  idleTimeoutMs: Number(flags.get("idle-timeout-ms") ?? 150_000),
};
const deno = requireFlag(flags, "deno");
const denoDir = requireFlag(flags, "deno-dir");
const config = requireFlag(flags, "config");
const entrypoint = new URL(requireFlag(flags, "entrypoint"), `file://${Deno.cwd()}/`).href;
const workerScript = new URL("./worker.ts", import.meta.url).pathname;

type Reason = "CPUTime" | "Memory" | "WallClockTime" | "EarlyDrop" | "Crash";

type Worker = {
  id: string;
  process: Deno.ChildProcess;
  port: number;
  ready: Promise<boolean>;
  retired: boolean;
  ended: Reason | null;
  inFlight: number;
  // At activation: what starting (and waiting as the standby) cost, which is not the
  // function's to count.
  cpuBaseNs: number;
  rssBaseKb: number;
  activatedAt: number;
  // The requests it holds, aborted when it is killed.
  requests: Set<AbortController>;
  // The memory it used when last looked at, in MB.
  memoryMb: number;
};

const log = (level: string, msg: string, fields: Record<string, unknown> = {}) =>
  console.log(JSON.stringify({ level, msg, function: name, ...fields, time: new Date().toISOString() }));

// The runtime's answers when a worker cannot answer, as the hosted platform gives them.
function errorResponse(status: number, code: string, message: string): Response {
  return new Response(JSON.stringify({ code, message }), {
    status,
    headers: { "content-type": "application/json", "sb-error-code": code },
  });
}
const workerLimit = () =>
  errorResponse(546, "WORKER_LIMIT", "Function failed due to not having enough compute resources (please check logs)");
const workerError = () => errorResponse(500, "WORKER_ERROR", "Function exited due to an error (please check logs)");
const bootError = () => errorResponse(503, "BOOT_ERROR", "Worker failed to boot (please check logs)");
const idleTimeout = () => errorResponse(504, "IDLE_TIMEOUT", "Function did not respond within the request idle timeout");

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}

// The JavaScript thread's time on a CPU, in nanoseconds (its schedstat's first field).
function cpuNs(pid: number): number | null {
  try {
    return Number(Deno.readTextFileSync(`/proc/${pid}/task/${pid}/schedstat`).split(" ")[0]);
  } catch {
    return null;
  }
}

function rssKb(pid: number): number | null {
  try {
    const match = /^VmRSS:\s+(\d+) kB$/m.exec(Deno.readTextFileSync(`/proc/${pid}/status`));
    return match ? Number(match[1]) : null;
  } catch {
    return null;
  }
}

// What the workers did since the runtime started or was last asked to forget: requests
// answered, workers retired and ended by reason, and the CPU time the function's requests
// took (a worker's JavaScript thread's while the request was in flight; requests side by
// side each count the time they shared).
const stats = {
  requests: 0,
  retired: 0,
  ended: { CPUTime: 0, Memory: 0, WallClockTime: 0, EarlyDrop: 0, Crash: 0 } as Record<Reason, number>,
  requestCpuMs: 0,
  worstRequestCpuMs: 0,
};

let active: Worker | null = null;
// A worker booted ahead, promoted when the active one retires: a Deno process takes far
// longer to start than the runtime takes to start an isolate from a bundle, and without
// it every retirement would hold the next requests for a second or more. It boots once the
// active worker has served a while, not at the promotion: starting a process costs CPU the
// runtime's isolates do not spend, and at a promotion it would be taken from the new
// worker's first requests, which run before V8 has optimized anything.
let standby: Worker | null = null;
const STANDBY_AFTER_MS = 1_000;
const workers = new Set<Worker>();

function start(): Worker {
  const port = freePort();
  const id = crypto.randomUUID();
  const process = new Deno.Command(deno, {
    args: [
      "run", "--quiet", "--no-prompt", "--config", config, "--allow-net", "--allow-env", "--allow-read",
      "--allow-write=/tmp", "--allow-sys=hostname", `--v8-flags=--max-old-space-size=${limits.memoryMb}`, workerScript,
    ],
    env: { EDGE_WORKER_PORT: String(port), EDGE_WORKER_ENTRYPOINT: entrypoint, DENO_DIR: denoDir, NO_COLOR: "1" },
    stdin: "null",
    stdout: "inherit",
    stderr: "inherit",
  }).spawn();
  const worker: Worker = {
    id, process, port, retired: false, ended: null, inFlight: 0, cpuBaseNs: 0, rssBaseKb: 0, activatedAt: 0,
    requests: new Set(), ready: Promise.resolve(false), memoryMb: 0,
  };
  workers.add(worker);
  worker.ready = booted(worker);
  process.status.then((status) => {
    workers.delete(worker);
    if (active === worker) active = null;
    if (standby === worker) standby = null;
    if (worker.ended === null) {
      // V8 ends the process when its heap passes the limit (--max-old-space-size), between
      // two looks of the supervisor: that is the memory limit too.
      const memory = worker.memoryMb >= limits.memoryMb / 2 && status.signal !== null;
      worker.ended = memory ? "Memory" : "Crash";
      log("error", memory ? `memory limit reached for the worker: isolate: ${id}` : `worker exited: isolate: ${id}`, {
        reason: worker.ended, code: status.code, signal: status.signal,
      });
    }
    for (const request of worker.requests) request.abort();
  });
  log("info", `booting worker: isolate: ${id}`);
  return worker;
}

// Ready once its server takes a connection; not when the process ends first.
async function booted(worker: Worker): Promise<boolean> {
  const deadline = Date.now() + 60_000;
  while (worker.ended === null && Date.now() < deadline) {
    try {
      const connection = await Deno.connect({ hostname: "127.0.0.1", port: worker.port });
      connection.close();
      log("info", `worker ready: isolate: ${worker.id}`, { bootCpuMs: Math.round((cpuNs(worker.process.pid) ?? 0) / 1e6) });
      return true;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
  if (worker.ended === null) end(worker, "Crash", "worker did not boot in time");
  return false;
}

// Killed: what it holds is cancelled (546, or cut off).
function end(worker: Worker, reason: Reason, message: string) {
  if (worker.ended !== null) return;
  worker.ended = reason;
  stats.ended[reason]++;
  if (active === worker) active = null;
  log(reason === "EarlyDrop" ? "info" : "error", message, {
    reason, cpuTimeMs: Math.round(((cpuNs(worker.process.pid) ?? worker.cpuBaseNs) - worker.cpuBaseNs) / 1e6),
    memoryMb: Math.round(((rssKb(worker.process.pid) ?? worker.rssBaseKb) - worker.rssBaseKb) / 1024),
    inFlight: worker.inFlight,
  });
  try {
    worker.process.kill("SIGKILL");
  } catch {
    // already gone
  }
  for (const request of worker.requests) request.abort();
}

function retire(worker: Worker, message: string) {
  if (worker.retired || worker.ended !== null) return;
  worker.retired = true;
  stats.retired++;
  if (active === worker) active = null;
  log("error", message, { reason: "retired", inFlight: worker.inFlight });
  dropIfIdle(worker);
}

function dropIfIdle(worker: Worker) {
  if (worker.retired && worker.inFlight === 0) end(worker, "EarlyDrop", `early termination has been triggered: isolate: ${worker.id}`);
}

function supervise() {
  for (const worker of workers) {
    if (worker.ended !== null || worker.activatedAt === 0) continue;
    const pid = worker.process.pid;
    const cpuMs = ((cpuNs(pid) ?? worker.cpuBaseNs) - worker.cpuBaseNs) / 1e6;
    const memoryMb = ((rssKb(pid) ?? worker.rssBaseKb) - worker.rssBaseKb) / 1024;
    worker.memoryMb = memoryMb;
    const ageMs = performance.now() - worker.activatedAt;
    if (cpuMs >= limits.cpuHardMs) {
      end(worker, "CPUTime", `CPU time hard limit reached: isolate: ${worker.id}`);
    } else if (memoryMb >= limits.memoryMb) {
      end(worker, "Memory", `memory limit reached for the worker: isolate: ${worker.id}`);
    } else if (ageMs >= limits.wallClockMs) {
      end(worker, "WallClockTime", `wall clock duration reached: isolate: ${worker.id} (in_flight_req_exists = ${worker.inFlight > 0})`);
    } else if (cpuMs >= limits.cpuSoftMs) {
      retire(worker, `CPU time soft limit reached: isolate: ${worker.id}`);
    } else if (memoryMb >= limits.memoryMb / 2) {
      retire(worker, `memory usage reached half the limit: isolate: ${worker.id}`);
    } else if (ageMs >= limits.wallClockMs / 2) {
      retire(worker, `wall clock duration warning: isolate: ${worker.id}`);
    }
  }
  if (active !== null && active.activatedAt > 0 && standby === null &&
      performance.now() - active.activatedAt >= STANDBY_AFTER_MS) {
    standby = start();
  }
}
setInterval(supervise, 10);

// Makes the standby the active worker, counting from now (a new one when none is ready);
// the next standby boots a while later (supervise).
function promote(): Worker {
  const worker = standby ?? start();
  standby = null;
  return worker;
}

// What a worker has used is counted from when it became active.
async function activate(worker: Worker): Promise<boolean> {
  if (!await worker.ready) return false;
  if (worker.activatedAt === 0) {
    worker.cpuBaseNs = cpuNs(worker.process.pid) ?? worker.cpuBaseNs;
    worker.rssBaseKb = rssKb(worker.process.pid) ?? worker.rssBaseKb;
    worker.activatedAt = performance.now();
  }
  return true;
}

// The worker to give a request to: the active one, or a new one.
async function workerFor(): Promise<Worker | null> {
  for (let tries = 0; tries < 3; tries++) {
    const worker = active ?? (active = promote());
    if (!await activate(worker)) {
      if (worker.ended === "Crash") return null;
      continue;
    }
    if (!worker.retired && worker.ended === null) return worker;
  }
  return null;
}

// The response's body, passed on as it comes; the worker holds the request until the body
// has ended, failed, or been given up by the client.
function releasedWhenDone(body: ReadableStream<Uint8Array> | null, release: () => void): ReadableStream<Uint8Array> | null {
  if (body === null) {
    release();
    return null;
  }
  let released = false;
  const once = () => {
    if (!released) {
      released = true;
      release();
    }
  };
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          once();
          controller.close();
        } else {
          controller.enqueue(value);
        }
      } catch (error) {
        once();
        controller.error(error);
      }
    },
    cancel(reason) {
      once();
      return reader.cancel(reason);
    },
  });
}

// The methods the platform passes to a function; any other it refuses itself.
const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];

// The runtime's own routes, on its loopback port only (the gateway reaches a function as
// /<name>/...): the workers as they stand, and limits a test may lower for a while.
//   GET  /_edge-runtime/workers   [{id, pid, state, inFlight, cpuTimeMs, memoryMb}]
//   GET  /_edge-runtime/limits    the limits: {cpuSoftMs, cpuHardMs, memoryMb, wallClockMs, idleTimeoutMs}
//   PUT  /_edge-runtime/limits    any of them changed: the limits after
//   GET  /_edge-runtime/stats     what the workers did (stats above); DELETE forgets it
async function control(request: Request, path: string): Promise<Response> {
  if (path === "/_edge-runtime/stats" && request.method === "GET") return Response.json(stats);
  if (path === "/_edge-runtime/stats" && request.method === "DELETE") {
    Object.assign(stats, { requests: 0, retired: 0, requestCpuMs: 0, worstRequestCpuMs: 0 });
    for (const reason of Object.keys(stats.ended) as Reason[]) stats.ended[reason] = 0;
    return new Response(null, { status: 204 });
  }
  if (path === "/_edge-runtime/workers" && request.method === "GET") {
    return Response.json([...workers].map((worker) => ({
      id: worker.id,
      pid: worker.process.pid,
      state: worker.ended ?? (worker === active ? "active" : worker === standby ? "standby" : worker.retired ? "retired" : "booting"),
      inFlight: worker.inFlight,
      cpuTimeMs: worker.activatedAt === 0 ? 0 : Math.round(((cpuNs(worker.process.pid) ?? worker.cpuBaseNs) - worker.cpuBaseNs) / 1e6),
      memoryMb: Math.round(worker.memoryMb),
    })));
  }
  if (path === "/_edge-runtime/limits" && request.method === "GET") return Response.json(limits);
  if (path === "/_edge-runtime/limits" && request.method === "PUT") {
    const changes = await request.json().catch(() => null) as Partial<typeof limits> | null;
    for (const [name, value] of Object.entries(changes ?? {})) {
      if (name in limits && typeof value === "number" && value > 0) limits[name as keyof typeof limits] = value;
    }
    log("info", "limits changed", { limits });
    return Response.json(limits);
  }
  return new Response("not found", { status: 404 });
}

async function handle(request: Request): Promise<Response> {
  const path = new URL(request.url).pathname;
  if (path.startsWith("/_edge-runtime/")) return await control(request, path);
  if (!METHODS.includes(request.method)) {
    return new Response(JSON.stringify({ code: "METHOD_NOT_ALLOWED", message: `Edge Functions only support ${METHODS.join(", ")}` }), {
      status: 405,
      headers: { "content-type": "application/json", allow: METHODS.join(", ") },
    });
  }
  const worker = await workerFor();
  if (worker === null) return bootError();
  const url = new URL(request.url);
  const controller = new AbortController();
  worker.inFlight++;
  worker.requests.add(controller);
  const cpuAtStart = cpuNs(worker.process.pid);
  const release = () => {
    const cpuAtEnd = cpuNs(worker.process.pid);
    if (cpuAtStart !== null && cpuAtEnd !== null) {
      const cpuMs = (cpuAtEnd - cpuAtStart) / 1e6;
      stats.requestCpuMs += cpuMs;
      stats.worstRequestCpuMs = Math.max(stats.worstRequestCpuMs, cpuMs);
    }
    stats.requests++;
    worker.requests.delete(controller);
    worker.inFlight--;
    dropIfIdle(worker);
  };
  const idle = setTimeout(() => controller.abort("idle"), limits.idleTimeoutMs);
  // The worker answers uncompressed, and the router compresses for the client as the
  // worker's own server would have: fetch asks for compression unless told otherwise, and
  // undoes it while passing the worker's Content-Encoding on.
  const headers = new Headers(request.headers);
  headers.set("accept-encoding", "identity");
  let upstream: Response;
  try {
    upstream = await fetch(`http://127.0.0.1:${worker.port}${url.pathname}${url.search}`, {
      method: request.method,
      headers,
      body: request.body,
      redirect: "manual",
      signal: controller.signal,
    });
  } catch {
    clearTimeout(idle);
    release();
    if (controller.signal.reason === "idle") return idleTimeout();
    return worker.ended === "Crash" ? workerError() : workerLimit();
  }
  clearTimeout(idle);
  // A client that takes compression may get it from the router's server, which then frames
  // the body itself; to any other the worker's length is passed on.
  const answer = new Headers(upstream.headers);
  if (/\b(gzip|br)\b/i.test(request.headers.get("accept-encoding") ?? "")) answer.delete("content-length");
  return new Response(releasedWhenDone(upstream.body, release), { status: upstream.status, headers: answer });
}

const port = Number(requireFlag(flags, "port"));
Deno.serve({ hostname: "127.0.0.1", port, onListen: () => log("info", `serving ${name} on 127.0.0.1:${port}`, { limits }) }, handle);
// A worker from the start, as a function that was just deployed has one once called.
active = promote();

for (const signal of ["SIGTERM", "SIGINT"] as const) {
  Deno.addSignalListener(signal, () => {
    for (const worker of workers) end(worker, "EarlyDrop", `runtime shutting down: isolate: ${worker.id}`);
    Deno.exit(0);
  });
}
