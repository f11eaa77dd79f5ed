// When Supabase Auth cannot be reached the API answers 503, never 500. The app is
// built here with the real adapter aimed at a port where nothing listens.
import assert from "node:assert/strict";
import { apiWithAuthAt, freePort, postJson } from "../support/auth-process.ts";

Deno.test("sign-in, sign-up and refresh answer 503 while Supabase Auth is unreachable", async () => {
  const api = apiWithAuthAt(`http://127.0.0.1:${freePort()}`);
  try {
    const calls: [string, unknown][] = [
      ["sign-in", { email: "guest@example.com", password: "a-long-password" }],
      ["sign-up", { email: "guest@example.com", password: "a-long-password" }],
      ["refresh", { refreshToken: "abc" }],
    ];
    for (const [route, body] of calls) {
      const response = await api.handle(postJson(`/auth/${route}`, body));
      assert.equal(response.status, 503, route);
      assert.equal((await response.json()).type, "urn:pms:problem:service-unavailable");
    }
  } finally {
    await api.close();
  }
});
