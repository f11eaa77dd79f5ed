// A request that would run long is cut by its role's statement_timeout
// (supabase/migrations/20261124000200_statement_timeouts.sql) and answers 503 with the
// reason, instead of holding its connection; nothing of it is saved. The wait here is a
// row lock another session holds, so the test controls how long "long" is.
import assert from "node:assert/strict";
import { expectProblem, withFixture } from "../support/api.ts";
import { createStay, readReservation } from "../support/domain.ts";
import { adminSql } from "../support/session.ts";

Deno.test("a PATCH that waits past the role's statement_timeout answers 503 with the reason, and the reservation is unchanged", () =>
  withFixture(async ({ tenant, sql }) => {
    const { ownerClient: api } = await tenant("statement-timeout");
    const stay = await createStay(api);
    const id = stay.reservation.id;
    const before = await readReservation(api, id);
    const [limit] = await sql<{ configured: string }[]>`select private.role_statement_timeout('authenticated') as configured`;
    assert.equal(limit?.configured, "8s", "the migration's limit for authenticated");

    // A shorter limit for the test, set the way an operator sets one; the next request follows it.
    await sql`alter role authenticated set statement_timeout = '1s'`;
    const locker = adminSql();
    try {
      await locker.begin(async (tx) => {
        await tx`select id from public.reservations where id = ${id} for update`;
        const started = performance.now();
        const response = await api.patch(`/reservations/${id}`, { notes: "never saved" });
        const elapsed = performance.now() - started;
        const problem = await expectProblem("PATCH", "/v1/reservations/{id}", response, 503, "service-unavailable");
        assert.match(problem.detail ?? "", /statement timeout/);
        assert.match(response.headers.get("retry-after") ?? "", /^\d+$/);
        assert.ok(elapsed >= 900 && elapsed < 5_000, `cut after the 1 s limit, not held: ${Math.round(elapsed)} ms`);
      });
    } finally {
      await sql`alter role authenticated set statement_timeout = '8s'`;
      await locker.end();
    }
    const after = await readReservation(api, id);
    assert.equal(after.body.notes, before.body.notes, "nothing of the cut request was saved");
    assert.equal(after.etag, before.etag);
  }));
