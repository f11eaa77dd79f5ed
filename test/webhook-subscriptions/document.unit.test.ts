// The OpenAPI document's webhooks section: every event a subscription receives, with the
// Standard Webhooks headers and the body the delivery tests hold each request to. The
// reference page lists every one of them (test/docs/reference-page.test.ts).
import assert from "node:assert/strict";
import { apiDocumentText } from "../support/api-document.ts";
import { deliveredEventTypes } from "../../src/webhook-subscriptions/schema.ts";

type Operation = {
  summary: string;
  parameters: { name: string; in: string; required: boolean }[];
  requestBody: { content: Record<string, { schema: { properties?: Record<string, unknown>; required?: string[] } }> };
};

Deno.test("the document's webhooks section has every event type, its headers and its body", async () => {
  const document = JSON.parse(await apiDocumentText()) as { webhooks?: Record<string, { post: Operation }> };
  assert.ok(document.webhooks, "the document has a webhooks section");
  assert.deepEqual(Object.keys(document.webhooks).sort(), [...deliveredEventTypes].sort());
  for (const [type, { post }] of Object.entries(document.webhooks)) {
    assert.deepEqual(post.parameters.map((p) => [p.name, p.in, p.required]),
      [["webhook-id", "header", true], ["webhook-timestamp", "header", true], ["webhook-signature", "header", true]], type);
    const schema = post.requestBody.content["application/json"]!.schema;
    assert.deepEqual(Object.keys(schema.properties ?? {}).sort(), ["data", "id", "tenantId", "timestamp", "type", "version"], type);
    assert.deepEqual((schema.properties!.type as { const?: string }).const, type, `${type}'s body names its type`);
  }
});
