// GET /v1/docs renders the served OpenAPI document: checked in headless Chromium
// (Debian's chromium package; npm test installs it), which runs the page's script,
// lets it fetch openapi.json and dumps the resulting DOM.
import assert from "node:assert/strict";
import { client, expectStatus } from "../support/api.ts";
import { stack } from "../support/stack.ts";

type Operation = {
  operationId: string;
  summary: string;
  tags?: string[];
  "x-access": string;
  parameters?: ({ name: string } | { $ref: string })[];
  responses: Record<string, unknown>;
};
type Document = {
  info: { title: string; version: string; description: string };
  paths: Record<string, Record<string, Operation>>;
  components: { parameters: Record<string, { name: string }> };
};

const docsUrl = `${stack.v1}/docs`;
const loading = "Loading the OpenAPI document";
const failed = "Could not load openapi.json";
const loopbackHosts = new Set(["127.0.0.1", "localhost", "[::1]"]);
const timeoutMs = 20_000;

type Rendered = {
  dom: string;
  // Every request the page itself made (the main document and what it loaded),
  // from Chromium's net log; Chromium's own background traffic is left out.
  pageRequests: string[];
};

// The Chromium processes of one run all carry its --user-data-dir on their command
// line; they are found by it (and only they) and killed by pid.
async function killAll(profile: string): Promise<void> {
  const { stdout } = await new Deno.Command("ps", { args: ["-eo", "pid=,args="], stdin: "null", stderr: "null" }).output();
  for (const line of new TextDecoder().decode(stdout).split("\n")) {
    const match = line.match(/^\s*(\d+) (.*)$/);
    if (!match || !match[2]!.includes(`--user-data-dir=${profile}`)) continue;
    try {
      Deno.kill(Number(match[1]), "SIGKILL");
    } catch {
      // already gone
    }
  }
}

function pageRequestsIn(netLogText: string): string[] {
  const log = JSON.parse(netLogText) as {
    constants: { logEventTypes: Record<string, number> };
    events: { type: number; params?: { url?: string; initiator?: string; request_type?: string } }[];
  };
  const startJob = log.constants.logEventTypes.URL_REQUEST_START_JOB;
  const urls = new Set<string>();
  for (const { type, params } of log.events) {
    if (type !== startJob || params?.url === undefined) continue;
    // Requests of the page carry its origin as initiator; the main frame has none.
    if (params.request_type === "main frame" || (params.initiator ?? "not an origin") !== "not an origin") {
      urls.add(params.url);
    }
  }
  return [...urls];
}

// The tests may run programs but not write files: the profile is made and removed by coreutils.
async function run(program: string, ...args: string[]): Promise<string> {
  const { code, stdout, stderr } = await new Deno.Command(program, { args, stdin: "null" }).output();
  const decoder = new TextDecoder();
  assert.equal(code, 0, `${program} ${args.join(" ")}: ${decoder.decode(stderr)}`);
  return decoder.decode(stdout).trim();
}

async function renderInChromium(url: string): Promise<Rendered> {
  const profile = await run("mktemp", "-d", "-t", "pms-docs-chromium-XXXXXXXX");
  const netLog = `${profile}/net-log.json`;
  const args = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    `--user-data-dir=${profile}`,
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--no-proxy-server",
    // Nothing but loopback resolves (IP literals included): the check never reaches the network.
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
    `--log-net-log=${netLog}`,
    // Virtual time stands still while requests are pending, so the DOM is dumped
    // once the page has fetched openapi.json and rendered it.
    "--virtual-time-budget=5000",
    "--dump-dom",
    url,
  ];
  let timedOut = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    let child: Deno.ChildProcess;
    try {
      child = new Deno.Command("chromium", { args, stdin: "null", stdout: "piped", stderr: "piped" }).spawn();
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) {
        throw new Error("chromium is not installed: npm test installs Debian's chromium package when run as root");
      }
      throw error;
    }
    timer = setTimeout(() => {
      timedOut = true;
      try {
        child.kill("SIGKILL");
      } catch {
        // it ended meanwhile
      }
      void killAll(profile); // its renderers and helpers, which keep stdout open
    }, timeoutMs);
    const { code, stdout, stderr } = await child.output();
    const log = new TextDecoder().decode(stderr).slice(-3000);
    if (timedOut) throw new Error(`chromium did not finish within ${timeoutMs} ms and was killed\n${log}`);
    assert.equal(code, 0, `chromium exited with ${code}\n${log}`);
    return { dom: new TextDecoder().decode(stdout), pageRequests: pageRequestsIn(await Deno.readTextFile(netLog)) };
  } finally {
    clearTimeout(timer);
    try {
      await killAll(profile); // a renderer or helper left behind
    } finally {
      await run("rm", "-rf", "--", profile);
    }
  }
}

let rendering: Promise<Rendered> | null = null;
const rendered = () => (rendering ??= renderInChromium(docsUrl));

function decode(html: string): string {
  return html.replaceAll("&lt;", "<").replaceAll("&gt;", ">").replaceAll("&quot;", '"').replaceAll("&#39;", "'")
    .replaceAll("&nbsp;", "\u00a0").replaceAll("&amp;", "&");
}

function textOf(html: string): string {
  return decode(html.replace(/<[^>]*>/g, ""));
}

function elementText(html: string, id: string): string | undefined {
  const match = html.match(new RegExp(`<(\\w+) id="${id}">([\\s\\S]*?)</\\1>`));
  return match ? textOf(match[2]!) : undefined;
}

type RenderedOperation = {
  tag: string;
  methodClass: string;
  method: string;
  path: string;
  summary: string;
  access: string;
  statuses: string[];
  parameters: string[];
};

// The operations as the page lists them: one <details class="operation"> each,
// under the <h2> of its tag.
function renderedOperations(dom: string): RenderedOperation[] {
  const main = dom.match(/<main id="reference">([\s\S]*?)<\/main>/)?.[1] ?? "";
  const operations: RenderedOperation[] = [];
  for (const section of main.split(/(?=<h2>)/)) {
    const tag = section.match(/^<h2>([\s\S]*?)<\/h2>/)?.[1];
    for (const [, block] of section.matchAll(/<details class="operation">([\s\S]*?)<\/details>/g)) {
      const summary = block!.match(
        /<summary><span class="method (\w+)">([^<]*)<\/span><span class="path">([^<]*)<\/span><span>([^<]*)<\/span><\/summary>/,
      );
      assert.ok(summary, `an operation without its method, path and summary: ${block!.slice(0, 500)}`);
      operations.push({
        tag: tag === undefined ? "(no tag heading)" : textOf(tag),
        methodClass: summary[1]!,
        method: textOf(summary[2]!),
        path: textOf(summary[3]!),
        summary: textOf(summary[4]!),
        access: textOf(block!.match(/<p class="access">([\s\S]*?)<\/p>/)?.[1] ?? ""),
        statuses: [...block!.matchAll(/<strong>(\d{3}) <\/strong>/g)].map((match) => match[1]!),
        parameters: [...block!.matchAll(/<tr><td class="path">([^<]*)<\/td>/g)].map((match) => textOf(match[1]!)),
      });
    }
  }
  return operations;
}

const key = (method: string, path: string) => `${method.toUpperCase()} ${path}`;

async function servedDocument(): Promise<Document> {
  return await expectStatus<Document>("GET", "/v1/openapi.json", await client(null).get("/openapi.json"), 200);
}

async function servedPage(): Promise<string> {
  const response = await client(null).get("/docs");
  const html = await expectStatus<string>("GET", "/v1/docs", response, 200);
  assert.equal(response.headers.get("content-type"), "text/html; charset=utf-8");
  return html;
}

Deno.test("the served page, before its script runs, lists no operation: only the loading notice", async () => {
  // What a browser that never ran the script (or never got openapi.json) would show;
  // the rendered checks below must tell it apart.
  const html = await servedPage();
  assert.equal(elementText(html, "reference"), `${loading}…`);
  assert.deepEqual(renderedOperations(html), []);
  const document = await servedDocument();
  assert.notEqual(elementText(html, "title"), `${document.info.title} ${document.info.version}`);
});

Deno.test("in headless Chromium the reference page lists every operation of the OpenAPI document", async () => {
  const document = await servedDocument();
  const { dom } = await rendered();

  // The script's own text is part of the DOM too: the states are looked for in <main> only.
  const reference = elementText(dom, "reference") ?? "";
  assert.ok(!reference.includes(failed), `the page shows its error state: ${reference.slice(0, 500)}`);
  assert.ok(!reference.includes(loading), "the page still shows its loading notice: its script did not render the document");
  assert.equal(elementText(dom, "title"), `${document.info.title} ${document.info.version}`);
  assert.equal(elementText(dom, "description"), document.info.description);

  const expected = new Map<string, { tag: string; method: string; operation: Operation }>();
  for (const [path, operations] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      expected.set(key(method, path), { tag: operation.tags?.[0] ?? "Other", method, operation });
    }
  }
  assert.ok(expected.size > 0, "the document has no operation");

  const operations = renderedOperations(dom);
  const listed = operations.map((operation) => key(operation.method, operation.path));
  assert.deepEqual(
    [...listed].sort(),
    [...expected.keys()].sort(),
    "the page lists exactly the document's operations, each once",
  );

  for (const shown of operations) {
    const where = key(shown.method, shown.path);
    const { tag, method, operation } = expected.get(where)!;
    const parameters = (operation.parameters ?? []).map((parameter) =>
      "$ref" in parameter ? document.components.parameters[parameter.$ref.split("/").pop()!]!.name : parameter.name
    );
    assert.deepEqual(
      {
        tag: shown.tag,
        methodClass: shown.methodClass,
        summary: shown.summary,
        access: shown.access,
        statuses: shown.statuses,
        parameters: shown.parameters,
      },
      {
        tag,
        methodClass: method,
        summary: operation.summary,
        access: `Access: ${operation["x-access"]} · operationId ${operation.operationId}`,
        statuses: Object.keys(operation.responses),
        parameters,
      },
      where,
    );
  }
});

Deno.test("in headless Chromium the reference page lists every problem type with its status and title", async () => {
  const { components } = await servedDocument() as unknown as {
    components: { schemas: { ProblemType: { oneOf: { const: string; title: string; "x-status": number }[] } } };
  };
  const { dom } = await rendered();
  const rows = [...dom.matchAll(/<tr class="problem-type">([\s\S]*?)<\/tr>/g)]
    .map(([, row]) => [...row!.matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map(([, cell]) => textOf(cell!)));
  assert.deepEqual(
    rows.map(([type, status, title]) => ({ type, status, title })),
    components.schemas.ProblemType.oneOf.map((type) => ({ type: type.const, status: String(type["x-status"]), title: type.title })),
  );
  assert.ok(rows.some(([type]) => type === "urn:pms:problem:unit-already-booked"), "the table lists the specific types");
});

function isLoopback(url: string, base: string): boolean {
  const { protocol, hostname } = new URL(url, base);
  if (protocol === "data:" || protocol === "blob:" || protocol === "about:") return true;
  return (protocol === "http:" || protocol === "https:") && loopbackHosts.has(hostname);
}

Deno.test("the reference page loads nothing from outside loopback", async () => {
  // Statically: the served HTML names no absolute URL (scheme or protocol-relative)
  // other than loopback ones.
  const html = await servedPage();
  const absolute = [
    ...html.matchAll(/\b(?:https?|wss?|ftp):\/\/[^\s"'`<>)]+/gi), // anywhere: markup, CSS or script
    ...html.matchAll(/(?<=[=("'`]\s*)\/\/[^\s"'`<>)]+/g), // protocol-relative, as an attribute, url() or string
  ].map((match) => match[0]);
  assert.deepEqual(absolute.filter((url) => !isLoopback(url, docsUrl)), [], "absolute URLs in the served page");

  // In the browser: every request the page made stayed on loopback, and the log does
  // see the page's own requests (the document and the openapi.json it fetched).
  const { dom, pageRequests } = await rendered();
  assert.ok(pageRequests.includes(docsUrl), `the net log misses the page itself: ${pageRequests.join(", ")}`);
  assert.ok(pageRequests.includes(`${stack.v1}/openapi.json`), `the net log misses openapi.json: ${pageRequests.join(", ")}`);
  assert.deepEqual(pageRequests.filter((url) => !isLoopback(url, docsUrl)), [], "requests of the page outside loopback");

  // And the rendered DOM has no element pointing elsewhere (scripts, styles, images, frames, forms).
  const references = [...dom.matchAll(/\s(?:src|href|action|formaction|poster|data|srcset)="([^"]*)"/gi)]
    .map((match) => decode(match[1]!));
  assert.deepEqual(references.filter((url) => !isLoopback(url, docsUrl)), [], "outside references in the rendered page");
});
