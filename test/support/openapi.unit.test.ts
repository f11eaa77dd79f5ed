// The contract check must be able to fail: bodies, statuses and content types the
// document does not describe are refused, and what it does describe passes.
import assert from "node:assert/strict";
import { assertMatchesContract, ContractViolation } from "./openapi.ts";

const property = {
  id: "b513608e-d864-4afc-9898-e1cf313e2906",
  name: "Harbour House",
  timezone: "Europe/Lisbon",
  currency: "EUR",
  addressLine1: null,
  addressLine2: null,
  city: null,
  region: null,
  postalCode: null,
  countryCode: null,
  email: null,
  phone: null,
  checkInTime: "15:00:00",
  checkOutTime: "11:00:00",
  status: "active",
  createdAt: "2026-11-22T04:36:21.064291+00:00",
  updatedAt: "2026-11-22T04:36:21.064291+00:00",
};

const problem = { type: "urn:pms:problem:not-found", title: "Not found", status: 404, detail: "No such property." };

function jsonResponse(status: number, body: unknown, contentType = "application/json", headers: Record<string, string> = {}) {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": contentType, ...headers } });
}

const get = (response: Response) => assertMatchesContract("GET", "/v1/properties/{id}", response);
const etag = { etag: '"abc"' };

// The violation's own words, without the body it quotes: a pattern matched against the
// whole message would match the field names of the body whichever check failed.
function violationOf(error: unknown): string {
  assert.ok(error instanceof ContractViolation, String(error));
  return error.message.split("\nbody: ")[0]!;
}

async function refused(check: Promise<unknown>, pattern: RegExp) {
  await assert.rejects(check, (error: unknown) => {
    assert.match(violationOf(error), pattern);
    return true;
  });
}

// Refused by the schema with an issue at `field` ("(body)" for the body itself) whose
// message matches `pattern`.
async function refusedAt(check: Promise<unknown>, field: string, pattern = /./) {
  await assert.rejects(check, (error: unknown) => {
    const issues = violationOf(error).split("\n").slice(1);
    const prefix = `  ${field}: `;
    assert.ok(
      issues.some((line) => line.startsWith(prefix) && pattern.test(line.slice(prefix.length))),
      `no issue at ${field} matching ${pattern} in ${JSON.stringify(issues)}`,
    );
    return true;
  });
}

Deno.test("contract: a documented body passes, and the caller can still read the response", async () => {
  const response = jsonResponse(200, property, "application/json", etag);
  assert.deepEqual(await get(response), property);
  assert.deepEqual(await response.json(), property);
  assert.deepEqual(await get(jsonResponse(404, problem, "application/problem+json")), problem);
});

Deno.test("contract: a property missing its id is refused", async () => {
  const { id: _, ...withoutId } = property;
  await refusedAt(get(jsonResponse(200, withoutId, "application/json", etag)), "id");
});

Deno.test("contract: wrong field types, enum values, formats and extra fields are refused", async () => {
  await refusedAt(get(jsonResponse(200, { ...property, status: "deleted" }, "application/json", etag)), "status");
  await refusedAt(get(jsonResponse(200, { ...property, id: "not-a-uuid" }, "application/json", etag)), "id");
  await refusedAt(get(jsonResponse(200, { ...property, createdAt: "yesterday" }, "application/json", etag)), "createdAt");
  await refusedAt(get(jsonResponse(200, { ...property, city: 7 }, "application/json", etag)), "city");
  await refusedAt(get(jsonResponse(200, { ...property, secret: "x" }, "application/json", etag)), "(body)", /Unrecognized key: "secret"/);
  await refusedAt(get(jsonResponse(404, { ...problem, status: "404" }, "application/problem+json")), "status");
});

Deno.test("contract: undocumented statuses, wrong content types and missing headers are refused", async () => {
  await refused(get(jsonResponse(418, problem, "application/problem+json")), /418 is not documented/);
  await refused(get(jsonResponse(404, problem, "application/json")), /content-type/);
  await refused(get(jsonResponse(200, property, "application/problem+json", etag)), /content-type/);
  await refused(get(jsonResponse(200, property)), /ETag/);
  await refused(assertMatchesContract("GET", "/v1/no-such-path", jsonResponse(200, {})), /no such operation/);
  await refused(assertMatchesContract("PUT", "/v1/properties/{id}", jsonResponse(200, property)), /no such operation/);
});

Deno.test("contract: a 204 must be empty", async () => {
  assert.equal(await assertMatchesContract("DELETE", "/v1/properties/{id}", new Response(null, { status: 204 })), undefined);
  const typed = new Response(null, { status: 204, headers: { "content-type": "application/json" } });
  await refused(assertMatchesContract("DELETE", "/v1/properties/{id}", typed), /no content/);
  await refused(assertMatchesContract("DELETE", "/v1/properties/{id}", jsonResponse(200, property)), /200 is not documented/);
});

Deno.test("contract: a write without a body is return=minimal only where Prefer is accepted", async () => {
  const minimal = new Response(null, { status: 201, headers: { etag: '"abc"', location: "properties/x" } });
  assert.equal(await assertMatchesContract("POST", "/v1/properties", minimal), undefined);
  await refused(get(new Response(null, { status: 200, headers: etag })), /got none/);
});

Deno.test("contract: a header the document leaves optional may be absent, and when there holds a documented value", async () => {
  const list = (headers: Record<string, string>) =>
    assertMatchesContract("GET", "/v1/properties", jsonResponse(200, {
      data: [property], pagination: { limit: 20, offset: 0, total: null, hasMore: false },
    }, "application/json", headers));
  assert.ok(await list({}), "without Preference-Applied");
  assert.ok(await list({ "preference-applied": "count=none" }));
  await refused(list({ "preference-applied": "count=all" }), /Preference-Applied: count=all is none of/);
});
