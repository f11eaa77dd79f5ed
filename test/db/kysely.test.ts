// Kysely over the pool against the database: typed queries read values as typed. The
// types themselves and the refusal of a pool without the generated types are
// kysely.unit.test.ts's.
import assert from "node:assert/strict";
import { createDb } from "../../src/db/database.ts";
import { createPool } from "../../src/db/pool.ts";
import { stack } from "../support/stack.ts";

Deno.test("a typed Kysely query runs against the database and reads values as typed", async () => {
  const db = createDb(createPool(stack.dbUrl, { max: 1, generatedTypes: true }));
  try {
    const none = await db.selectFrom("tenants").select(["id", "name"]).where("id", "=", crypto.randomUUID()).execute();
    assert.deepEqual(none, []);

    // Rolled back, so the database is left as it was found.
    const trx = await db.startTransaction().execute();
    try {
      const tenant = await trx.insertInto("tenants").values({ name: "Kysely test tenant" })
        .returning(["id", "created_at"]).executeTakeFirstOrThrow();
      const property = await trx.insertInto("properties")
        .values({ tenant_id: tenant.id, name: "Harbour House", timezone: "Europe/Lisbon", currency: "EUR" })
        .returning("id").executeTakeFirstOrThrow();
      await trx.insertInto("rate_plans").values({
        tenant_id: tenant.id,
        property_id: property.id,
        name: "Standard",
        code: "STD",
        currency: "EUR",
        nightly_price: 12_345,
      }).execute();

      const rows = await trx.selectFrom("rate_plans")
        .innerJoin("properties", (join) =>
          join.onRef("properties.tenant_id", "=", "rate_plans.tenant_id").onRef("properties.id", "=", "rate_plans.property_id"))
        .select(["rate_plans.nightly_price", "rate_plans.min_stay", "rate_plans.created_at", "properties.check_in_time"])
        .where("rate_plans.tenant_id", "=", tenant.id)
        .execute();
      assert.equal(rows.length, 1);
      const [plan] = rows;
      assert.equal(plan?.nightly_price, 12_345);
      assert.equal(plan?.min_stay, 1);
      assert.equal(plan?.check_in_time, "15:00:00");
      assert.equal(typeof plan?.created_at, "string");
      assert.equal(typeof tenant.created_at, "string");
      assert.ok(!Number.isNaN(Date.parse(tenant.created_at)), `created_at ${tenant.created_at} is not a timestamp`);
    } finally {
      await trx.rollback().execute();
    }

    const after = await db.selectFrom("tenants").select("id").where("name", "=", "Kysely test tenant").execute();
    assert.deepEqual(after, []);
  } finally {
    await db.destroy();
  }
});
