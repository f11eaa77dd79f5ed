import { z } from "zod";
import { type Endpoint, publicEndpoint } from "../http/endpoint.ts";
import { jsonText } from "../http/json.ts";
import { buildOpenApi } from "../http/openapi.ts";
import { outboundWebhooks } from "../webhook-subscriptions/events.ts";
import { referencePage } from "./reference-page.ts";

const tag = "Service";

// The document comes from the same endpoint list the router serves. It is built and
// serialized once, on the first request, so an instance that never serves it never pays.
export function docsEndpoints(endpoints: Endpoint[]): Endpoint[] {
  let document: string | undefined;
  const openApiJson = () =>
    document ??= JSON.stringify(buildOpenApi([...endpoints, ...own], {
      title: "Property management API",
      version: "1.0.0",
      description: "Properties, rate plans, guests, reservations, payments, tasks and access codes, per tenant. " +
        "Errors are RFC 9457 problem documents. Lists answer {data, pagination: {limit, offset, total}}. " +
        "Writes answer without a body unless Prefer: return=representation.",
    }, outboundWebhooks));
  const own: Endpoint[] = [
    publicEndpoint({
      method: "GET", path: "/v1/openapi.json", operationId: "openapi", tag,
      summary: "This API's OpenAPI 3.1 document.",
      success: [{ status: 200, description: "The document.", schema: z.record(z.string(), z.unknown()) }],
    }, () => jsonText(200, openApiJson())),
    publicEndpoint({
      method: "GET", path: "/v1/docs", operationId: "docs", tag,
      summary: "The API reference, rendered from the OpenAPI document.",
      success: [{ status: 200, description: "An HTML page.", contentType: "text/html", schema: z.string() }],
    }, () => new Response(referencePage, { headers: { "content-type": "text/html; charset=utf-8" } })),
  ];
  return own;
}
