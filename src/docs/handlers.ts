import { z } from "zod";
import { type Endpoint, publicEndpoint } from "../http/endpoint.ts";
import { jsonText } from "../http/json.ts";
import { buildOpenApi } from "../http/openapi.ts";
import { problemTypes } from "../http/problem.ts";
import { outboundWebhooks } from "../webhook-subscriptions/events.ts";
import { referencePage, referencePagePolicy } from "./reference-page.ts";

const tag = "Service";

// The problem types as a Markdown table in the document's description, so a reader of the
// reference sees every one together, not only one at a time under ProblemType.
function problemTypesTable(): string {
  const cell = (text: string) => text.replaceAll("|", "\\|").replaceAll("\n", " ");
  return [
    "## Problem types",
    "",
    "Every error's `type` is one of these; a client branches on it, never on the text.",
    "",
    "| type | status | when, and what a client does |",
    "|---|---|---|",
    ...Object.entries(problemTypes).map(([kind, { status, meaning }]) =>
      `| \`urn:pms:problem:${kind}\` | ${status} | ${cell(meaning)} |`
    ),
  ].join("\n");
}

// The reference renderer's browser bundle, as the function's entrypoint finds it (a static
// file deployed with the function). Read once, on the first request that needs it.
export type ReferenceRenderer = { readScript: () => Promise<Uint8Array<ArrayBuffer>> };

// The document comes from the same endpoint list the router serves. It is built and
// serialized once, on the first request, so an instance that never serves it never pays.
export function docsEndpoints(endpoints: Endpoint[], renderer: ReferenceRenderer): Endpoint[] {
  let document: string | undefined;
  const openApiJson = () =>
    document ??= JSON.stringify(buildOpenApi([...endpoints, ...own], {
      title: "Property management API",
      version: "1.0.0",
      description: "Properties, rate plans, guests, reservations, payments, tasks and access codes, per tenant. " +
        "Errors are RFC 9457 problem documents. Lists answer {data, pagination: {limit, offset, total}}. " +
        "A create answers 201 with Location and the new resource's id (the resource under Prefer: " +
        "return=representation); a change answers 204 without a body (200 with the resource under the same " +
        "preference). Each error response lists its problem types in x-problem-types.\n\n" + problemTypesTable(),
    }, outboundWebhooks));
  let script: Promise<{ body: Uint8Array<ArrayBuffer>; etag: string }> | undefined;
  const loadScript = () =>
    script ??= renderer.readScript().then(async (body) => {
      const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", body));
      return { body, etag: `"${Array.from(digest.slice(0, 12), (byte) => byte.toString(16).padStart(2, "0")).join("")}"` };
    }).catch((error) => {
      script = undefined; // a later request tries again
      throw error;
    });
  const own: Endpoint[] = [
    publicEndpoint({
      method: "GET", path: "/v1/openapi.json", operationId: "openapi", tag,
      summary: "This API's OpenAPI 3.1 document.",
      success: [{ status: 200, description: "The document.", schema: z.record(z.string(), z.unknown()) }],
    }, () => jsonText(200, openApiJson())),
    publicEndpoint({
      method: "GET", path: "/v1/docs", operationId: "docs", tag,
      summary: "The API reference, rendered from the OpenAPI document, with a console to try requests.",
      success: [{ status: 200, description: "An HTML page.", contentType: "text/html", schema: z.string() }],
    }, () =>
      new Response(referencePage, {
        headers: { "content-type": "text/html; charset=utf-8", "content-security-policy": referencePagePolicy },
      })),
    publicEndpoint({
      method: "GET", path: "/v1/docs/api-reference.js", operationId: "docsScript", tag,
      summary: "The reference page's renderer (Scalar's API reference, its browser bundle).",
      success: [
        { status: 200, description: "JavaScript.", contentType: "text/javascript", schema: z.string(), headers: ["ETag"] },
        { status: 304, description: "Unchanged since the ETag sent in If-None-Match.", headers: ["ETag"] },
      ],
    }, async ({ request }) => {
      const { body, etag } = await loadScript();
      // Revalidated at most daily: 304 when unchanged, so the 4 MB travel once.
      const headers = { etag, "cache-control": "public, max-age=86400" };
      if (request.headers.get("if-none-match") === etag) return new Response(null, { status: 304, headers });
      return new Response(body, { headers: { ...headers, "content-type": "text/javascript; charset=utf-8" } });
    }),
  ];
  return own;
}
