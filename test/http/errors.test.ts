// The one error shape, for every way a request can be wrong, through the gateway
// and the function runtime.
import assert from "node:assert/strict";
import { MAX_BODY_BYTES } from "../../src/http/json.ts";
import { readProblem, stack } from "../support/stack.ts";

function post(route: string, body: string, contentType = "application/json"): Promise<Response> {
  return fetch(`${stack.v1}${route}`, { method: "POST", headers: { "content-type": contentType }, body });
}

Deno.test("an unknown route is a 404 problem", async () => {
  const response = await fetch(`${stack.v1}/no-such-thing`);
  assert.equal(response.status, 404);
  const problem = await readProblem(response);
  assert.equal(problem.type, "urn:pms:problem:not-found");
  assert.equal(problem.status, 404);
});

Deno.test("a known route with the wrong method is a 405 naming the allowed one", async () => {
  const response = await fetch(`${stack.v1}/auth/sign-in`);
  assert.equal(response.status, 405);
  assert.equal(response.headers.get("allow"), "POST");
  assert.equal((await readProblem(response)).type, "urn:pms:problem:method-not-allowed");
});

Deno.test("malformed JSON is a 400", async () => {
  const response = await post("/auth/sign-in", '{"email": "a@b.c", ');
  assert.equal(response.status, 400);
  assert.equal((await readProblem(response)).type, "urn:pms:problem:malformed-json");
});

Deno.test("a body that is not JSON is a 415", async () => {
  const response = await post("/auth/sign-in", "email=a@b.c", "text/plain");
  assert.equal(response.status, 415);
  assert.equal((await readProblem(response)).type, "urn:pms:problem:unsupported-media-type");
});

Deno.test("a body over the size limit is a 413", async () => {
  const response = await post(
    "/auth/sign-up",
    JSON.stringify({ email: "big@example.com", password: "x".repeat(MAX_BODY_BYTES) }),
  );
  assert.equal(response.status, 413);
  assert.equal((await readProblem(response)).type, "urn:pms:problem:payload-too-large");
});

Deno.test("invalid fields are a 400 listing each field", async () => {
  const response = await post("/auth/sign-up", JSON.stringify({ email: "not-an-email", password: 12345678, role: "admin" }));
  assert.equal(response.status, 400);
  const problem = await readProblem(response);
  assert.equal(problem.type, "urn:pms:problem:validation");
  const paths = (problem.errors ?? []).map((error) => error.path).sort();
  assert.deepEqual(paths, ["email", "password", "role"]);
});

Deno.test("a missing body where one is required is a 400, not a crash", async () => {
  const response = await fetch(`${stack.v1}/auth/sign-in`, { method: "POST" });
  assert.equal(response.status, 400);
  assert.equal((await readProblem(response)).type, "urn:pms:problem:validation");
});
