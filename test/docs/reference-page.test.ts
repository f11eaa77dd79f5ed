// GET /v1/docs: Scalar's API reference, served by the function with its renderer beside it,
// rendering the served OpenAPI document in headless Chromium (test/support/browser.ts):
// every operation, the problem types, an operation's details, and its console sending a
// real request to the stack. Nothing the page loads leaves loopback; a screenshot of it
// goes to docs/images/api-reference.png, which the README shows.
/// <reference lib="dom" />
import assert from "node:assert/strict";
import type { Page } from "puppeteer-core";
import { client, expectStatus } from "../support/api.ts";
import { isLoopback, recordedPage, withChromium } from "../support/browser.ts";
import { stack } from "../support/stack.ts";

type Operation = { operationId: string; summary: string; tags?: string[]; requestBody?: unknown; responses: Record<string, unknown> };
type ApiDocument = {
  info: { title: string; version: string; description: string };
  paths: Record<string, Record<string, Operation>>;
  // The outbound webhooks a subscription receives, by event type.
  webhooks: Record<string, Record<string, Operation>>;
  components: {
    schemas: Record<string, { properties?: Record<string, unknown>; required?: string[] }> & {
      ProblemType: { oneOf: { const: string; title: string; "x-status": number }[] };
    };
  };
};

const docsUrl = `${stack.v1}/docs`;
const scriptUrl = `${stack.v1}/docs/api-reference.js`;
const screenshot = new URL("../../docs/images/api-reference.png", import.meta.url).pathname;
const timeout = 20_000;

async function servedDocument(): Promise<ApiDocument> {
  return await expectStatus<ApiDocument>("GET", "/v1/openapi.json", await client(null).get("/openapi.json"), 200);
}

const operationKey = (method: string, path: string) => `${method.toUpperCase()} ${path}`;

// The operations and the outbound webhooks, as the sidebar names them (an event type's
// underscores become hyphens there).
function documentOperations(document: ApiDocument): string[] {
  const operations = Object.entries(document.paths).flatMap(([path, operations]) =>
    Object.keys(operations).map((method) => operationKey(method, path))
  );
  const webhooks = Object.entries(document.webhooks).flatMap(([event, operations]) =>
    Object.keys(operations).map((method) => `WEBHOOK ${method.toUpperCase()} ${event.replaceAll("_", "-")}`)
  );
  assert.ok(operations.length > 90 && webhooks.length > 10, "the document has its operations and webhooks");
  return [...operations, ...webhooks].sort();
}

Deno.test("the served page names nothing outside loopback, forbids it by policy, and loads the renderer beside it", async () => {
  const response = await client(null).get("/docs");
  const html = await expectStatus<string>("GET", "/v1/docs", response, 200);
  assert.equal(response.headers.get("content-type"), "text/html; charset=utf-8");
  const policy = response.headers.get("content-security-policy") ?? "";
  for (const directive of ["default-src 'none'", "script-src 'self' 'unsafe-inline'", "connect-src 'self'"]) {
    assert.ok(policy.includes(directive), `the page's policy has ${directive}: ${policy}`);
  }
  const absolute = [...html.matchAll(/\b(?:https?|wss?):\/\/[^\s"'`<>)]+|(?<=[=("'`]\s*)\/\/[^\s"'`<>)]+/gi)].map((match) => match[0]);
  assert.deepEqual(absolute, [], "the served page names no absolute address");
  assert.ok(html.includes('"/docs/api-reference.js"') && html.includes('"/openapi.json"'), "it loads both from beside itself");

  // The renderer is the pinned package's own bundle, byte for byte, and revalidates with its ETag.
  const script = await fetch(scriptUrl);
  assert.equal(script.status, 200);
  assert.equal(script.headers.get("content-type"), "text/javascript; charset=utf-8");
  const etag = script.headers.get("etag");
  assert.match(etag ?? "", /^"[0-9a-f]{24}"$/);
  const served = new Uint8Array(await script.arrayBuffer());
  const shipped = await Deno.readFile(new URL("../../node_modules/@scalar/api-reference/dist/browser/standalone.js", import.meta.url));
  assert.equal(served.byteLength, shipped.byteLength);
  assert.ok(served.every((byte, at) => byte === shipped[at]), "the served bundle is the package's");
  const unchanged = await fetch(scriptUrl, { headers: { "if-none-match": etag! } });
  assert.equal(unchanged.status, 304);
  assert.equal(await unchanged.text(), "");
});

// The sidebar's entries, every tag opened: "api-1/tag/<tag>/<METHOD>/<path>" for an
// operation, "api-1/tag/<tag>/webhook/<METHOD>/<event>" for a webhook.
async function sidebarOperations(page: Page): Promise<string[]> {
  for (let round = 0; round < 5; round++) {
    const opened = await page.$$eval("li[data-sidebar-id^='api-1/tag/']", (items) => {
      let clicked = 0;
      for (const item of items) {
        if (item.getAttribute("data-sidebar-id")!.split("/").length !== 3) continue;
        const toggle = item.querySelector<HTMLButtonElement>("button[aria-expanded='false']");
        if (toggle) {
          toggle.click();
          clicked++;
        }
      }
      return clicked;
    });
    if (opened === 0) break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const ids = await page.$$eval("li[data-sidebar-id^='api-1/tag/']", (items) => items.map((item) => item.getAttribute("data-sidebar-id")!));
  return ids.map((id) => id.split("/")).filter((parts) => parts.length > 4)
    .map(([, , , method, ...path]) =>
      method === "webhook" ? `WEBHOOK ${path[0]!.toUpperCase()} ${path.slice(1).join("/")}` : operationKey(method!, `/${path.join("/")}`)
    ).sort();
}

async function visibleText(page: Page): Promise<string> {
  return await page.evaluate(() => document.body.innerText);
}

Deno.test("in headless Chromium the reference renders every operation, the problem types and an operation's details, and its console calls the stack", async () => {
  const served = await servedDocument();
  await withChromium(async (browser) => {
    const { page, requests } = await recordedPage(browser);
    const errors: string[] = [];
    page.on("pageerror", (error) => void errors.push(String(error)));

    await page.goto(docsUrl, { waitUntil: "networkidle0", timeout });
    await page.waitForSelector("li[data-sidebar-id='api-1/tag/reservations']", { timeout });
    const heading = await page.$eval("h1", (element) => element.textContent?.trim());
    assert.equal(heading, served.info.title);

    assert.deepEqual(await sidebarOperations(page), documentOperations(served), "the sidebar lists exactly the document's operations");

    // The introduction lists every problem type, with its status.
    const introduction = await visibleText(page);
    for (const type of served.components.schemas.ProblemType.oneOf) {
      assert.match(introduction, new RegExp(`${type.const}\\s+${type["x-status"]}\\b`), `${type.const} in the introduction`);
    }

    // One operation in full: its summary, its body's fields and its responses.
    const create = served.paths["/v1/reservations"]!.post!;
    await page.goto(`${docsUrl}#tag/reservations/POST/v1/reservations`, { waitUntil: "networkidle0", timeout });
    const section = await page.waitForSelector("[id='api-1/tag/reservations/POST/v1/reservations']:not([data-placeholder])", { timeout });
    const sectionText = await section!.evaluate((element) => (element as HTMLElement).innerText);
    assert.ok(sectionText.includes(create.summary), "the operation's summary");
    for (const field of served.components.schemas.ReservationCreate!.required!) {
      assert.ok(sectionText.includes(field), `the request body's ${field}`);
    }
    for (const status of Object.keys(create.responses)) assert.ok(sectionText.includes(status), `the ${status} response`);
    await section!.scrollIntoView();
    await page.screenshot({ path: screenshot });

    // The console: GET /v1/health sent from the page to the stack, and its answer shown.
    await page.goto(`${docsUrl}#tag/service/GET/v1/health`, { waitUntil: "networkidle0", timeout });
    const health = await page.waitForSelector("[id='api-1/tag/service/GET/v1/health']:not([data-placeholder])", { timeout });
    const open = await health!.waitForSelector("::-p-text(Test Request)", { timeout });
    await open!.click();
    const send = await page.waitForSelector("::-p-aria(Send get request to " + `${stack.v1}/health)`, { timeout });
    const answered = page.waitForResponse((response) => response.url() === `${stack.v1}/health`, { timeout });
    await send!.click();
    assert.equal((await answered).status(), 200);
    await page.waitForFunction(() => document.body.innerText.includes("200 OK"), { timeout });
    const shown = await visibleText(page);
    assert.match(shown, /"database":\s*"ok"/, "the console shows the answer's body");

    assert.deepEqual(errors, [], "the page raised no error");
    assert.ok(requests.includes(`${stack.v1}/openapi.json`) && requests.includes(scriptUrl), requests.join("\n"));
    assert.deepEqual(requests.filter((url) => !isLoopback(url)), [], "requests of the page outside loopback");
    const origin = new URL(docsUrl).origin;
    assert.deepEqual(requests.filter((url) => new URL(url).origin !== origin && !url.startsWith("data:")), [],
      "everything the page loaded came from the function's own origin");
  });
});
