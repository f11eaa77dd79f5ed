// The local gateway (nginx, configured by local/gateway/nginx-conf.sh) stands where a
// Supabase project's URL does: it routes, and leaves requests and answers to the
// functions behind it.
import assert from "node:assert/strict";
import { readProblem, stack } from "../support/stack.ts";

const functions = `${stack.apiUrl}/functions/v1`;

Deno.test("the gateway answers its own health, and JSON 404s for an unknown function or path", async () => {
  const health = await fetch(`${stack.apiUrl}/_gateway/health`);
  assert.deepEqual([health.status, await health.json()], [200, { status: "ok" }]);

  const unknownFunction = await fetch(`${functions}/no-such-function/v1/health`);
  assert.equal(unknownFunction.status, 404);
  assert.match(unknownFunction.headers.get("content-type") ?? "", /^application\/json/);
  assert.equal((await unknownFunction.json()).code, "NOT_FOUND");

  const unknownPath = await fetch(`${stack.apiUrl}/rest/v1/reservations`);
  assert.equal(unknownPath.status, 404);
  assert.equal((await unknownPath.json()).message, "no route matched with those values");
});

Deno.test("a function gets the path exactly as sent, encoded characters and all", async () => {
  const response = await fetch(`${functions}/api/v1/no-such%2Froute`);
  assert.equal(response.status, 404);
  assert.equal((await readProblem(response)).detail, "No route for GET /v1/no-such%2Froute.");
});

Deno.test("bodies pass in both directions whatever their size: the function judges a request's", async () => {
  const big = await fetch(`${functions}/bench-ceiling?bytes=1000000`);
  assert.equal(big.status, 200);
  assert.equal((await big.arrayBuffer()).byteLength, 1_000_000);

  // Over nginx's default limit (1 MiB): the API's own 413 must be the answer.
  const tooLarge = await fetch(`${stack.v1}/auth/sign-up`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email: "big@example.com", password: "x".repeat(2 * 1024 * 1024) }),
  });
  assert.equal(tooLarge.status, 413);
  assert.equal((await readProblem(tooLarge)).type, "urn:pms:problem:payload-too-large");
});

// fetch refuses to send TRACE (a forbidden method), so the request is written by hand.
async function rawRequest(method: string, path: string): Promise<{ status: number; headers: Map<string, string>; body: string }> {
  const { hostname, port } = new URL(stack.apiUrl);
  const connection = await Deno.connect({ hostname, port: Number(port) });
  try {
    await connection.write(new TextEncoder().encode(`${method} ${path} HTTP/1.1\r\nHost: ${hostname}\r\nConnection: close\r\n\r\n`));
    const text = new TextDecoder().decode(await new Response(connection.readable).arrayBuffer());
    const [head = "", body = ""] = text.split("\r\n\r\n");
    const [statusLine = "", ...lines] = head.split("\r\n");
    const headers = new Map(lines.map((line) => [line.slice(0, line.indexOf(":")).toLowerCase(), line.slice(line.indexOf(":") + 1).trim()]));
    return { status: Number(statusLine.split(" ")[1]), headers, body };
  } catch (error) {
    connection.close();
    throw error;
  }
}

// The hosted platform passes a function GET, POST, PUT, PATCH, DELETE and OPTIONS only, and
// answers any other method 405 itself; the local Edge Runtime does the same, and a method
// the platform passes but a route does not serve is the function's own 405 problem.
Deno.test("TRACE, which nginx passes on, is the Edge Runtime's 405 with Allow; PATCH on a GET route is the function's", async () => {
  const trace = await rawRequest("TRACE", "/functions/v1/api/v1/health");
  assert.equal(trace.status, 405);
  assert.equal(trace.headers.get("allow"), "GET, POST, PUT, PATCH, DELETE, OPTIONS");
  assert.equal(JSON.parse(trace.body).code, "METHOD_NOT_ALLOWED");
  assert.equal((await rawRequest("TRACE", "/functions/v1/no-such-function/v1/health")).status, 404);
  const patch = await rawRequest("PATCH", "/functions/v1/api/v1/health");
  assert.equal(patch.status, 405);
  assert.equal(patch.headers.get("allow"), "GET");
  assert.equal(patch.headers.get("content-type"), "application/problem+json");
  assert.equal(JSON.parse(patch.body).type, "urn:pms:problem:method-not-allowed");
});
