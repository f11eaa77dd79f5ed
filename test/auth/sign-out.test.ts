// POST /v1/auth/sign-out through the gateway: Auth deletes the session, and the API
// checks the session in the database on every request (private.session_is_active), so
// the access token, still unexpired, is refused from the very next request on.
import assert from "node:assert/strict";
import { type ApiSession, call, expectProblem, expectStatus, type Schemas, signInThroughApi, withFixture } from "../support/api.ts";
import { apiWithAuthAt } from "../support/auth-process.ts";
import { assertMatchesContract } from "../support/openapi.ts";
import { stack } from "../support/stack.ts";

const SIGN_OUT = "/v1/auth/sign-out";

type Session = ApiSession;

Deno.test("sign-out: 204; the same access token is refused on the next request, and its refresh token too", () =>
  withFixture(async ({ user }) => {
    const alice = await user("sign-out");
    const session = await signInThroughApi(alice);
    await expectStatus("GET", "/v1/me", await call("GET", "/me", { token: session.accessToken }), 200);

    await expectStatus("POST", SIGN_OUT, await call("POST", "/auth/sign-out", { token: session.accessToken }), 204);

    const me = await expectProblem("GET", "/v1/me", await call("GET", "/me", { token: session.accessToken }), 401, "unauthorized");
    assert.match(me.detail, /session has ended/);
    await expectProblem(
      "POST", "/v1/auth/refresh",
      await call("POST", "/auth/refresh", { body: { refreshToken: session.refreshToken } }), 401, "invalid-refresh-token",
    );
    // Signing out again with it: the session is gone.
    await expectProblem("POST", SIGN_OUT, await call("POST", "/auth/sign-out", { token: session.accessToken }), 401, "unauthorized");
  }));

Deno.test("sign-out ends only the session it is sent with", () =>
  withFixture(async ({ user }) => {
    const alice = await user("sign-out-one");
    const phone = await signInThroughApi(alice);

    await expectStatus("POST", SIGN_OUT, await call("POST", "/auth/sign-out", { token: phone.accessToken }), 204);

    // The fixture's own session (another device) goes on.
    const me = await expectStatus<Schemas["Me"]>("GET", "/v1/me", await call("GET", "/me", { token: alice.token }), 200);
    assert.equal(me.user.id, alice.id);
  }));

Deno.test("sign-out without a bearer token: 401", async () => {
  await expectProblem("POST", SIGN_OUT, await call("POST", "/auth/sign-out"), 401, "unauthorized");
});

// Auth refusing the sign-out of a session the API has just found active: a concurrent
// sign-out got there first (nothing left to do), or Auth will not take the token (the
// session may live on, so the client must not be told it is signed out).
Deno.test("sign-out when Auth no longer has the session: 204; when Auth refuses the token: 401", () =>
  withFixture(async ({ user }) => {
    const alice = await user("sign-out-race");
    let logoutAnswer = { status: 404, error_code: "session_not_found" };
    const standIn = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (request) => {
      const { pathname } = new URL(request.url);
      if (pathname === "/.well-known/jwks.json") return await fetch(`${stack.authUrl}${pathname}`);
      if (pathname === "/logout") return Response.json({ code: logoutAnswer.status, ...logoutAnswer, msg: "refused" }, { status: logoutAnswer.status });
      return new Response(null, { status: 404 });
    });
    const api = apiWithAuthAt(`http://127.0.0.1:${standIn.addr.port}`);
    const signOut = () =>
      api.handle(new Request("http://function/api/v1/auth/sign-out", { method: "POST", headers: { authorization: `Bearer ${alice.token}` } }));
    try {
      const gone = await signOut();
      await assertMatchesContract("POST", SIGN_OUT, gone);
      assert.equal(gone.status, 204);

      logoutAnswer = { status: 403, error_code: "bad_jwt" };
      const refused = await signOut();
      const problem = await assertMatchesContract("POST", SIGN_OUT, refused) as Schemas["Problem"];
      assert.equal(refused.status, 401);
      assert.equal(problem.type, "urn:pms:problem:unauthorized");
    } finally {
      await api.close();
      await standIn.shutdown();
    }
  }));
