// What a GET handler's `Reads` (src/db/reads.ts) may and may not rely on, asserted on the
// stack's database through the request scope that makes them: each statement runs in a
// transaction of its own with the request's context (src/db/pipelined-transactions.ts).
// Beside each read, the same work in a write's transaction (scope.run), for the contrast.
// The admin connection is a second connection, so what happens between two statements
// of one read happens at a chosen point, not by timing.
import assert from "node:assert/strict";
import { sql, type Transaction } from "kysely";
import { createAccessTokenVerifier } from "../../src/auth/access-token.ts";
import { createDb, type DB } from "../../src/db/database.ts";
import { createPool } from "../../src/db/pool.ts";
import type { Reads } from "../../src/db/reads.ts";
import { createRequestScope } from "../../src/tenancy/request-scope.ts";
import type { Credentials, RequestScope, TenantRole } from "../../src/http/request-scope.ts";
import { client, createTenantAs, type Fixture, withFixture } from "../support/api.ts";
import { createProperty } from "../support/domain.ts";
import { stack } from "../support/stack.ts";

// Never called: the compiler checks that a read has nothing to write with.
// deno-lint-ignore no-unused-vars
function readsCannotWrite(reads: Reads, transaction: Transaction<DB>) {
  // @ts-expect-error no insertInto
  reads.insertInto("properties");
  // @ts-expect-error no updateTable
  reads.updateTable("properties");
  // @ts-expect-error no deleteFrom
  reads.deleteFrom("properties");
  // @ts-expect-error no mergeInto
  reads.mergeInto("properties");
  // @ts-expect-error no `with`, whose query creator writes too
  reads.with("written", (creator) => creator.deleteFrom("properties").returning("id"));
  // @ts-expect-error and no transaction to open one in
  reads.transaction();
  // @ts-expect-error a Reads is no transaction
  const asTransaction: Transaction<DB> = reads;
  // A transaction is a Reads: a write calls the queries a read calls.
  const asReads: Reads = transaction;
  return [asTransaction, asReads];
}

type World = {
  credentials: Credentials;
  ownerId: string;
  tenantId: string;
  propertyId: string;
  // A property of another tenant of the same owner.
  otherPropertyId: string;
  scope: RequestScope;
  fixture: Fixture;
};

const asOwner = (role: TenantRole | null) => assert.equal(role, "owner");

async function withWorld(work: (world: World) => Promise<void>): Promise<void> {
  await withFixture(async (fixture) => {
    const a = await fixture.tenant("reads");
    const b = await createTenantAs(a.owner, "reads, the other");
    fixture.cleanup.tenants.add(b.tenantId);
    const property = await createProperty(a.ownerClient);
    const otherProperty = await createProperty(client(a.owner, b.tenantId));
    const db = createDb(createPool(stack.dbUrl, { max: 1, generatedTypes: true }));
    try {
      const scope = createRequestScope({
        db,
        verify: createAccessTokenVerifier({ jwksUrl: `${stack.authUrl}/.well-known/jwks.json`, now: () => Date.now() }),
      });
      const credentials = await scope.authenticate(
        new Request(stack.v1, { headers: { authorization: `Bearer ${a.owner.token}` } }),
      );
      await work({
        credentials, ownerId: a.owner.id, tenantId: a.tenantId, propertyId: property.id, otherPropertyId: otherProperty.id,
        scope, fixture,
      });
    } finally {
      await db.destroy();
    }
  });
}

const context = sql<{ tenant: string; role: string; uid: string; xid: string; isolation: string }>`
  select current_setting('app.tenant_id') as tenant, current_user as role, auth.uid()::text as uid,
         txid_current()::text as xid, current_setting('transaction_isolation') as isolation`;

async function nameOf(db: Reads, id: string): Promise<string | undefined> {
  return (await db.selectFrom("properties").select("name").where("id", "=", id).executeTakeFirst())?.name;
}

async function adminName(world: World): Promise<string> {
  const [row] = await world.fixture.sql`select name from public.properties where id = ${world.propertyId}`;
  return row!.name;
}

Deno.test("what a read may rely on, and what it may not", (t) =>
  withWorld(async (world) => {
    const { scope, credentials, tenantId } = world;
    const admin = world.fixture.sql;
    const read = <T>(work: (db: Reads) => Promise<T>) => scope.read(credentials, tenantId, ({ db }) => work(db), asOwner);
    const write = <T>(work: (db: Transaction<DB>) => Promise<T>) =>
      scope.run(credentials, tenantId, ({ db }, role) => {
        asOwner(role);
        return work(db);
      });

    await t.step("every statement carries the request's context, and is a transaction of its own", async () => {
      // The tenant, the role RLS applies to and the caller's claims; RLS then shows the
      // tenant's rows and no other tenant's, though the caller owns both.
      await read(async (db) => {
        const { rows: [first] } = await context.execute(db);
        const { rows: [second] } = await context.execute(db);
        for (const statement of [first!, second!]) {
          assert.equal(statement.tenant, tenantId);
          assert.equal(statement.role, "authenticated");
          assert.equal(statement.uid, world.ownerId);
          assert.equal(statement.isolation, "read committed");
        }
        assert.notEqual(first!.xid, second!.xid, "two statements, two transactions");
        const visible = (await db.selectFrom("properties").select("id").execute()).map(({ id }) => id);
        assert.deepEqual(visible, [world.propertyId]);
        assert.equal(await nameOf(db, world.otherPropertyId), undefined, "the other tenant's property is not there");
      });
      await write(async (db) => {
        const { rows: [first] } = await context.execute(db);
        const { rows: [second] } = await context.execute(db);
        assert.equal(first!.xid, second!.xid, "a write's statements share one transaction");
      });
    });

    await t.step("a write committed between two statements is seen by the second, as in one read committed transaction", async () => {
      for (const [label, run] of [["a read", read], ["a write's transaction", write]] as const) {
        await run(async (db) => {
          const before = await nameOf(db, world.propertyId);
          const renamed = `${before} (renamed while ${label} ran)`;
          await admin`update public.properties set name = ${renamed} where id = ${world.propertyId}`;
          assert.equal(await nameOf(db, world.propertyId), renamed, label);
        });
      }
    });

    await t.step("a row lock ends with its statement: another connection takes it before the read's next one", async () => {
      const lockedElsewhere = () => admin`select id from public.properties where id = ${world.propertyId} for update nowait`;
      await read(async (db) => {
        await db.selectFrom("properties").select("id").where("id", "=", world.propertyId).forUpdate().execute();
        await lockedElsewhere();
        await nameOf(db, world.propertyId);
      });
      // In a write's transaction it is held to the end.
      await write(async (db) => {
        await db.selectFrom("properties").select("id").where("id", "=", world.propertyId).forUpdate().execute();
        await assert.rejects(lockedElsewhere(), (error: { code?: string }) => error.code === "55P03");
      });
    });

    await t.step("now() is each statement's own, and a setting made by one statement is gone by the next", async () => {
      // The context, sent again with each statement, is there every time (above).
      const clock = sql<{ at: string; note: string | null }>`
        select now()::text as at, current_setting('app.note', true) as note`;
      const note = sql`select set_config('app.note', 'set by an earlier statement', true), pg_sleep(0.002)`;
      await read(async (db) => {
        const { rows: [first] } = await clock.execute(db);
        await note.execute(db);
        const { rows: [second] } = await clock.execute(db);
        assert.ok(Date.parse(second!.at) > Date.parse(first!.at), `${second!.at} after ${first!.at}`);
        assert.equal(second!.note ?? "", "");
      });
      await write(async (db) => {
        const { rows: [first] } = await clock.execute(db);
        await note.execute(db);
        const { rows: [second] } = await clock.execute(db);
        assert.equal(second!.at, first!.at, "one transaction, one now()");
        assert.equal(second!.note, "set by an earlier statement");
      });
    });

    await t.step("a write sent through a read anyway commits on its own: the read failing after it does not undo it", async () => {
      // Why Reads has no writes. This one goes through an `sql` template, which the
      // compiler cannot read; the same in a write's transaction is rolled back with it.
      const rename = (db: Reads, name: string) =>
        sql`update public.properties set name = ${name} where id = ${world.propertyId}`.execute(db);
      await assert.rejects(read(async (db) => {
        await rename(db, "written through a read");
        throw new Error("the read failed after it");
      }), /the read failed after it/);
      assert.equal(await adminName(world), "written through a read");
      await assert.rejects(write(async (db) => {
        await rename(db, "written in a failed write");
        throw new Error("the write failed after it");
      }), /the write failed after it/);
      assert.equal(await adminName(world), "written through a read");
    });
  }));
