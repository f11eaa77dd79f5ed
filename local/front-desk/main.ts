// Serves the front-desk example (examples/front-desk), as built by
// scripts/front-desk-build.sh into its dist/ folder, on an origin of its own: a static
// site, the way a real front-desk app would be hosted apart from the project.
//   GET /             index.html
//   GET /app.js       the bundle
//   GET /style.css
//   GET /config.json  where the app finds the project: {supabaseUrl, anonKey}
// Run with --port and --dir (the built folder). Only these files are served, each read
// when asked for, so a rebuild shows at the next load; anything else is a 404.
//
// The Content-Security-Policy lets the page load its own files only and connect only to
// itself and the project URL config.json names: whatever the page does, it cannot reach
// anywhere else.
import { readFlags, requireFlag } from "../args.ts";

const flags = readFlags(Deno.args);
const port = Number(requireFlag(flags, "port"));
const dir = requireFlag(flags, "dir").replace(/\/+$/, "");

const files: Record<string, { file: string; type: string }> = {
  "/": { file: "index.html", type: "text/html; charset=utf-8" },
  "/index.html": { file: "index.html", type: "text/html; charset=utf-8" },
  "/app.js": { file: "app.js", type: "text/javascript; charset=utf-8" },
  "/style.css": { file: "style.css", type: "text/css; charset=utf-8" },
  "/config.json": { file: "config.json", type: "application/json" },
};

// The origin of the project URL the built config names, for connect-src.
async function projectOrigin(): Promise<string> {
  const config = JSON.parse(await Deno.readTextFile(`${dir}/config.json`)) as { supabaseUrl?: unknown };
  if (typeof config.supabaseUrl !== "string") throw new Error(`${dir}/config.json names no supabaseUrl`);
  return new URL(config.supabaseUrl).origin;
}

function plain(status: number, text: string, headers: Record<string, string> = {}): Response {
  return new Response(`${text}\n`, { status, headers: { "content-type": "text/plain; charset=utf-8", ...headers } });
}

async function serve(request: Request): Promise<Response> {
  const served = files[new URL(request.url).pathname];
  if (!served) return plain(404, "not found");
  if (request.method !== "GET" && request.method !== "HEAD") return plain(405, "GET or HEAD", { allow: "GET, HEAD" });
  let body: Uint8Array<ArrayBuffer>;
  try {
    body = await Deno.readFile(`${dir}/${served.file}`);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return plain(404, `${served.file} is not built: run scripts/front-desk-build.sh`);
    throw error;
  }
  return new Response(request.method === "HEAD" ? null : body, {
    headers: {
      "content-type": served.type,
      // A rebuild (another stack, another project) must show at the next load.
      "cache-control": "no-store",
      "content-security-policy": `default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; ` +
        `connect-src 'self' ${await projectOrigin()}; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
      "x-content-type-options": "nosniff",
      "referrer-policy": "no-referrer",
    },
  });
}

Deno.serve({ hostname: "127.0.0.1", port, onListen: () => {} }, async (request) => {
  try {
    return await serve(request);
  } catch (error) {
    console.error(`${request.method} ${new URL(request.url).pathname}: ${error instanceof Error ? error.message : error}`);
    return plain(500, "the front desk's files could not be read");
  }
});
