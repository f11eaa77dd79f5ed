// POST /v1/auth/refresh through the gateway against the stack's Supabase Auth, with
// supabase/config.toml's refresh token rotation and its 10 s reuse interval. What Auth
// does with a refresh token used again (internal/tokens/service.go, legacy tokens):
// - the parent of the session's newest token: allowed at any time, and Auth hands back
//   that newest token (the client lost the answer to its last refresh);
// - an older token, within 10 s of being replaced: allowed (concurrent refreshes);
// - an older token later than that: refused, and every refresh token of the session is
//   revoked. The newest one then stays usable for one more reuse interval, counted
//   from the revocation, as any revoked token does.
import assert from "node:assert/strict";
import { sleep } from "../../local/capture.ts";
import { type ApiSession, call, expectProblem, expectStatus, type Schemas, signInThroughApi, withFixture } from "../support/api.ts";

const REFRESH = "/v1/auth/refresh";
// supabase/config.toml's refresh_token_reuse_interval, with a margin.
const PAST_REUSE_INTERVAL_MS = 11_500;

type Session = ApiSession;

function refresh(refreshToken: string) {
  return call("POST", "/auth/refresh", { body: { refreshToken } });
}

async function refreshed(refreshToken: string): Promise<Session> {
  return await expectStatus<Session>("POST", REFRESH, await refresh(refreshToken), 200);
}

async function refused(refreshToken: string, label: string) {
  const problem = await expectProblem("POST", REFRESH, await refresh(refreshToken), 401, "invalid-refresh-token");
  assert.match(problem.detail, /Sign in again/, label);
}

Deno.test("refresh: 200, a new session with a new refresh token, whose access token the API accepts", () =>
  withFixture(async ({ user }) => {
    const alice = await user("refresh");

    const next = await refreshed(alice.refreshToken);

    assert.equal(next.user.id, alice.id);
    assert.notEqual(next.refreshToken, alice.refreshToken);
    const me = await expectStatus<Schemas["Me"]>("GET", "/v1/me", await call("GET", "/me", { token: next.accessToken }), 200);
    assert.equal(me.user.id, alice.id);
  }));

Deno.test("refresh with the parent of the newest token again: 200, and Auth hands back the newest token", () =>
  withFixture(async ({ user }) => {
    const alice = await user("refresh-parent");
    const second = await refreshed(alice.refreshToken);

    const again = await refreshed(alice.refreshToken);

    assert.equal(again.refreshToken, second.refreshToken);
  }));

Deno.test("refresh with an older token within the reuse interval: 200", () =>
  withFixture(async ({ user }) => {
    const alice = await user("refresh-reuse-inside");
    const rt1 = alice.refreshToken;
    const rt2 = (await refreshed(rt1)).refreshToken;
    await refreshed(rt2);

    const reused = await refreshed(rt1);

    assert.equal(reused.user.id, alice.id);
  }));

Deno.test("refresh with an older token outside the reuse interval: 401, and the session's refresh tokens are revoked", () =>
  withFixture(async ({ user }) => {
    const alice = await user("refresh-reuse-outside");
    const rt1 = alice.refreshToken;
    const rt2 = (await refreshed(rt1)).refreshToken;
    const rt3 = (await refreshed(rt2)).refreshToken;
    // Another session of the same user, which the reuse must not touch.
    const other = await signInThroughApi(alice);

    await sleep(PAST_REUSE_INTERVAL_MS);
    await refused(rt1, "the reused token");
    await refused(rt2, "an older token of the session");
    await sleep(PAST_REUSE_INTERVAL_MS);
    await refused(rt3, "the newest token, once its grace after the revocation has passed");

    assert.equal((await refreshed(other.refreshToken)).user.id, alice.id);
  }));

Deno.test("refresh with a token Auth never issued or cannot read: the same 401", async () => {
  const unknown = await refresh("abcdefghijkl");
  const malformed = await refresh("not a refresh token");
  await expectProblem("POST", REFRESH, unknown, 401, "invalid-refresh-token");
  await expectProblem("POST", REFRESH, malformed, 401, "invalid-refresh-token");
  assert.equal(await malformed.text(), await unknown.text());
});
