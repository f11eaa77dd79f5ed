// Client-side binding (src/db/client-side-binding.ts) against the stack: through the
// pooler, createDb's statements reach the server with their values in the SQL and no
// parameters, so a read by id is one round trip; what they read and write is what the
// same requests read over a direct connection that prepares; and a pool that prepares
// still does. The client's messages are read off the wire by a relay (support/wire.ts).
import assert from "node:assert/strict";
import { Kysely, sql } from "kysely";
import { PostgresJSDialect } from "kysely-postgres-js";
import { createAccessTokenVerifier } from "../../src/auth/access-token.ts";
import { guardingLostConnections } from "../../src/db/connection-loss.ts";
import { createDb, type DB } from "../../src/db/database.ts";
import { pipelined } from "../../src/db/pipelined-transactions.ts";
import { createPool, fixedPool, type PoolMode, type Sql } from "../../src/db/pool.ts";
import { findGuest } from "../../src/guests/queries.ts";
import { createRequestScope } from "../../src/tenancy/request-scope.ts";
import { type Fixture, withFixture } from "../support/api.ts";
import { apiWithAuthAt, type InProcessApi } from "../support/auth-process.ts";
import { createGuest, createStay } from "../support/domain.ts";
import { stack } from "../support/stack.ts";
import { type FrontendMessage, wireRelay, type WireRelay } from "../support/wire.ts";

const verify = createAccessTokenVerifier({ jwksUrl: `${stack.authUrl}/.well-known/jwks.json`, now: () => Date.now() });

// createDb's Kysely without the binding layer, for the control: what a pool that does not
// prepare sends when the values go as parameters.
function kyselyBindingOnTheServer(pool: Sql): Kysely<DB> {
  const dialect = new PostgresJSDialect({ postgres: pool });
  return new Kysely<DB>({
    dialect: {
      createAdapter: () => dialect.createAdapter(),
      createDriver: () => pipelined(guardingLostConnections(fixedPool(pool), (sql) => new PostgresJSDialect({ postgres: sql }).createDriver())),
      createIntrospector: (db) => dialect.createIntrospector(db),
      createQueryCompiler: () => dialect.createQueryCompiler(),
    },
  });
}

async function withRelay<T>(target: string, work: (relay: WireRelay) => Promise<T>): Promise<T> {
  const relay = wireRelay(target);
  try {
    return await work(relay);
  } finally {
    await relay.close();
  }
}

const parses = (messages: FrontendMessage[]) => messages.filter((message) => message.type === "Parse");
const binds = (messages: FrontendMessage[]) => messages.filter((message) => message.type === "Bind");
const flushes = (messages: FrontendMessage[]) => messages.filter((message) => message.type === "Flush");

// GET /v1/guests/{id} as its handler reads it: the request scope's read, findGuest.
async function readGuestAsTheRouteDoes(db: Kysely<DB>, fixture: Fixture, relay: WireRelay) {
  const tenant = await fixture.tenant("binding-read");
  const guest = await createGuest(tenant.ownerClient);
  const scope = createRequestScope({ db, verify });
  const credentials = await scope.authenticate(new Request(stack.v1, { headers: { authorization: `Bearer ${tenant.owner.token}` } }));
  const read = () => scope.read(credentials, tenant.tenantId, ({ db }) => findGuest(db, guest.id), () => {});
  // The connection is opened and postgres.js has read the array types before the count.
  assert.equal((await read())?.id, guest.id);
  relay.reset();
  const found = await read();
  assert.equal(found?.id, guest.id);
  return { guestId: guest.id, messages: relay.messages, roundTrips: relay.roundTrips };
}

const queries = (messages: FrontendMessage[]) =>
  messages.flatMap((message) => message.type === "Query" ? [message.sql] : []);

Deno.test("through the pooler a read by id sends no statement with parameters, and is one Query message, one round trip", () =>
  withFixture((fixture) =>
    withRelay(stack.poolerUrl, async (relay) => {
      const db = createDb(createPool(relay.url, { max: 1, generatedTypes: true, mode: "transaction" }));
      try {
        const { guestId, messages, roundTrips } = await readGuestAsTheRouteDoes(db, fixture, relay);
        // The request context and the guest's statement, with the simple protocol: no
        // BEGIN or COMMIT, since Postgres runs a Query message's statements as one transaction.
        assert.deepEqual(messages.map((message) => message.type), ["Query"], JSON.stringify(messages));
        const [text] = queries(messages);
        assert.ok(!/\$\d/.test(text!), "no placeholder left");
        const statements = text!.split(";\n");
        assert.equal(statements.length, 2, text);
        assert.match(statements[0]!, /set_config\('request\.jwt\.claims'/, "the request context first");
        assert.ok(statements[1]!.includes(`"id" = (E'${guestId}')`), "the id is in the statement");
        assert.doesNotMatch(text!, /\b(begin|commit)\b/i);
        assert.equal(roundTrips, 1);
      } finally {
        await db.destroy();
      }
    })
  ));

Deno.test("through the pooler a read whose statement keeps a parameter goes as before: BEGIN, the context, the statement and COMMIT, extended", () =>
  withFixture((fixture) =>
    withRelay(stack.poolerUrl, async (relay) => {
      const db = createDb(createPool(relay.url, { max: 1, generatedTypes: true, mode: "transaction" }));
      try {
        const tenant = await fixture.tenant("binding-read-null");
        const scope = createRequestScope({ db, verify });
        const credentials = await scope.authenticate(new Request(stack.v1, { headers: { authorization: `Bearer ${tenant.owner.token}` } }));
        // A null is sent as a parameter (src/db/client-side-binding.ts).
        const read = () =>
          scope.read(credentials, tenant.tenantId, ({ db }) =>
            sql<{ yes: boolean | null }>`select ${null}::boolean as yes, count(*)::int as guests from public.guests`.execute(db), () => {});
        await read();
        relay.reset();
        const { rows: [row] } = await read();
        assert.equal(row?.yes, null);
        assert.equal(queries(relay.messages).length, 0, JSON.stringify(relay.messages));
        assert.deepEqual(parses(relay.messages).map((parse) => parse.parameterTypes), [0, 0, 1, 0]);
      } finally {
        await db.destroy();
      }
    })
  ));

Deno.test("the control: without the binding layer the same read sends its statements with parameters, each described first", () =>
  withFixture((fixture) =>
    withRelay(stack.poolerUrl, async (relay) => {
      const db = kyselyBindingOnTheServer(createPool(relay.url, { max: 1, generatedTypes: true, mode: "transaction" }));
      try {
        const { messages, roundTrips } = await readGuestAsTheRouteDoes(db, fixture, relay);
        assert.deepEqual(parses(messages).map((parse) => parse.parameterTypes), [0, 4, 1, 0]);
        assert.equal(flushes(messages).length, 2, "the context and the statement each wait for their description");
        assert.ok(roundTrips >= 3, `${roundTrips} round trips`);
      } finally {
        await db.destroy();
      }
    })
  ));

Deno.test("a pool that prepares is left as it is: named statements with parameters, prepared once and then only bound", () =>
  withFixture((fixture) =>
    withRelay(stack.dbUrl, async (relay) => {
      const db = createDb(createPool(relay.url, { max: 1, generatedTypes: true, mode: "session" }));
      try {
        const tenant = await fixture.tenant("binding-session");
        const guest = await createGuest(tenant.ownerClient);
        const byId = (id: string) => db.selectFrom("guests").select(["id", "first_name"]).where("id", "=", id).execute();
        // The connection is opened and postgres.js has read the array types before the count.
        await sql`select 1`.execute(db);
        relay.reset();
        await byId(guest.id);
        const [prepared] = parses(relay.messages);
        assert.ok(prepared && prepared.statement !== "", "a named statement");
        assert.equal(prepared.parameterTypes, 1);
        assert.match(prepared.sql, /"id" = \$1/);
        relay.reset();
        await byId(crypto.randomUUID());
        assert.deepEqual(parses(relay.messages), [], "not parsed again");
        assert.deepEqual(binds(relay.messages).map((bind) => [bind.statement, bind.parameters]), [[prepared.statement, 1]]);
      } finally {
        await db.destroy();
      }
    })
  ));

// Strings that would break a careless literal, and a few made at random from their parts.
const PARTS = ["'", "''", "\\", "\\'", '"', "$1", "$$", "$a$", "--", "/*", "*/", "\n", "\r", "E'", "%", "_", "é", "🏨", "漢", " ", "x", ";"];
const nastyStrings = [
  "",
  "O'Brien",
  "Back\\slash",
  "\\'; select 1; --",
  "it''s",
  "Zoë 🏨 漢字",
  "\\x00",
  "$1",
  "$$ $tag$",
  "/* not closed",
  ...Array.from({ length: 60 }, () => Array.from({ length: 12 }, () => PARTS[Math.floor(Math.random() * PARTS.length)]).join("")),
];

function kyselyOf(mode: PoolMode): Kysely<DB> {
  return createDb(createPool(mode === "transaction" ? stack.poolerUrl : stack.dbUrl, { max: 1, generatedTypes: true, mode }));
}

async function bothModes(work: (db: Kysely<DB>) => Promise<unknown>): Promise<{ transaction: unknown; session: unknown }> {
  const [pooled, direct] = [kyselyOf("transaction"), kyselyOf("session")];
  try {
    return { transaction: await work(pooled), session: await work(direct) };
  } finally {
    await Promise.all([pooled.destroy(), direct.destroy()]);
  }
}

Deno.test("strings and numbers read back as they were sent, of the same types, in both modes", async () => {
  const { transaction, session } = await bothModes(async (db) => {
    const rows = [];
    for (const text of nastyStrings) {
      const { rows: [row] } = await sql<{ value: string; length: number; type: string }>`
        select ${text} as value, length(${text}) as length, pg_typeof(${text} || '')::text as type`.execute(db);
      assert.equal(row!.value, text, JSON.stringify(text));
      rows.push(row);
    }
    for (const number of [0, 42, -7, 1.5, 1e21, 2147483648, Number.MAX_SAFE_INTEGER, 5e-7]) {
      const { rows: [row] } = await sql<{ numeric: string; float: string; type: string }>`
        select ${number}::numeric::text as numeric, ${number}::float8::text as float, pg_typeof(${number} * 1.0)::text as type`.execute(db);
      rows.push(row);
    }
    for (const integer of [0, 42, -7]) {
      const { rows: [row] } = await sql<{ plus: number; type: string }>`select ${integer} + 1 as plus, pg_typeof(${integer} + 1)::text as type`.execute(db);
      assert.equal(row!.plus, integer + 1);
      rows.push(row);
    }
    const { rows: [big] } = await sql<{ value: string; type: string }>`
      select ${9007199254740993n}::text as value, pg_typeof(${1n})::text as type`.execute(db);
    rows.push(big);
    // A LIKE pattern escaped as listGuests escapes it, matched against what it escapes.
    const { rows: [like] } = await sql<{ matched: boolean }>`select ${"50% \\ _x"} like ${"50\\% \\\\ \\_%"} as matched`.execute(db);
    assert.equal(like!.matched, true);
    return rows;
  });
  assert.deepEqual(transaction, session);
});

Deno.test("booleans and Dates read back as they were sent, of the same types, in both modes, against date and timestamp columns too", async () => {
  const instants = [new Date(0), new Date(Date.UTC(2027, 5, 1, 23, 59, 59, 999)), new Date(Date.UTC(1999, 11, 31, 0, 0, 0, 1))];
  const { transaction, session } = await bothModes(async (db) => {
    const rows = [];
    for (const flag of [true, false]) {
      const { rows: [row] } = await sql<{ value: boolean; negated: boolean; type: string }>`
        select ${flag} as value, not ${flag} as negated, pg_typeof(${flag})::text as type`.execute(db);
      assert.equal(row!.value, flag);
      rows.push(row);
    }
    for (const instant of instants) {
      const { rows: [row] } = await sql<{ value: string | Date; type: string; day: string; before: boolean; sameDay: boolean }>`
        select ${instant} as value, pg_typeof(${instant})::text as type, (${instant})::date::text as day,
               '2000-01-01'::timestamp < ${instant} as before, '2027-06-01'::date = (${instant})::date as "sameDay"`.execute(db);
      // The pool's type parsers give a timestamptz as text (src/db/pool.ts).
      assert.equal(new Date(row!.value).getTime(), instant.getTime());
      rows.push(row);
    }
    return rows;
  });
  assert.deepEqual(transaction, session);
});

Deno.test("a JSON claim set with set_config, a limit and an offset: the same in both modes", async () => {
  const claims = { sub: crypto.randomUUID(), name: `O'Brien \\ "Zoë" 🏨 $1`, roles: ["a'b", "c\\d"] };
  const { transaction, session } = await bothModes((db) =>
    db.transaction().execute(async (tx) => {
      await sql`select set_config('request.jwt.claims', ${JSON.stringify(claims)}, true)`.execute(tx);
      const { rows: [read] } = await sql<{ claims: unknown; name: string }>`
        select current_setting('request.jwt.claims')::jsonb as claims,
               current_setting('request.jwt.claims')::jsonb ->> 'name' as name`.execute(tx);
      const { rows: page } = await sql<{ n: number }>`select n from generate_series(1, 50) as n order by n limit ${7} offset ${20}`.execute(tx);
      return { read, page: page.map((row) => row.n) };
    })
  );
  assert.deepEqual(transaction, session);
  assert.deepEqual(transaction, { read: { claims, name: claims.name }, page: [21, 22, 23, 24, 25, 26, 27] });
});

type Answer = { status: number; etag: string | null; body: unknown };

async function answer(api: InProcessApi, token: string, tenantId: string, method: string, path: string, body?: unknown): Promise<Answer> {
  const response = await api.handle(
    new Request(`http://function/api/v1${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        "x-tenant-id": tenantId,
        prefer: "return=representation",
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
  );
  const text = await response.text();
  return { status: response.status, etag: response.headers.get("etag"), body: text ? JSON.parse(text) : null };
}

Deno.test("the api's routes answer the same through the pooler as over a direct connection that prepares", () =>
  withFixture(async (fixture) => {
    const tenant = await fixture.tenant("binding-routes");
    const stay = await createStay(tenant.ownerClient);
    const pooled = apiWithAuthAt(stack.authUrl, {}, { url: stack.poolerUrl, mode: "transaction" });
    const direct = apiWithAuthAt(stack.authUrl, {}, { url: stack.dbUrl, mode: "session" });
    try {
      const as = (api: InProcessApi, method: string, path: string, body?: unknown) =>
        answer(api, tenant.owner.token, tenant.tenantId, method, path, body);
      const same = async (path: string, expected = 200) => {
        // Twice each: a prepared statement's first run and a later one.
        const answers = [await as(pooled, "GET", path), await as(direct, "GET", path), await as(direct, "GET", path)];
        assert.equal(answers[0]!.status, expected, `${path}: ${JSON.stringify(answers[0]!.body)}`);
        assert.deepEqual(answers[0], answers[1], path);
        assert.deepEqual(answers[0], answers[2], path);
        return answers[0]!.body;
      };

      // A guest whose names and notes would break a careless literal, written through the pooler.
      const fields = {
        firstName: `O'Brien "Zoë" 🏨`,
        lastName: `Back\\slash '' \\' $1 -- /* x`,
        email: `obrien+${crypto.randomUUID().slice(0, 8)}@guest.example`,
        notes: `$$ $tag$ ' \\ 漢字 E'\\''`,
      };
      const created = await as(pooled, "POST", "/guests", fields);
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const guest = created.body as typeof fields & { id: string };
      assert.deepEqual(fields, { firstName: guest.firstName, lastName: guest.lastName, email: guest.email, notes: guest.notes });
      assert.deepEqual(await same(`/guests/${guest.id}`), created.body);
      // Searched by a part with a quote, a backslash and LIKE's wildcards in it.
      const found = await same(`/guests?q=${encodeURIComponent("slash '' \\'")}`) as { data: { id: string }[] };
      assert.deepEqual(found.data.map((row) => row.id), [guest.id]);
      await same(`/guests?q=${encodeURIComponent("%")}`);
      await same(`/guests?email=${encodeURIComponent(fields.email.toUpperCase())}`);
      await same("/guests?limit=1&offset=1");
      await same("/guests?limit=100&offset=0");
      await same(`/guests/${crypto.randomUUID()}`, 404);

      // An update through the pooler: a string, a boolean and a null in one statement.
      const updated = await as(pooled, "PATCH", `/guests/${guest.id}`, { firstName: "Ana 'Q'", marketingConsent: true, notes: null });
      assert.equal(updated.status, 200, JSON.stringify(updated.body));
      assert.deepEqual(await same(`/guests/${guest.id}`), updated.body);

      await same(`/reservations/${stay.reservation.id}`);
      await same(`/reservations?limit=5&offset=0`);
      await same(`/reservations?propertyId=${stay.property.id}`);
      // A list of statuses is an array parameter, sent as one: the statement keeps its parameters.
      await same(`/reservations?status=pending,confirmed&from=2027-01-01`);
      await same(`/rate-plans?propertyId=${stay.property.id}&active=true`);
      await same(`/properties/${stay.property.id}`);
      await same("/properties");
      await same(`/units?propertyId=${stay.property.id}`);
      await same(`/rate-plans/${stay.ratePlan.id}`);
    } finally {
      await Promise.all([pooled.close(), direct.close()]);
    }
  }));
