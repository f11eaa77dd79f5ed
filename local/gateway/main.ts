// The local stand-in for a Supabase project's URL: /auth/v1/* reaches Supabase
// Auth and /functions/v1/<name>/* reaches that function's Deno process, with the
// path the hosted platform gives a function (/<name>/...).
import { readFlags, requireFlag } from "../args.ts";

const flags = readFlags(Deno.args);
const port = Number(requireFlag(flags, "port"));
const authUpstream = new URL(requireFlag(flags, "auth"));
const functionPorts = new Map(
  requireFlag(flags, "functions").split(",").filter(Boolean).map((pair) => {
    const [name, functionPort] = pair.split("=");
    return [name, Number(functionPort)] as const;
  }),
);

function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
}

async function forward(request: Request, target: URL, unreachable: string): Promise<Response> {
  const headers = new Headers(request.headers);
  headers.delete("host");
  try {
    const upstream = await fetch(target, {
      method: request.method,
      headers,
      body: request.body,
      redirect: "manual",
    });
    return new Response(upstream.body, { status: upstream.status, headers: upstream.headers });
  } catch {
    return json(502, { message: unreachable });
  }
}

Deno.serve({ hostname: "127.0.0.1", port, onListen: () => {} }, (request) => {
  const url = new URL(request.url);
  if (url.pathname === "/_gateway/health") return json(200, { status: "ok" });

  if (url.pathname === "/auth/v1" || url.pathname.startsWith("/auth/v1/")) {
    const target = new URL(url.pathname.slice("/auth/v1".length) + url.search, authUpstream);
    return forward(request, target, "Supabase Auth is not reachable");
  }

  const functionMatch = /^\/functions\/v1\/([^/]+)(\/.*)?$/.exec(url.pathname);
  if (functionMatch) {
    const [, name, rest = ""] = functionMatch;
    const functionPort = functionPorts.get(name);
    if (functionPort === undefined) return json(404, { message: `Function not found: ${name}` });
    const target = new URL(`http://127.0.0.1:${functionPort}/${name}${rest}${url.search}`);
    return forward(request, target, `Function ${name} is not reachable`);
  }

  return json(404, { message: "no route matched with those values" });
});
