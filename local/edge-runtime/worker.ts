// One worker of the local Edge Runtime (local/edge-runtime/main.ts): a function's entrypoint
// run under the Deno release line the hosted runtime implements, with the Deno namespace
// as the runtime hands it to a function. Deno.serve answers where the runtime says, on the
// port the supervisor gave, whatever the function asks for (the runtime serves every
// function behind its own router); and spawning a process throws as it does there.
//   EDGE_WORKER_PORT        the loopback port to serve on
//   EDGE_WORKER_ENTRYPOINT  the function's index.ts, as a file URL
const port = Number(Deno.env.get("EDGE_WORKER_PORT"));
const entrypoint = Deno.env.get("EDGE_WORKER_ENTRYPOINT");
if (!Number.isInteger(port) || port <= 0 || !entrypoint) throw new Error("EDGE_WORKER_PORT and EDGE_WORKER_ENTRYPOINT are required");
Deno.env.delete("EDGE_WORKER_PORT");
Deno.env.delete("EDGE_WORKER_ENTRYPOINT");

type Handler = Deno.ServeHandler;

// The request's body is read whole before the function gets it (up to a bound past any
// function's own limit): the runtime hands a function its request over a channel of its
// own, where an early answer (a 413) reaches the client whatever is left unread, while a
// socket closed with bytes unread is reset under the router before it reads the answer.
const BUFFERED_AT_MOST = 64 * 1024 * 1024;
async function buffered(request: Request): Promise<Request> {
  const declared = Number(request.headers.get("content-length") ?? NaN);
  if (request.body === null || !(declared <= BUFFERED_AT_MOST)) return request;
  return new Request(request, { body: await request.arrayBuffer() });
}

const serve = Deno.serve;
const served = (...args: unknown[]) => {
  const handler = args.find((arg) => typeof arg === "function") as Handler | undefined ??
    (args.find((arg) => typeof arg === "object" && arg !== null && "handler" in arg) as { handler: Handler } | undefined)?.handler;
  if (!handler) throw new TypeError("Deno.serve needs a handler");
  return serve({ hostname: "127.0.0.1", port, onListen: () => {} }, async (request, info) => await handler(await buffered(request), info));
};
Object.defineProperty(Deno, "serve", { value: served, writable: true, configurable: true });

const notAllowed = () => {
  throw new Error("Spawning subprocesses is not allowed on Supabase Edge Runtime.");
};
class Command {
  output = notAllowed;
  outputSync = notAllowed;
  spawn = notAllowed;
}
Object.defineProperty(Deno, "Command", { value: Command, writable: true, configurable: true });

await import(entrypoint);

export {};
