// Every route that takes an id, driven by the served OpenAPI document: a member of
// tenant B naming tenant A's ids gets the 404 an unknown id gets, and so does a
// malformed id; A's data is byte-identical afterwards. A new id route without an
// entry below fails the test.
import assert from "node:assert/strict";
import { call, MALFORMED_ID, representation, withFixture } from "../support/api.ts";
import { assertMatchesContract } from "../support/openapi.ts";
import { tenantSnapshot } from "../support/snapshot.ts";
import { stack } from "../support/stack.ts";

type Operation = { operationId: string; requestBody?: unknown; "x-access": string };
type Document = { paths: Record<string, Record<string, Operation>> };

// A valid body per operation, so that the refusal cannot be a 400 about the body.
const bodies: Record<string, unknown> = {
  updateTenant: { name: "Taken over" },
  addMember: { email: "someone@example.com", role: "staff" },
  changeMemberRole: { role: "admin" },
  updateProperty: { city: "Elsewhere" },
  updateUnit: { name: "Moved" },
  updateRatePlan: { name: "Cheaper" },
  updateGuest: { notes: "changed" },
  updateReservation: { notes: "changed" },
  cancelReservation: { reason: "not yours" },
  recordPayment: { amount: 100, method: "cash" },
  createPaymentLink: {},
  createAccessCode: {},
  updateTask: { title: "changed" },
  setNotificationPreference: { templateKey: "checkin_reminder", channel: "email", enabled: false },
  changeTaskStatus: { status: "cancelled" },
};

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

Deno.test("tenant B's member gets 404 for each of tenant A's ids, on every id route, and A is unchanged", () =>
  withFixture(async ({ sql, tenant }) => {
    const a = await tenant("victim");
    const b = await tenant("prober");
    const owner = a.ownerClient;
    const made = async (path: string, body: unknown) => {
      const response = await owner.post(path, body, representation);
      const created = await response.json() as { id: string };
      assert.equal(response.status, 201, `${path}: ${JSON.stringify(created)}`);
      return created.id;
    };
    const property = await made("/properties", { name: "Victim House", timezone: "Europe/Lisbon", currency: "EUR" });
    const unit = await made("/units", { propertyId: property, name: "V1", type: "room", capacity: 2 });
    const ratePlan = await made("/rate-plans", {
      propertyId: property, name: "Rack", code: "RACK", currency: "EUR", nightlyPrice: 9000,
    });
    const guest = await made("/guests", { firstName: "Vic", lastName: "Tim", email: "vic@example.com" });
    const reservation = await made("/reservations", {
      propertyId: property, unitId: unit, guestId: guest, ratePlanId: ratePlan,
      checkIn: "2027-03-01", checkOut: "2027-03-03", status: "confirmed",
    });
    const payment = await made(`/reservations/${reservation}/payments`, { amount: 1000, method: "card" });
    const paymentLink = await made(`/reservations/${reservation}/payment-link`, {});
    const accessCode = await made(`/reservations/${reservation}/access-codes`, {});
    const task = await made("/tasks", { propertyId: property, unitId: unit, type: "maintenance", title: "Fix the tap" });
    // The door code's delivery, enqueued by the database.
    const notices = await (await owner.get(`/notifications?reservationId=${reservation}`)).json() as { data: { id: string }[] };
    const notification = notices.data[0]!.id;

    const idsByCollection: Record<string, string> = {
      properties: property, units: unit, "rate-plans": ratePlan, guests: guest, reservations: reservation,
      payments: payment, "payment-links": paymentLink, tasks: task, notifications: notification,
    };
    const fill = (template: string) =>
      template.replace(/\/([a-z-]+)\/\{id\}/, (_, collection: string) => {
        const id = idsByCollection[collection];
        assert.ok(id, `no fixture for /${collection}/{id}: add one to this test`);
        return `/${collection}/${id}`;
      }).replace("{codeId}", accessCode).replace("{tenantId}", a.tenantId).replace("{userId}", a.owner.id);

    const document = await (await fetch(`${stack.v1}/openapi.json`)).json() as Document;
    const before = await tenantSnapshot(sql, a.tenantId);
    let checked = 0;
    for (const [template, operations] of Object.entries(document.paths)) {
      if (!template.includes("{")) continue;
      for (const [method, operation] of Object.entries(operations)) {
        if (operation["x-access"] === "public") continue;
        if (operation.requestBody !== undefined) {
          assert.ok(operation.operationId in bodies, `no body for ${operation.operationId}: add one to this test`);
        }
        const upper = method.toUpperCase();
        const body = bodies[operation.operationId];
        const path = fill(template).replace(/^\/v1/, "");
        const probe = await call(upper, path, { token: b.owner.token, tenantId: b.tenantId, body });
        const problem = await assertMatchesContract(upper, template, probe);
        assert.equal(probe.status, 404, `${upper} ${template} as tenant B: ${JSON.stringify(problem)}`);

        // The same route with ids nobody has answers with the same body.
        const unknown = await call(upper, path.replace(UUID, () => crypto.randomUUID()), {
          token: b.owner.token, tenantId: b.tenantId, body,
        });
        assert.equal(unknown.status, 404);
        assert.deepEqual(await unknown.json(), problem, `${upper} ${template}: another tenant's id and an unknown id differ`);

        // The last id malformed answers the same again.
        const ids = path.match(UUID) ?? [];
        const last = ids[ids.length - 1]!;
        const at = path.lastIndexOf(last);
        const malformedPath = `${path.slice(0, at)}${MALFORMED_ID}${path.slice(at + last.length)}`;
        const malformed = await call(upper, malformedPath, { token: b.owner.token, tenantId: b.tenantId, body });
        assert.equal(malformed.status, 404, `${upper} ${malformedPath}`);
        assert.deepEqual(await malformed.json(), problem, `${upper} ${template}: a malformed id and an unknown id differ`);
        checked++;
      }
    }
    assert.equal(await tenantSnapshot(sql, a.tenantId), before, "tenant A changed");
    assert.ok(checked >= 40, `only ${checked} id routes were checked`);
  }));
