// The router on its own: how a path finds its route, and how whatever a handler throws
// becomes a problem document. errors.test.ts sends the same kinds of request through the
// gateway to the running function.
import assert from "node:assert/strict";
import { createRouter, type Route } from "../../src/http/router.ts";
import { HttpError } from "../../src/http/problem.ts";
import type { Problem } from "../support/stack.ts";

type Logged = { message: string; fields: Record<string, unknown> | undefined };

function router(routes: Route[]) {
  const errors: Logged[] = [];
  const handle = createRouter({
    functionName: "api",
    routes,
    logger: {
      error: (message, fields) => errors.push({ message, fields }),
      warn: (message) => assert.fail(`unexpected warning: ${message}`),
    },
  });
  return { handle, errors };
}

const echo = (name: string): Route["handler"] => (_request, params) => Response.json({ route: name, params });

async function problemOf(response: Response) {
  assert.equal(response.headers.get("content-type"), "application/problem+json");
  return await response.json() as Problem;
}

Deno.test("a path is matched with or without the function's name before it, its parameters decoded", async () => {
  const { handle } = router([{ method: "GET", path: "/v1/units/{id}", handler: echo("unit") }]);
  for (const url of ["http://function/api/v1/units/a%20b", "http://function/v1/units/a%20b"]) {
    const response = await handle(new Request(url));
    assert.equal(response.status, 200, url);
    assert.deepEqual(await response.json(), { route: "unit", params: { id: "a b" } });
  }
});

Deno.test("a literal segment wins over a parameter, whatever the order the routes were given in", async () => {
  const { handle } = router([
    { method: "GET", path: "/v1/notifications/{id}", handler: echo("one") },
    { method: "GET", path: "/v1/notifications/preferences", handler: echo("preferences") },
  ]);
  assert.equal((await (await handle(new Request("http://function/api/v1/notifications/preferences"))).json()).route, "preferences");
  assert.equal((await (await handle(new Request("http://function/api/v1/notifications/42"))).json()).route, "one");
});

Deno.test("no route for the path is a 404 problem; a known path with another method a 405 naming the allowed ones", async () => {
  const { handle } = router([
    { method: "GET", path: "/v1/units", handler: echo("list") },
    { method: "POST", path: "/v1/units", handler: echo("create") },
  ]);
  const missing = await handle(new Request("http://function/api/v1/nowhere"));
  assert.equal(missing.status, 404);
  assert.deepEqual(await problemOf(missing), {
    type: "urn:pms:problem:not-found", title: "Not found", status: 404, detail: "No route for GET /v1/nowhere.",
  });
  const wrong = await handle(new Request("http://function/api/v1/units", { method: "DELETE" }));
  assert.equal(wrong.status, 405);
  assert.equal(wrong.headers.get("allow"), "GET, POST");
  assert.equal((await problemOf(wrong)).type, "urn:pms:problem:method-not-allowed");
});

Deno.test("a parameter that is not valid percent-encoding matches no route", async () => {
  const { handle } = router([{ method: "GET", path: "/v1/units/{id}", handler: echo("unit") }]);
  assert.equal((await handle(new Request("http://function/api/v1/units/%E0%A4%A"))).status, 404);
});

Deno.test("an HttpError a handler throws is its problem, with its headers", async () => {
  const { handle, errors } = router([{
    method: "GET",
    path: "/v1/busy",
    handler: () => {
      throw new HttpError("too-many-requests", "Slow down.", { headers: { "retry-after": "7" } });
    },
  }]);
  const response = await handle(new Request("http://function/api/v1/busy"));
  assert.equal(response.status, 429);
  assert.equal(response.headers.get("retry-after"), "7");
  assert.deepEqual(await problemOf(response), {
    type: "urn:pms:problem:too-many-requests", title: "Too many requests", status: 429, detail: "Slow down.",
  });
  assert.deepEqual(errors, [], "a problem the API means to answer is not logged");
});

Deno.test("a database refusal a handler lets through is mapped to its problem, not logged", async () => {
  const { handle, errors } = router([{
    method: "POST",
    path: "/v1/units",
    handler: () => {
      throw Object.assign(new Error("duplicate key"), { code: "23505", constraint_name: "units_tenant_id_property_id_name_key" });
    },
  }]);
  const response = await handle(new Request("http://function/api/v1/units", { method: "POST" }));
  assert.equal(response.status, 409);
  assert.equal((await problemOf(response)).detail, "The property already has a unit with this name.");
  assert.deepEqual(errors, []);
});

Deno.test("anything else a handler throws is a 500 that tells the client nothing, and is logged", async () => {
  const { handle, errors } = router([{
    method: "GET",
    path: "/v1/broken",
    handler: () => {
      throw new Error("secret internals");
    },
  }]);
  const response = await handle(new Request("http://function/api/v1/broken"));
  assert.equal(response.status, 500);
  const problem = await problemOf(response);
  assert.equal(problem.type, "urn:pms:problem:internal");
  assert.doesNotMatch(JSON.stringify(problem), /secret internals/);
  assert.deepEqual(errors, [{
    message: "unhandled error",
    fields: { method: "GET", path: "/v1/broken", error: "Error: secret internals" },
  }]);
});
