// A loopback double of the Supabase Management API's Edge Functions routes, answering
// them as the hosted API does for `supabase functions deploy --use-api` (the routes
// and shapes the pinned CLI's operation definitions name; docs/deploy.md).
//   GET  /v1/projects/{ref}/functions          the project's functions
//   POST /v1/projects/{ref}/functions/deploy   ?slug=S[&bundleOnly=true], multipart/form-data with
//                                              one `metadata` part (JSON: name, entrypoint_path,
//                                              import_map_path, static_patterns, verify_jwt) and the
//                                              source as `file` parts named by their relative paths;
//                                              201 and the function. With bundleOnly the new version
//                                              waits for the bulk update.
//   PUT  /v1/projects/{ref}/functions          bulk update: the listed bundles go live; 200 {functions}
// Every request needs `Authorization: Bearer <token>`, else 401; another project ref is 404;
// any other route is 404. Each request is appended to <record>/requests.jsonl, and each
// upload is unpacked as sent into <record>/uploads/<n>-<slug>/ (n counts uploads from 1).
//   main.ts --port N (0: any free port) --ref <20 letters> --token sbp_<40 hex> --record DIR
// It prints `listening <port>` once it serves.
import { createHash } from "node:crypto";
import { join } from "node:path";
import { readFlags, requireFlag } from "../args.ts";
import { isRecord, json } from "../capture.ts";

export const REF_PATTERN = /^[a-z]{20}$/;
export const TOKEN_PATTERN = /^sbp_[a-f0-9]{40}$/;
const SLUG_PATTERN = /^[A-Za-z][A-Za-z0-9_-]*$/;

type Status = "ACTIVE" | "REMOVED" | "THROTTLED";

export type FunctionResponse = {
  id: string;
  slug: string;
  name: string;
  status: Status;
  version: number;
  created_at: number;
  updated_at: number;
  verify_jwt: boolean;
  import_map: boolean;
  entrypoint_path: string;
  import_map_path?: string;
};

export type DeployMetadata = {
  name?: string;
  entrypoint_path: string;
  import_map_path?: string;
  static_patterns?: string[];
  verify_jwt?: boolean;
};

export type UploadedFile = { name: string; bytes: number; sha256: string };

export type RecordedRequest = {
  method: string;
  path: string;
  query: Record<string, string>;
  status: number;
  // The deploy route's parts, as received.
  metadata?: unknown;
  parts?: string[];
  files?: UploadedFile[];
  unpackedTo?: string;
  // The bulk update's JSON body.
  body?: unknown;
  error?: string;
};

// A relative path with forward slashes that stays inside the folder it is unpacked into.
function isSafeRelativePath(name: string): boolean {
  if (name.length === 0 || name.startsWith("/") || name.includes("\\") || /^[A-Za-z]:/.test(name)) return false;
  return name.split("/").every((segment) => segment !== "" && segment !== "." && segment !== "..");
}

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

function parseMetadata(value: unknown): DeployMetadata | string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(String(value));
  } catch {
    return "metadata must be JSON";
  }
  if (!isRecord(parsed)) return "metadata must be an object";
  if (typeof parsed.entrypoint_path !== "string" || parsed.entrypoint_path === "") {
    return "metadata.entrypoint_path is required";
  }
  for (const field of ["name", "import_map_path"] as const) {
    if (parsed[field] !== undefined && typeof parsed[field] !== "string") return `metadata.${field} must be a string`;
  }
  if (parsed.verify_jwt !== undefined && typeof parsed.verify_jwt !== "boolean") {
    return "metadata.verify_jwt must be a boolean";
  }
  if (parsed.static_patterns !== undefined &&
      !(Array.isArray(parsed.static_patterns) && parsed.static_patterns.every((p) => typeof p === "string"))) {
    return "metadata.static_patterns must be a list of strings";
  }
  return parsed as DeployMetadata;
}

export function createManagementApi(options: { ref: string; token: string; record: string }) {
  const functions = new Map<string, FunctionResponse>();
  // Bundles deployed with bundleOnly, by id, until a bulk update makes them live.
  const pending = new Map<string, FunctionResponse>();
  let uploads = 0;
  let clock = Date.parse("2026-01-01T00:00:00Z");
  const now = () => (clock += 1000);
  const log = join(options.record, "requests.jsonl");
  Deno.mkdirSync(join(options.record, "uploads"), { recursive: true });

  async function deploy(request: Request, url: URL, entry: RecordedRequest): Promise<Response> {
    const slug = url.searchParams.get("slug") ?? "";
    if (!SLUG_PATTERN.test(slug)) return json(400, { message: "slug must match ^[A-Za-z][A-Za-z0-9_-]*$" });
    const bundleOnly = url.searchParams.get("bundleOnly");
    if (bundleOnly !== null && bundleOnly !== "true" && bundleOnly !== "false") {
      return json(400, { message: "bundleOnly must be true or false" });
    }
    if (!(request.headers.get("content-type") ?? "").startsWith("multipart/form-data")) {
      return json(415, { message: "expected multipart/form-data" });
    }
    let form: FormData;
    try {
      form = await request.formData();
    } catch (error) {
      return json(400, { message: `unreadable multipart body: ${String(error)}` });
    }
    entry.parts = [...form.keys()];
    const rawMetadata = form.get("metadata");
    const metadata = rawMetadata === null
      ? "metadata is required"
      : parseMetadata(rawMetadata instanceof File ? await rawMetadata.text() : rawMetadata);
    entry.metadata = typeof metadata === "string" ? rawMetadata : metadata;
    if (typeof metadata === "string") return json(400, { message: metadata });

    const files: { name: string; contents: Uint8Array }[] = [];
    for (const part of form.getAll("file")) {
      if (!(part instanceof File)) return json(400, { message: "every file part must be a file" });
      if (!isSafeRelativePath(part.name)) return json(400, { message: `unsafe file name: ${part.name}` });
      if (files.some((file) => file.name === part.name)) return json(400, { message: `duplicate file: ${part.name}` });
      files.push({ name: part.name, contents: new Uint8Array(await part.arrayBuffer()) });
    }
    entry.files = files.map(({ name, contents }) => ({ name, bytes: contents.byteLength, sha256: sha256(contents) }));
    const names = new Set(files.map((file) => file.name));
    if (!names.has(metadata.entrypoint_path)) {
      return json(400, { message: `the entrypoint ${metadata.entrypoint_path} is not among the uploaded files` });
    }
    if (metadata.import_map_path && !names.has(metadata.import_map_path)) {
      return json(400, { message: `the import map ${metadata.import_map_path} is not among the uploaded files` });
    }

    uploads += 1;
    const folder = join(options.record, "uploads", `${uploads}-${slug}`);
    for (const { name, contents } of files) {
      const path = join(folder, ...name.split("/"));
      await Deno.mkdir(join(path, ".."), { recursive: true });
      await Deno.writeFile(path, contents);
    }
    entry.unpackedTo = folder;

    const current = functions.get(slug);
    const at = now();
    const deployed: FunctionResponse = {
      id: current?.id ?? crypto.randomUUID(),
      slug,
      name: metadata.name || slug,
      status: "ACTIVE",
      version: (current?.version ?? 0) + 1,
      created_at: current?.created_at ?? at,
      updated_at: at,
      verify_jwt: metadata.verify_jwt ?? current?.verify_jwt ?? true,
      import_map: Boolean(metadata.import_map_path),
      entrypoint_path: metadata.entrypoint_path,
      ...(metadata.import_map_path ? { import_map_path: metadata.import_map_path } : {}),
    };
    if (bundleOnly === "true") pending.set(deployed.id, deployed);
    else functions.set(slug, deployed);
    return json(201, deployed);
  }

  async function bulkUpdate(request: Request, entry: RecordedRequest): Promise<Response> {
    const body: unknown = await request.json().catch(() => undefined);
    entry.body = body;
    if (!Array.isArray(body) || !body.every((item) => isRecord(item) && typeof item.id === "string" && typeof item.slug === "string")) {
      return json(400, { message: "expected a list of functions with id and slug" });
    }
    const live: FunctionResponse[] = [];
    for (const item of body) {
      const bundle = pending.get(item.id) ?? functions.get(item.slug);
      if (bundle === undefined || bundle.id !== item.id || bundle.slug !== item.slug) {
        return json(404, { message: `no bundle ${item.id} for ${item.slug}` });
      }
      const updated = { ...bundle, ...(typeof item.verify_jwt === "boolean" ? { verify_jwt: item.verify_jwt } : {}) };
      functions.set(updated.slug, updated);
      pending.delete(updated.id);
      live.push(updated);
    }
    return json(200, { functions: live });
  }

  async function route(request: Request, url: URL, entry: RecordedRequest): Promise<Response> {
    const offered = /^Bearer (.+)$/.exec(request.headers.get("authorization") ?? "")?.[1];
    if (offered !== options.token) return json(401, { message: "Unauthorized" });
    const match = /^\/v1\/projects\/([^/]+)\/functions(\/deploy)?$/.exec(url.pathname);
    if (match === null) return json(404, { message: "Not found" });
    if (match[1] !== options.ref) return json(404, { message: "Project not found" });
    const operation = `${request.method} ${match[2] ?? ""}`;
    if (operation === "GET ") return json(200, [...functions.values()]);
    if (operation === "PUT ") return await bulkUpdate(request, entry);
    if (operation === "POST /deploy") return await deploy(request, url, entry);
    return json(405, { message: "Method not allowed" });
  }

  return async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    const entry: RecordedRequest = {
      method: request.method,
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      status: 0,
    };
    let response: Response;
    try {
      response = await route(request, url, entry);
    } catch (error) {
      entry.error = String(error);
      response = json(500, { message: "Internal error" });
    }
    entry.status = response.status;
    if (response.status >= 400) entry.error ??= (await response.clone().json()).message;
    await Deno.writeTextFile(log, `${JSON.stringify(entry)}\n`, { append: true });
    return response;
  };
}

if (import.meta.main) {
  const flags = readFlags(Deno.args);
  const ref = requireFlag(flags, "ref");
  const token = requireFlag(flags, "token");
  if (!REF_PATTERN.test(ref)) throw new Error("--ref must be 20 lowercase letters");
  if (!TOKEN_PATTERN.test(token)) throw new Error("--token must be sbp_ and 40 hex digits");
  const handler = createManagementApi({ ref, token, record: requireFlag(flags, "record") });
  Deno.serve({
    hostname: "127.0.0.1",
    port: Number(requireFlag(flags, "port")),
    onListen: ({ port }) => console.log(`listening ${port}`),
  }, handler);
}
