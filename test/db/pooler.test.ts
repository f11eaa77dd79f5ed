// The functions' way to the database: PgBouncer in transaction mode (scripts/stack.sh),
// as Supavisor's port 6543 is on a hosted project (docs/database-connection.md). There a server
// connection is a client's for one transaction only, and the next transaction may be
// another client's on the same server connection. These tests prove, through the stack's
// PgBouncer, that the functions really come that way and that nothing the API or the
// worker relies on is session-bound; each would fail if it were. The pooler's small
// entries force the reuse: `one_server` gives every client the same server connection,
// `two_servers` hands two between many clients, `two_servers_broken` two more to the
// control that shows what fails there.
import assert from "node:assert/strict";
import { CompiledQuery, type Kysely, sql } from "kysely";
import postgres from "postgres";
import { presentedKey } from "../../src/api-keys/secret.ts";
import { createAccessTokenVerifier } from "../../src/auth/access-token.ts";
import { createDb, type DB } from "../../src/db/database.ts";
import { eachStatementAfter } from "../../src/db/pipelined-transactions.ts";
import { createPool, type PoolMode } from "../../src/db/pool.ts";
import { createIntegrationScope } from "../../src/external/integration-scope.ts";
import { createRequestScope } from "../../src/tenancy/request-scope.ts";
import { call, client, createTenantAs, type Fixture, type TenantFixture, withFixture } from "../support/api.ts";
import { apiWithAuthAt } from "../support/auth-process.ts";
import { createGuest, createProperty } from "../support/domain.ts";
import { issueApiKey } from "../support/integration.ts";
import { runWorker } from "../support/notifications.ts";
import { poolerConsole, type PoolerRow } from "../support/pooler.ts";
import { stack } from "../support/stack.ts";

type PoolerDatabase = "postgres" | "one_server" | "two_servers" | "two_servers_broken";

function poolerUrl(database: PoolerDatabase): string {
  const url = new URL(stack.poolerUrl);
  url.pathname = `/${database}`;
  return url.href;
}

function show(what: "clients" | "servers" | "pools"): Promise<PoolerRow[]> {
  return poolerConsole(`show ${what}`);
}

// The functions' Kysely, on one connection to an entry of the pooler.
function kysely(database: PoolerDatabase): Kysely<DB> {
  return createDb(createPool(poolerUrl(database), { max: 1, generatedTypes: true, mode: "transaction" }));
}

// A bare postgres.js client on the same entry: another client of the pooler.
function otherClient(database: PoolerDatabase): postgres.Sql {
  return postgres(poolerUrl(database), { max: 1, prepare: false, onnotice: () => {} });
}

// The application_name each function connects with.
const FUNCTION_NAMES = ["pms-api", "pms-notifications-worker"];

Deno.test("the functions reach Postgres through PgBouncer in transaction mode, and never directly", () =>
  withFixture(async (fixture) => {
    // Work for both functions' pools: a write and a read of the api, one run of the worker.
    const tenant = await fixture.tenant("pooler-path");
    await createProperty(tenant.ownerClient);
    const list = await tenant.ownerClient.get("/properties");
    assert.equal(list.status, 200);
    await runWorker();

    const [pools, clients, servers] = [await show("pools"), await show("clients"), await show("servers")];
    assert.equal(pools.find((pool) => pool.database === "postgres")?.pool_mode, "transaction");
    // Each function's pool is a client of PgBouncer's `postgres` entry, under the
    // application_name it connects with.
    for (const name of FUNCTION_NAMES) {
      const theirs = clients.filter((row) => row.database === "postgres" && row.application_name === name);
      assert.ok(theirs.length > 0, `${name} is a client of PgBouncer: ${JSON.stringify(clients.map((row) => row.application_name))}`);
    }
    // And no backend is a function's own: every backend that carries a function's name
    // (a direct connection keeps it for its 30 s of idleness; PgBouncer gives it to the
    // server connection a function's client is using) has a pid PgBouncer lists among
    // its servers.
    const backends = await fixture.sql<{ pid: number; name: string }[]>`
      select pid, application_name as name from pg_stat_activity where application_name = any(${FUNCTION_NAMES})`;
    assert.ok(backends.length > 0, "the functions' work reached Postgres under their names");
    const serverPids = new Set(servers.map((server) => Number(server.remote_pid)));
    assert.deepEqual(backends.filter((backend) => !serverPids.has(backend.pid)), [], "every such backend is PgBouncer's: no direct connection");
  }));

type World = { tenant: TenantFixture & { token: string }; propertyId: string; guestId: string };

// Tenants of three owners, two each, with a property and a guest in every one.
async function worlds(fixture: Fixture): Promise<World[]> {
  const made: World[] = [];
  for (let owner = 0; owner < 3; owner++) {
    const first = await fixture.tenant(`pooler-${owner}`);
    const second = await createTenantAs(first.owner, `pooler ${owner}, the second`);
    fixture.cleanup.tenants.add(second.tenantId);
    for (const tenant of [first, second]) {
      const api = client(tenant.owner, tenant.tenantId);
      const property = await createProperty(api);
      const guest = await createGuest(api);
      made.push({ tenant: { ...tenant, token: tenant.owner.token }, propertyId: property.id, guestId: guest.id });
    }
  }
  return made;
}

type Send = (method: string, path: string, token: string, tenantId: string, body?: unknown) => Promise<Response>;

// Rounds of reads and writes for every tenant at once, each tenant's requests between
// the others': every answer is its own tenant's, and what a write creates lands in it.
async function interleavedTenants(fixture: Fixture, send: Send, rounds: number): Promise<number> {
  const all = await worlds(fixture);
  const created: { tenantId: string; guestId: string }[] = [];
  const requests = [];
  for (let round = 0; round < rounds; round++) {
    for (const [index, world] of all.entries()) {
      const { token, tenantId } = world.tenant;
      const stranger = all[(index + 1) % all.length]!;
      requests.push(
        send("GET", "/properties", token, tenantId).then(async (response) => {
          assert.equal(response.status, 200);
          const page = await response.json() as { data: { id: string }[] };
          assert.deepEqual(page.data.map((property) => property.id), [world.propertyId], `tenant ${tenantId} lists its own property only`);
        }),
        send("GET", `/guests/${world.guestId}`, token, tenantId).then(async (response) => {
          assert.equal(response.status, 200);
          assert.equal((await response.json() as { id: string }).id, world.guestId);
        }),
        // Another tenant's guest, by its id: not found, whoever used the server connection last.
        send("GET", `/guests/${stranger.guestId}`, token, tenantId).then(async (response) => {
          assert.equal(response.status, 404, `tenant ${tenantId} must not see ${stranger.tenant.tenantId}'s guest`);
          await response.body?.cancel();
        }),
        send("POST", "/guests", token, tenantId, { firstName: "Pool", lastName: `Round ${round}` }).then(async (response) => {
          // A create without Prefer: 201, the new guest's id and where it is.
          assert.equal(response.status, 201, await response.clone().text());
          const location = response.headers.get("location") ?? "";
          const guestId = location.slice(location.lastIndexOf("/") + 1);
          assert.deepEqual(await response.json(), { id: guestId });
          created.push({ tenantId, guestId });
        }),
      );
    }
  }
  // Every request ends before anything is judged, so none is left running into the cleanup.
  const failed = (await Promise.allSettled(requests)).filter((result) => result.status === "rejected");
  assert.deepEqual(failed.map((result) => String(result.reason)), []);
  const rows = await fixture.sql<{ id: string; tenant_id: string }[]>`
    select id, tenant_id from public.guests where id = any(${created.map((row) => row.guestId)}::uuid[])`;
  const landed = new Map(rows.map((row) => [row.id, row.tenant_id]));
  for (const { tenantId, guestId } of created) assert.equal(landed.get(guestId), tenantId, `guest ${guestId} landed in its request's tenant`);
  return requests.length;
}

Deno.test("many tenants' requests at once through the api function each see and write their own tenant only", () =>
  withFixture(async (fixture) => {
    const send: Send = (method, path, token, tenantId, body) => call(method, path, { token, tenantId, body });
    const sent = await interleavedTenants(fixture, send, 6);
    assert.equal(sent, 6 * 6 * 4);
  }));

Deno.test("the same through one server connection that every request shares: the api's code, in this process", () =>
  withFixture(async (fixture) => {
    // The api's app as the function builds it, its pool of two connections to the entry
    // with one server connection: every transaction of every tenant meets the server
    // connection the one before it left.
    const api = apiWithAuthAt(stack.authUrl, {}, { url: poolerUrl("one_server"), mode: "transaction" });
    try {
      const send: Send = (method, path, token, tenantId, body) =>
        api.handle(
          new Request(`http://function/api/v1${path}`, {
            method,
            headers: {
              authorization: `Bearer ${token}`,
              "x-tenant-id": tenantId,
              ...(body === undefined ? {} : { "content-type": "application/json" }),
            },
            body: body === undefined ? undefined : JSON.stringify(body),
          }),
        );
      await interleavedTenants(fixture, send, 3);
      const servers = (await show("servers")).filter((server) => server.database === "one_server");
      assert.equal(servers.length, 1, "one server connection served them all");
    } finally {
      await api.close();
    }
  }));

const seen = sql<{ tenant: string | null; claims: string | null; property: string | null; role: string; pid: number }>`
  select current_setting('app.tenant_id', true) as tenant, current_setting('request.jwt.claims', true) as claims,
         current_setting('app.property_ids', true) as property, current_user as role, pg_backend_pid() as pid`;

// A setting read on a connection where it was once set locally reads back as ''.
const unset = (value: string | null) => value === null || value === "";

Deno.test("what a request's transaction sets is gone for the next client on the same server connection", () =>
  withFixture(async (fixture) => {
    const tenant = await fixture.tenant("pooler-leak");
    const property = await createProperty(tenant.ownerClient);
    const key = await issueApiKey(tenant.ownerClient, property.id);
    const db = kysely("one_server");
    const other = otherClient("one_server");
    try {
      const scope = createRequestScope({
        db,
        verify: createAccessTokenVerifier({ jwksUrl: `${stack.authUrl}/.well-known/jwks.json`, now: () => Date.now() }),
      });
      const credentials = await scope.authenticate(new Request(stack.v1, { headers: { authorization: `Bearer ${tenant.owner.token}` } }));
      const after = async (inside: { pid: number }, label: string) => {
        const [next] = await other<{ tenant: string | null; claims: string | null; property: string | null; role: string; pid: number }[]>`
          select current_setting('app.tenant_id', true) as tenant, current_setting('request.jwt.claims', true) as claims,
                 current_setting('app.property_ids', true) as property, current_user as role, pg_backend_pid() as pid`;
        assert.equal(next!.pid, inside.pid, `${label}: the next client got the same server connection`);
        assert.ok(unset(next!.tenant) && unset(next!.claims) && unset(next!.property), `${label}: nothing left: ${JSON.stringify(next)}`);
        assert.equal(next!.role, "postgres", `${label}: the role is the login's again`);
      };

      const written = await scope.run(credentials, tenant.tenantId, async ({ db }) => (await seen.execute(db)).rows[0]!);
      assert.deepEqual([written.tenant, written.role, JSON.parse(written.claims!).sub], [tenant.tenantId, "authenticated", tenant.owner.id]);
      await after(written, "a member's write");

      const read = await scope.read(credentials, tenant.tenantId, async ({ db }) => (await seen.execute(db)).rows[0]!, () => {});
      assert.deepEqual([read.tenant, read.role], [tenant.tenantId, "authenticated"]);
      await after(read, "a member's read");

      const integration = await createIntegrationScope({ db }).run(presentedKey(key.secret)!, undefined, async ({ db }) => (await seen.execute(db)).rows[0]!);
      assert.deepEqual([integration.tenant, integration.property, integration.role], [tenant.tenantId, `{${property.id}}`, "api_integration"]);
      await after(integration, "an API key's request");

      // The control: a setting made for the session, as a SET would, is there for the
      // next client of the same server connection. That is what the checks above look for.
      try {
        await other`select set_config('app.pooler_test', 'left behind', false)`;
        const { rows: [leaked] } = await sql<{ value: string }>`select current_setting('app.pooler_test', true) as value`.execute(db);
        assert.equal(leaked!.value, "left behind");
      } finally {
        await other.unsafe("reset app.pooler_test");
      }
    } finally {
      await other.end();
      await db.destroy();
    }
  }));

type Outcome = { ok: number; errors: string[] };

async function settle(work: Promise<unknown>[]): Promise<Outcome> {
  const settled = await Promise.allSettled(work);
  const errors = settled.flatMap((result) => result.status === "rejected" ? [String((result.reason as Error).message)] : []);
  return { ok: settled.length - errors.length, errors: [...new Set(errors)] };
}

// Six clients of an entry whose two server connections they share, each with statements
// of three shapes with parameters: two alone, one in transactions.
function concurrentStatements(mode: PoolMode) {
  // The control's pools, which leave statements waiting for answers that never come, get
  // server connections of their own, so that nothing after them waits behind those.
  const database: PoolerDatabase = mode === "session" ? "two_servers_broken" : "two_servers";
  const pools = Array.from({ length: 6 }, () => createPool(poolerUrl(database), { max: 2, mode }));
  const work = pools.flatMap((pool, client) =>
    Array.from({ length: 30 }, (_, i) =>
      i % 3 === 0
        ? pool`select ${i}::int + ${client}::int as n`
        : i % 3 === 1
        ? pool.begin((tx) => [tx`select set_config('app.tenant_id', ${`${client}/${i}`}, true)`, tx`select ${i}::int * 2 as d`])
        : pool`select ${String(i)}::text || ${"x"}::text as s`
    )
  );
  return { work, end: () => Promise.all(pools.map((pool) => pool.end({ timeout: 1 }))) };
}

Deno.test("with the pool's transaction mode, statements with parameters never miss a prepared statement, however clients share server connections", async () => {
  const { work, end } = concurrentStatements("transaction");
  try {
    assert.deepEqual(await settle(work), { ok: 180, errors: [] });
  } finally {
    await end();
  }
});

Deno.test("the control: a pool that prepares its statements, as postgres.js does by default, fails through the pooler", async () => {
  // A statement prepared on one server connection is bound on another, where it never
  // was; other statements wait for answers that never come, so the first miss is enough.
  // Ending the pools settles none of those, so they are not waited for. Whether a
  // client's statements meet the other server connection depends on how the pooler
  // interleaves the twelve clients, so a round without a miss is run again, up to three.
  const missing = /prepared statement "[^"]+" does not exist/;
  const outcomes: string[] = [];
  for (let round = 0; round < 3 && !missing.test(outcomes.at(-1) ?? ""); round++) {
    const { work, end } = concurrentStatements("session");
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      const firstMiss = new Promise<string>((resolve) => {
        for (const statement of work) statement.catch((error: Error) => missing.test(error.message) && resolve(error.message));
      });
      outcomes.push(String(await Promise.race([firstMiss, new Promise((resolve) => timer = setTimeout(() => resolve("none"), 5_000))])));
    } finally {
      clearTimeout(timer);
      await end();
    }
  }
  assert.match(outcomes.at(-1)!, missing, `rounds: ${JSON.stringify(outcomes)}`);
});

const tagged = (tag: string) =>
  CompiledQuery.raw("select set_config('app.tenant_id', $1, true) as tag, pg_backend_pid() as pid", [tag]) as CompiledQuery<
    { tag: string; pid: number }
  >;
const probe = CompiledQuery.raw("select current_setting('app.tenant_id', true) as tag, pg_backend_pid() as pid") as CompiledQuery<
  { tag: string; pid: number }
>;

Deno.test("pipelined transactions stay on one server connection from BEGIN to COMMIT, with other clients between them", async () => {
  // Six clients of two server connections, each running reads (each statement a
  // transaction of its own after its prelude, two of them written back to back) and
  // writes (BEGIN sent with the first statement) at the same time.
  const dbs = Array.from({ length: 6 }, () => kysely("two_servers"));
  try {
    const checks = dbs.flatMap((db, client) =>
      Array.from({ length: 8 }, async (_, i) => {
        const tag = `${client}/${i}`;
        // A read: BEGIN, the prelude, the statement and COMMIT for each statement; the two
        // statements are sent together, so the second transaction's BEGIN follows the
        // first's COMMIT on the wire before the pooler has answered either.
        await db.transaction().execute(async (tx) => {
          const prelude = await eachStatementAfter(tx, tagged(tag));
          const statements = await Promise.all([tx.executeQuery(probe), tx.executeQuery(probe)]);
          for (const [at, statement] of statements.entries()) {
            const { rows: [before] } = await prelude.results[at]!;
            assert.deepEqual(statement.rows[0], { tag, pid: before!.pid }, `read ${tag}, statement ${at}: its prelude's server connection and setting`);
          }
        });
        // A write: BEGIN goes with the first statement.
        await db.transaction().execute(async (tx) => {
          const { rows: [first] } = await tx.executeQuery(tagged(`${tag}w`));
          const { rows: [second] } = await tx.executeQuery(probe);
          assert.deepEqual(second, { tag: `${tag}w`, pid: first!.pid }, `write ${tag}: one server connection`);
        });
      })
    );
    await Promise.all(checks);
  } finally {
    await Promise.all(dbs.map((db) => db.destroy()));
  }
});

Deno.test("the pool's startup parameters hold on a server connection another client left in another time zone", async () => {
  const pool = createPool(poolerUrl("one_server"), { max: 1, mode: "transaction", applicationName: "pooler-test" });
  const elsewhere = postgres(poolerUrl("one_server"), {
    max: 1,
    prepare: false,
    onnotice: () => {},
    connection: { TimeZone: "America/New_York", application_name: "elsewhere" },
  });
  try {
    const at = (sql: postgres.Sql) =>
      sql<{ zone: string; name: string; pid: number }[]>`
        select current_setting('TimeZone') as zone, current_setting('application_name') as name, pg_backend_pid() as pid`;
    for (let turn = 0; turn < 3; turn++) {
      const [theirs] = await at(elsewhere);
      const [ours] = await at(pool);
      assert.equal(ours!.pid, theirs!.pid, "one server connection for both");
      assert.equal(theirs!.zone, "America/New_York");
      assert.equal(ours!.zone, "UTC");
      assert.equal(ours!.name, "pooler-test");
      assert.equal(theirs!.name, "elsewhere");
    }
  } finally {
    await pool.end();
    await elsewhere.end();
  }
});
