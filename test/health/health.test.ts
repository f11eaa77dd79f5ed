// Health must tell the truth about each dependency. Both answers are checked in-process,
// with the real adapter aimed at a stand-in that answers /health and at a port where
// nothing listens; through the gateway, the stack (which always runs Supabase Auth)
// must be healthy, with no credentials needed.
import assert from "node:assert/strict";
import { type BodyOf, expectStatus } from "../support/api.ts";
import { apiWithAuthAt, freePort } from "../support/auth-process.ts";
import { stack } from "../support/stack.ts";

const HEALTH = "/v1/health";

// GET /v1/health of an API whose identity provider is at `authUrl`.
async function healthWithAuthAt(authUrl: string): Promise<Response> {
  const api = apiWithAuthAt(authUrl);
  try {
    return await api.handle(new Request(`http://function/api${HEALTH}`));
  } finally {
    await api.close();
  }
}

Deno.test("health answers 200 and every check ok while the database and Supabase Auth answer", async () => {
  const asked: string[] = [];
  const auth = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (request) => {
    const { pathname } = new URL(request.url);
    asked.push(pathname);
    return pathname === "/health" ? Response.json({ name: "GoTrue" }) : new Response(null, { status: 404 });
  });
  try {
    const response = await healthWithAuthAt(`http://127.0.0.1:${auth.addr.port}`);
    const body = await expectStatus("GET", HEALTH, response, 200);
    assert.deepEqual(body, { status: "ok", checks: { database: "ok", auth: "ok" } });
    assert.deepEqual(asked, ["/health"]);
  } finally {
    await auth.shutdown();
  }
});

Deno.test("health answers 503, a problem saying which check failed, while Supabase Auth is unreachable", async () => {
  const response = await healthWithAuthAt(`http://127.0.0.1:${freePort()}`);
  const body = await expectStatus("GET", HEALTH, response, 503);
  assert.deepEqual(body, {
    type: "urn:pms:problem:service-unavailable",
    title: "Service unavailable",
    status: 503,
    detail: "A dependency of the service is not reachable.",
    checks: { database: "ok", auth: "unreachable" },
  });
  assert.equal(response.headers.get("content-type"), "application/problem+json");
  assert.equal(response.headers.get("retry-after"), "5");
});

Deno.test("health through the gateway needs no credentials and answers 200 with the stack's Supabase Auth ok", async () => {
  const response = await fetch(`${stack.v1}/health`);
  const body = await expectStatus<BodyOf<"/v1/health", "get", 200>>("GET", HEALTH, response, 200);
  await response.body?.cancel();
  assert.deepEqual(body, { status: "ok", checks: { database: "ok", auth: "ok" } });
});
