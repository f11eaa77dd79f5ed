// Problem documents on their own: the body every error of the API has, its content type,
// and the extension members that may stand beside the standard ones but never replace them.
import assert from "node:assert/strict";
import { HttpError, PROBLEM_CONTENT_TYPE, problemResponse, unauthorized } from "../../src/http/problem.ts";

Deno.test("a problem is {type, title, status, detail} as application/problem+json, with the kind's status", async () => {
  const response = problemResponse(new HttpError("precondition-failed", "The unit changed since you read it."));
  assert.equal(response.status, 412);
  assert.equal(response.headers.get("content-type"), PROBLEM_CONTENT_TYPE);
  assert.deepEqual(await response.json(), {
    type: "urn:pms:problem:precondition-failed",
    title: "Precondition failed",
    status: 412,
    detail: "The unit changed since you read it.",
  });
});

Deno.test("field errors are listed under errors; extension members stand beside, never over, the standard ones", async () => {
  const error = new HttpError("validation", "The body is wrong.", {
    errors: [{ path: "name", message: "Required." }],
    members: { reasons: ["length"], status: 200, type: "urn:elsewhere", detail: "replaced" },
  });
  assert.deepEqual(await problemResponse(error).json(), {
    type: "urn:pms:problem:validation",
    title: "Invalid request",
    status: 400,
    detail: "The body is wrong.",
    errors: [{ path: "name", message: "Required." }],
    reasons: ["length"],
  });
});

Deno.test("every kind answers with its own status", () => {
  const expected: [ConstructorParameters<typeof HttpError>[0], number][] = [
    ["validation", 400], ["malformed-json", 400], ["unauthorized", 401], ["invalid-credentials", 401],
    ["invalid-refresh-token", 401], ["forbidden", 403], ["email-not-confirmed", 403], ["signup-disabled", 403],
    ["not-found", 404], ["method-not-allowed", 405], ["conflict", 409], ["email-taken", 409],
    ["precondition-failed", 412], ["payload-too-large", 413], ["unsupported-media-type", 415],
    ["unprocessable", 422], ["weak-password", 422], ["too-many-requests", 429], ["internal", 500],
    ["service-unavailable", 503],
  ];
  for (const [kind, status] of expected) assert.equal(new HttpError(kind, "x").status, status, kind);
});

Deno.test("unauthorized answers 401 with a Bearer challenge", async () => {
  const response = problemResponse(unauthorized("Sign in again."));
  assert.equal(response.status, 401);
  assert.equal(response.headers.get("www-authenticate"), 'Bearer realm="pms"');
  assert.equal((await response.json()).type, "urn:pms:problem:unauthorized");
});
