// supabase-js as a client of the API, the way docs/api.md shows it: the import below and
// the code between the markers are that document's example, run as written against the
// stack's gateway (the project URL: /auth/v1 reaches Auth, /functions/v1 the functions).
// In Deno, as in Node, there is no window, so supabase-js keeps the session in memory
// and needs no storage option. That the copy below is the document's, as written, is
// supabase-js.unit.test.ts's.
import assert from "node:assert/strict";
import { createClient, FunctionsHttpError } from "@supabase/supabase-js";
import { call, expectProblem, withFixture } from "../support/api.ts";
import { stack } from "../support/stack.ts";

Deno.test("supabase-js: sign up, sign in, call the API, refresh, sign out; the API then refuses the old tokens", () =>
  withFixture(async ({ cleanup }) => {
    const SUPABASE_URL = stack.apiUrl;
    const SUPABASE_ANON_KEY = stack.anonKey;
    const email = `supabase-js-${crypto.randomUUID().slice(0, 8)}@test.example`;
    const password = "a-long-secret-1";
    // What the example prints, kept for the assertions below.
    const logged: unknown[] = [];
    const console = { log: (...values: unknown[]) => logged.push(values) };

    // --- docs/api.md example
    const supabase = createClient(SUPABASE_URL, SUPABASE_ANON_KEY);

    const { error: signUpError } = await supabase.auth.signUp({ email, password });
    if (signUpError) throw signUpError;
    const { data: signedIn, error: signInError } = await supabase.auth.signInWithPassword({ email, password });
    if (signInError) throw signInError;

    // The API is the function `api`; invoke sends the session's access token as the bearer.
    const { data: me, error: meError } = await supabase.functions.invoke("api/v1/me", { method: "GET" });
    if (meError) throw meError;
    console.log(me.user.email, me.memberships);

    const { data: refreshed, error: refreshError } = await supabase.auth.refreshSession();
    if (refreshError) throw refreshError;

    // Ends every session of the user ({ scope: "local" }: this one only); the API refuses
    // their access tokens from the next request on.
    const { error: signOutError } = await supabase.auth.signOut();
    if (signOutError) throw signOutError;

    // The API's errors are problem documents (application/problem+json).
    const { error: refused } = await supabase.functions.invoke("api/v1/me", { method: "GET" });
    if (refused instanceof FunctionsHttpError) console.log((await refused.context.json()).type);
    // --- end of the docs/api.md example

    cleanup.users.add(signedIn.user.id);
    assert.equal(me.user.id, signedIn.user.id);
    assert.equal(me.user.email, email);
    assert.deepEqual(logged, [[email, []], ["urn:pms:problem:unauthorized"]]);
    assert.ok(refreshed.session);
    assert.notEqual(refreshed.session.refresh_token, signedIn.session.refresh_token);

    // Both access tokens were unexpired when the sessions ended; the API refuses them now.
    for (const token of [signedIn.session.access_token, refreshed.session.access_token]) {
      const problem = await expectProblem("GET", "/v1/me", await call("GET", "/me", { token }), 401, "unauthorized");
      assert.match(problem.detail, /session has ended/);
    }
    await expectProblem(
      "POST", "/v1/auth/refresh",
      await call("POST", "/auth/refresh", { body: { refreshToken: refreshed.session.refresh_token } }), 401, "invalid-refresh-token",
    );
  }));
