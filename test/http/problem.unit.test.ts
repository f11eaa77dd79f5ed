// Problem documents on their own: the body every error of the API has, its content type,
// and the extension members that may stand beside the standard ones but never replace them.
import assert from "node:assert/strict";
import { HttpError, PROBLEM_CONTENT_TYPE, type ProblemKind, problemResponse, problemTypes, unauthorized } from "../../src/http/problem.ts";

Deno.test("a problem is {type, title, status, detail} as application/problem+json, with the kind's status", async () => {
  const response = problemResponse(new HttpError("stale-etag", "The unit changed since you read it."));
  assert.equal(response.status, 412);
  assert.equal(response.headers.get("content-type"), PROBLEM_CONTENT_TYPE);
  assert.deepEqual(await response.json(), {
    type: "urn:pms:problem:stale-etag",
    title: "Stale ETag",
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

Deno.test("every kind answers with its registry's status and title; the specific 409s are distinct types", () => {
  for (const [kind, { status, title }] of Object.entries(problemTypes)) {
    const error = new HttpError(kind as ProblemKind, "x");
    assert.deepEqual([error.status, error.title], [status, title], kind);
  }
  const conflicts = Object.entries(problemTypes).filter(([, { status }]) => status === 409).map(([kind]) => kind);
  for (const kind of ["unit-already-booked", "already-a-member", "still-referenced", "lifecycle-transition-refused"]) {
    assert.ok(conflicts.includes(kind), kind);
  }
  // A reused key with another request is the request's fault, not the resource's state
  // (the IETF idempotency-key draft's 422).
  assert.equal(problemTypes["idempotency-key-reused"].status, 422);
  assert.equal(problemTypes["stale-etag"].status, 412);
});

Deno.test("unauthorized answers 401 with a Bearer challenge", async () => {
  const response = problemResponse(unauthorized("Sign in again."));
  assert.equal(response.status, 401);
  assert.equal(response.headers.get("www-authenticate"), 'Bearer realm="pms"');
  assert.equal((await response.json()).type, "urn:pms:problem:unauthorized");
});
