// GET /v1/push/public-key: the VAPID public key a browser subscribes with, to any signed-in
// user, outside any tenant. Through the gateway it answers what the stack's api function is
// configured with (404 push-not-configured while the stack sets no VAPID_PUBLIC_KEY); the
// app built in this process, on the stack's Auth and database, shows both answers and the
// refusal of loopback endpoints where the deployment does not allow them.
import assert from "node:assert/strict";
import { client, expectProblem, expectStatus, type Schemas, withFixture } from "../support/api.ts";
import { apiWithAuthAt } from "../support/auth-process.ts";
import { assertMatchesContract } from "../support/openapi.ts";
import { base64url, browserSubscription, p256PublicKey, PUSH_PUBLIC_KEY, PUSH_SUBSCRIPTIONS } from "../support/push.ts";
import { functionsDatabase, stack } from "../support/stack.ts";

Deno.test("GET /v1/push/public-key through the gateway: what the stack's api function is configured with, for any signed-in user, no tenant needed", () =>
  withFixture(async ({ tenant, user }) => {
    const t = await tenant("push-key");
    const loner = client(await user("push-key-loner"));
    const configured = stack.vapidPublicKey;
    for (const api of [loner, t.ownerClient]) {
      const response = await api.get("/push/public-key");
      if (configured === null) {
        const problem = await expectProblem("GET", PUSH_PUBLIC_KEY, response, 404, "push-not-configured");
        assert.match(problem.detail, /no VAPID key/);
      } else {
        const body = await expectStatus<Schemas["PushPublicKey"]>("GET", PUSH_PUBLIC_KEY, response, 200);
        assert.deepEqual(body, { publicKey: configured.replace(/=+$/, "") });
      }
    }
    await expectProblem("GET", PUSH_PUBLIC_KEY, await loner.get("/push/public-key?tenant=1"), 400, "validation");
  }));

Deno.test("the api function with a VAPID key answers it; without loopback endpoints allowed, an endpoint on this machine is a 422 and nothing is stored", () =>
  withFixture(async ({ sql, tenant }) => {
    const t = await tenant("push-key-in-process");
    const publicKey = base64url(await p256PublicKey());
    const api = apiWithAuthAt(stack.authUrl, {}, functionsDatabase(), { vapidPublicKey: publicKey, allowLoopbackPushEndpoints: false });
    try {
      const send = (method: string, path: string, body?: unknown) =>
        api.handle(new Request(`http://function/api/v1${path}`, {
          method,
          headers: {
            authorization: `Bearer ${t.owner.token}`, "x-tenant-id": t.tenantId,
            ...(body === undefined ? {} : { "content-type": "application/json" }),
          },
          body: body === undefined ? undefined : JSON.stringify(body),
        }));
      const key = await send("GET", "/push/public-key");
      assert.deepEqual(await assertMatchesContract("GET", PUSH_PUBLIC_KEY, key), { publicKey });
      assert.equal(key.status, 200);

      for (const endpoint of ["http://127.0.0.1:9/push/1", "https://localhost/push/1"]) {
        const refused = await send("POST", "/push/subscriptions", await browserSubscription({ endpoint }));
        const problem = await assertMatchesContract("POST", PUSH_SUBSCRIPTIONS, refused) as Schemas["Problem"];
        assert.equal(refused.status, 422, JSON.stringify(problem));
        assert.equal(problem.type, "urn:pms:problem:unprocessable");
        assert.deepEqual(problem.errors?.map((error) => error.path), ["endpoint"]);
      }
      const [count] = await sql<{ count: number }[]>`
        select count(*)::int as count from public.push_subscriptions where tenant_id = ${t.tenantId}`;
      assert.equal(count!.count, 0, "nothing was stored");
      const taken = await send("POST", "/push/subscriptions", await browserSubscription());
      await assertMatchesContract("POST", PUSH_SUBSCRIPTIONS, taken);
      assert.equal(taken.status, 201, "a push service's endpoint is taken");
    } finally {
      await api.close();
    }
  }));
