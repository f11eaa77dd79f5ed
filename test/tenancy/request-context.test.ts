// Who may call what, driven by the served OpenAPI document over every operation: the
// token or, on /v1/external, the API key (401), on /v1/webhooks the provider's signature
// (401, whatever else the post carries), the tenant header (400, and 403 to a non-member), the tenant in the path
// (404 to a non-member, like an unknown tenant) and the staff role (403 on every
// "manager" operation, never on a "member" one). Every response is checked against the
// contract, and a refused request leaves the tenant byte-identical. The operations and
// the fixture are test/support/sweep.ts's; that the document has enough of each kind for
// the sweeps to check something is request-context.unit.test.ts's.
import assert from "node:assert/strict";
import { generateKeyPair, SignJWT } from "jose";
import { sleep } from "../../local/capture.ts";
import { call, expectProblem, expectStatus, type HeaderMap, withFixture } from "../support/api.ts";
import { createReservation } from "../support/domain.ts";
import { assertMatchesContract } from "../support/openapi.ts";
import { issueApiKey } from "../support/integration.ts";
import { endSession } from "../support/session.ts";
import { tenantSnapshot } from "../support/snapshot.ts";
import type { Problem } from "../support/stack.ts";
import { bodyOf, fill, type Ids, operations, type Probe, world } from "../support/sweep.ts";
import { stack } from "../support/stack.ts";
import {
  expectInvalidSignature,
  expectReceipt,
  nowSeconds,
  postSendGrid,
  postSmsCallback,
  sendGridEvent,
  sendGridSignature,
  smsCallbackForm,
  smsCallbackUrl,
  smsSignature,
  strangerKey,
} from "../support/webhooks.ts";

Deno.test("every non-public operation answers 401 with WWW-Authenticate: no token, an ended session, a malformed or forged token, or any key that is not a live one; nothing changes", () =>
  withFixture(async (fixture) => {
    const { sql } = fixture;
    const w = await world(fixture);
    // A manager of A: with a live session every one of these requests would be allowed.
    const ended = await fixture.memberOf(w.a, "admin", "ended");
    await endSession(ended);
    const issuedAt = Math.floor(Date.now() / 1000);
    // The owner's own claims, signed by a key Auth never published.
    const forged = await new SignJWT({
      sub: w.a.owner.id, session_id: w.a.owner.sessionId, role: "authenticated", aud: "authenticated",
      email: w.a.owner.email, aal: "aal1", iat: issuedAt, exp: issuedAt + 3600,
    }).setProtectedHeader({ alg: "ES256", typ: "JWT", kid: crypto.randomUUID() })
      .sign((await generateKeyPair("ES256")).privateKey);
    const tokens: Record<string, string | undefined> = {
      "no Authorization header": undefined,
      "an ended session": ended.token,
      "a malformed token": "not-a-token",
      "a token signed with a key Auth does not publish": forged,
    };
    // Keys of A's fixture property that would be allowed were they live.
    const propertyId = w.ids.byCollection.properties!;
    const revoked = await issueApiKey(w.a.ownerClient, propertyId);
    assert.equal((await w.a.ownerClient.delete(`/api-keys/${revoked.id}`)).status, 204);
    const expiresAt = Date.now() + 1000;
    const expired = await issueApiKey(w.a.ownerClient, propertyId, { expiresAt: new Date(expiresAt).toISOString() });
    const keys: Record<string, HeaderMap> = {
      "no key": {},
      "a malformed key": { "x-api-key": "live_nope" },
      "a wrong secret": { "x-api-key": `${w.keys.a.slice(0, 22)}${"A".repeat(43)}` },
      "a revoked key": { "x-api-key": revoked.secret },
      "an expired key": { "x-api-key": expired.secret },
      "a session token as the bearer": { authorization: `Bearer ${w.a.owner.token}` },
    };
    await sleep(Math.max(0, expiresAt - Date.now() + 50));

    const before = await tenantSnapshot(sql, w.a.tenantId);
    const checked = { session: 0, member: 0, manager: 0, integration: 0 };
    for (const probe of w.probes) {
      if (probe.access === "public" || probe.access === "webhook") continue;
      const path = fill(probe.template, w.ids);
      const body = bodyOf(w.bodies, probe);
      const tenantId = probe.scope === "header" ? w.a.tenantId : undefined;
      const attempts = probe.access === "integration"
        ? Object.entries(keys).map(([label, headers]) => [label, { headers, body }] as const)
        : Object.entries(tokens).map(([label, token]) => [label, { token, tenantId, body }] as const);
      for (const [label, options] of attempts) {
        const response = await call(probe.method, path, options);
        const where = `${probe.method} ${probe.template} with ${label}`;
        const problem = await expectProblem(probe.method, probe.template, response, 401, "unauthorized").catch((error) => {
          throw new Error(`${where}: ${error.message}`);
        });
        assert.equal(problem.title, "Unauthorized", where);
        assert.match(response.headers.get("www-authenticate") ?? "", /^Bearer\b/, `${where}: WWW-Authenticate`);
      }
      checked[probe.access]++;
    }
    assert.equal(await tenantSnapshot(sql, w.a.tenantId), before, "tenant A changed");
    const [created] = await sql`select count(*)::int as n from public.tenants where name = ${
      (w.bodies.createTenant as { name: string }).name
    }`;
    assert.equal(created!.n, 0, "a tenant was created without a valid token");
    assert.ok(checked.session >= 4 && checked.member >= 39 && checked.manager >= 16 && checked.integration >= 3, JSON.stringify(checked));
  }));

Deno.test("every header-tenant operation: 400 without or with a malformed x-tenant-id, 403 to a non-member (as to an unknown tenant); nothing changes", () =>
  withFixture(async (fixture) => {
    const { sql } = fixture;
    const w = await world(fixture);
    const owner = w.a.owner;
    const before = await tenantSnapshot(sql, w.a.tenantId);
    const checked = { member: 0, manager: 0 };
    for (const probe of w.probes) {
      if (probe.scope !== "header") continue;
      const { method, template } = probe;
      const path = fill(template, w.ids);
      const body = bodyOf(w.bodies, probe);

      // The owner of A, who may do all of this once the header names the tenant.
      for (const [label, tenantId] of [["no x-tenant-id", undefined], ["x-tenant-id: not-a-uuid", "not-a-uuid"],
        ["x-tenant-id: <uuid>x", `${w.a.tenantId}x`]] as const) {
        const response = await call(method, path, { token: owner.token, tenantId, body });
        const problem = await expectProblem(method, template, response, 400, "validation");
        assert.deepEqual(problem.errors?.map((error) => error.path), ["x-tenant-id"], `${method} ${template} with ${label}`);
      }

      // A user of another tenant naming A: refused before any query, with the body a
      // tenant nobody has gets, so the answer says nothing about A.
      const named = await call(method, path, { token: w.outsider.token, tenantId: w.a.tenantId, body });
      const forbidden = await expectProblem(method, template, named, 403, "forbidden");
      const unknown = await call(method, path, { token: w.outsider.token, tenantId: crypto.randomUUID(), body });
      assert.deepEqual(
        await expectProblem(method, template, unknown, 403, "forbidden"),
        forbidden,
        `${method} ${template}: A and a tenant nobody has answer differently`,
      );
      checked[probe.access as "member" | "manager"]++;
    }
    assert.equal(await tenantSnapshot(sql, w.a.tenantId), before, "tenant A changed");
    assert.ok(checked.member >= 35 && checked.manager >= 12, JSON.stringify(checked));
  }));

Deno.test("every /v1/tenants/{tenantId}/... operation answers a non-member 404, the body an unknown tenant gets; nothing changes", () =>
  withFixture(async (fixture) => {
    const { sql } = fixture;
    const w = await world(fixture);
    const before = await tenantSnapshot(sql, w.a.tenantId);
    const checked = { member: 0, manager: 0 };
    for (const probe of w.probes) {
      if (probe.scope !== "path") continue;
      const { method, template } = probe;
      const body = bodyOf(w.bodies, probe);
      const named = await call(method, fill(template, w.ids), { token: w.outsider.token, body });
      const problem: Problem = await expectProblem(method, template, named, 404, "not-found");

      const nobodys = fill(template, { ...w.ids, tenantId: crypto.randomUUID() });
      const unknown = await call(method, nobodys, { token: w.outsider.token, body });
      assert.deepEqual(
        await expectProblem(method, template, unknown, 404, "not-found"),
        problem,
        `${method} ${template}: A and a tenant nobody has answer differently`,
      );
      checked[probe.access as "member" | "manager"]++;
    }
    assert.equal(await tenantSnapshot(sql, w.a.tenantId), before, "tenant A changed");
    assert.ok(checked.member >= 4 && checked.manager >= 4, JSON.stringify(checked));
  }));

Deno.test("a staff member gets 403 on every manager operation, and the tenant is unchanged", () =>
  withFixture(async (fixture) => {
    const { sql } = fixture;
    const w = await world(fixture);
    // {userId} is the staff member: changeMemberRole is then staff promoting themselves.
    const ids = { ...w.ids, userId: w.staff.id };
    const before = await tenantSnapshot(sql, w.a.tenantId);
    const checked = { header: 0, path: 0 };
    for (const probe of w.probes) {
      if (probe.access !== "manager") continue;
      const { method, template } = probe;
      const response = await call(method, fill(template, ids), {
        token: w.staff.token,
        tenantId: probe.scope === "header" ? w.a.tenantId : undefined,
        body: bodyOf(w.bodies, probe),
      });
      await expectProblem(method, template, response, 403, "forbidden");
      checked[probe.scope as "header" | "path"]++;
    }
    assert.equal(await tenantSnapshot(sql, w.a.tenantId), before, "tenant A changed");
    const [role] = await sql`
      select role::text from public.tenant_memberships where tenant_id = ${w.a.tenantId} and user_id = ${w.staff.id}`;
    assert.equal(role!.role, "staff");
    assert.ok(checked.header >= 12 && checked.path >= 4, JSON.stringify(checked));
  }));

Deno.test("a staff member is never refused a member operation: each one, given a fixture it may act on, succeeds", () =>
  withFixture(async (fixture) => {
    const { sql } = fixture;
    const w = await world(fixture);
    const owner = w.a.ownerClient;
    const { properties: propertyId, units: unitId, guests: guestId, "rate-plans": ratePlanId } = w.ids.byCollection;

    // Each lifecycle step gets a reservation in the status it starts from, so the
    // steps do not use up each other's fixture (nor the one the other operations use).
    const stay = async (checkIn: string, checkOut: string, status: "pending" | "confirmed") =>
      (await createReservation(owner, { propertyId: propertyId!, guestId: guestId! }, {
        unitId, ratePlanId, checkIn, checkOut, status,
      })).id;
    const checkedIn = await stay("2027-04-09", "2027-04-11", "confirmed");
    await expectStatus("POST", "/v1/reservations/{id}/check-in", await owner.post(`/reservations/${checkedIn}/check-in`), 204);
    const reservationFor: Record<string, string> = {
      confirmReservation: await stay("2027-04-01", "2027-04-03", "pending"),
      checkInReservation: await stay("2027-04-05", "2027-04-07", "confirmed"),
      checkOutReservation: checkedIn,
      markNoShow: await stay("2027-04-13", "2027-04-15", "confirmed"),
      cancelReservation: await stay("2027-04-17", "2027-04-19", "confirmed"),
    };
    // Leaving the tenant is the staff member's own removeMember: another staff member
    // does it, so the one probing everything else stays a member.
    const leaver = await fixture.memberOf(w.a, "staff", "leaver");

    const checked = { header: 0, path: 0 };
    for (const probe of w.probes) {
      if (probe.access !== "member") continue;
      const { method, template, operation } = probe;
      const actor = operation.operationId === "removeMember" ? leaver : w.staff;
      const reservation = reservationFor[operation.operationId];
      const ids: Ids = {
        ...w.ids,
        userId: operation.operationId === "removeMember" ? leaver.id : w.ids.userId,
        byCollection: reservation ? { ...w.ids.byCollection, reservations: reservation } : w.ids.byCollection,
      };
      const response = await call(method, fill(template, ids), {
        token: actor.token,
        tenantId: probe.scope === "header" ? w.a.tenantId : undefined,
        body: bodyOf(w.bodies, probe),
      });
      const where = `${method} ${template} as staff -> ${response.status}`;
      const body = await assertMatchesContract(method, template, response);
      assert.ok(![401, 403].includes(response.status), `${where}: refused: ${JSON.stringify(body)}`);
      assert.ok(response.status >= 200 && response.status < 300, `${where}: ${JSON.stringify(body)}`);
      checked[probe.scope as "header" | "path"]++;
    }
    assert.ok(checked.header >= 35 && checked.path >= 4, JSON.stringify(checked));

    // The steps took effect as the staff member asked.
    const statuses = await sql`
      select id::text, status::text from public.reservations where id = any(${Object.values(reservationFor)}::uuid[])`;
    assert.deepEqual(
      Object.fromEntries(statuses.map((row) => [row.id, row.status])),
      {
        [reservationFor.confirmReservation!]: "confirmed",
        [reservationFor.checkInReservation!]: "checked_in",
        [reservationFor.checkOutReservation!]: "checked_out",
        [reservationFor.markNoShow!]: "no_show",
        [reservationFor.cancelReservation!]: "cancelled",
      },
    );
    const left = await sql`select 1 from public.tenant_memberships where tenant_id = ${w.a.tenantId} and user_id = ${leaver.id}`;
    assert.equal(left.length, 0, "the leaver is still a member");
  }));

Deno.test("every webhook answers 401 without the provider's signature, with a session token or an API key, or signed with another key; nothing changes; signed right, the same post is recorded", () =>
  withFixture(async (fixture) => {
    const { sql } = fixture;
    const w = await world(fixture);
    // A's door code notification, as if the worker had sent it by both providers: a report
    // the webhook could match, were it signed right.
    const notificationId = w.ids.byCollection.notifications!;
    const messageSid = `SM${crypto.randomUUID().replaceAll("-", "")}`;
    await sql`update public.notifications set status = 'sent', sent_at = now(), provider_message_id = 'sweepMessageId00000000',
                                              recipient_address = 'sweep@guest.example'
              where id = ${notificationId}`;
    const credentials: Record<string, Record<string, string>> = {
      "a session token": { authorization: `Bearer ${w.a.owner.token}` },
      "an API key": { "x-api-key": w.keys.a },
    };
    const stranger = await strangerKey();
    const event = sendGridEvent(
      { notificationId, tenantId: w.a.tenantId, messageId: "sweepMessageId00000000", email: "sweep@guest.example" },
      { event: "delivered", response: "250 OK" },
    );
    const body = JSON.stringify([event]);
    const url = smsCallbackUrl(w.a.tenantId, notificationId);
    const form = smsCallbackForm(messageSid, "delivered");
    // Each webhook's refusals, then the post it takes.
    const posts: Record<string, { refused: [string, Promise<Response>][]; accepted: () => Promise<Response> }> = {
      receiveSendGridEvents: {
        refused: [
          ["no signature", postSendGrid([event], { signature: null })],
          ...Object.entries(credentials).map(([label, headers]) =>
            [label, fetch(`${stack.v1}/webhooks/sendgrid`, {
              method: "POST", body,
              headers: { "content-type": "application/json", "x-twilio-email-event-webhook-timestamp": String(nowSeconds()), ...headers },
            })] as [string, Promise<Response>]
          ),
          ["another key's signature", (async () => {
            const now = String(nowSeconds());
            return await postSendGrid([event], { timestamp: now, signature: sendGridSignature(now, body, stranger) });
          })()],
        ],
        accepted: () => postSendGrid([event]),
      },
      receiveSmsStatus: {
        refused: [
          ["no signature", postSmsCallback(url, form, { signature: null })],
          ...Object.entries(credentials).map(([label, headers]) =>
            [label, fetch(url, {
              method: "POST", body: new URLSearchParams(form).toString(),
              headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
            })] as [string, Promise<Response>]
          ),
          ["another auth token's signature", postSmsCallback(url, form, { signature: smsSignature(url, form, "not-the-token") })],
        ],
        accepted: () => postSmsCallback(url, form),
      },
    };

    const before = await tenantSnapshot(sql, w.a.tenantId);
    let checked = 0;
    for (const probe of w.probes) {
      if (probe.access !== "webhook") continue;
      const poster = posts[probe.operation.operationId];
      assert.ok(poster, `${probe.template}: teach this sweep how its provider posts`);
      for (const [label, pending] of poster.refused) {
        const response = await pending;
        const where = `${probe.method} ${probe.template} with ${label}`;
        const bytes = await response.arrayBuffer();
        const read = new Response(bytes, { status: response.status, headers: response.headers });
        await expectInvalidSignature(read, probe.template).catch((error) => {
          throw new Error(`${where}: ${error.message}`);
        });
        assert.match(response.headers.get("www-authenticate") ?? "", /^Signature\b/, `${where}: WWW-Authenticate`);
      }
      checked++;
    }
    assert.equal(checked, 2, "both webhooks were swept");
    assert.equal(await tenantSnapshot(sql, w.a.tenantId), before, "tenant A changed");

    // The controls: the same reports, signed as the providers sign, are recorded.
    await expectReceipt(await posts.receiveSendGridEvents!.accepted(), { received: 1, recorded: 1 });
    // Signed right, the callback is read; it is about no SMS this service sent (the
    // notification went by email), so it is unmatched.
    await expectReceipt(await posts.receiveSmsStatus!.accepted(), { received: 1, unmatched: 1 }, "/v1/webhooks/sms");
    assert.notEqual(await tenantSnapshot(sql, w.a.tenantId), before, "the signed report was recorded");
  }));
