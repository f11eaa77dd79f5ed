// GET /v1/me through the gateway: the signed-in user's profile and every tenant they
// belong to, checked against the served OpenAPI document.
import assert from "node:assert/strict";
import { addMember, client, expectStatus, type Schemas, withFixture } from "../support/api.ts";

const ME = "/v1/me";

type Me = Schemas["Me"];

Deno.test("GET /v1/me: 200, the user's profile and each membership with its role and tenant name", () =>
  withFixture(async ({ tenant }) => {
    // Labels that sort: the memberships come by tenant name.
    const first = await tenant("me-first");
    const second = await tenant("me-second");
    const alice = first.owner;
    await addMember(second.ownerClient, alice, "staff");

    const me = await expectStatus<Me>("GET", ME, await client(alice).get("/me"), 200);

    assert.deepEqual({ ...me.user, createdAt: undefined }, {
      id: alice.id, email: alice.email, fullName: "me-first-owner", createdAt: undefined,
    });
    assert.ok(!Number.isNaN(Date.parse(me.user.createdAt)), `createdAt ${me.user.createdAt} is a timestamp`);
    assert.deepEqual(me.memberships, [
      { tenantId: first.tenantId, name: first.name, role: "owner" },
      { tenantId: second.tenantId, name: second.name, role: "staff" },
    ]);
  }));

Deno.test("GET /v1/me for a user in no tenant: 200 and no memberships", () =>
  withFixture(async ({ user }) => {
    const loner = await user("me-loner");

    const me = await expectStatus<Me>("GET", ME, await client(loner).get("/me"), 200);

    assert.equal(me.user.id, loner.id);
    assert.equal(me.user.email, loner.email);
    assert.deepEqual(me.memberships, []);
  }));
