// The tests check responses against the document built in-process from this checkout's
// app (test/support/api-document.ts); this proves the running api function serves that
// very document, through the gateway, so a check against one is a check against the other.
import assert from "node:assert/strict";
import { apiDocumentText } from "../support/api-document.ts";
import { stack } from "../support/stack.ts";

Deno.test("GET /v1/openapi.json through the gateway is the document this checkout builds, byte for byte", async () => {
  const response = await fetch(`${stack.v1}/openapi.json`);
  const served = await response.text();
  assert.equal(response.status, 200, served);
  assert.equal(response.headers.get("content-type"), "application/json");
  assert.ok(served === await apiDocumentText(), "the served document differs from the one built in-process");
});
