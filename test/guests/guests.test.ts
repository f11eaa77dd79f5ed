// Guests end to end through the gateway: every route of src/guests/handlers.ts, its
// documented errors, the marketing consent stamp the database keeps, search, and who
// may write. Every response is checked against the served OpenAPI document. The
// generic header, 401 and non-member checks live in the table-driven tests elsewhere.
import assert from "node:assert/strict";
import {
  type Client,
  client,
  expectInvalid,
  expectMinimal,
  expectPaging,
  expectProblem,
  expectStatus,
  listPage,
  MALFORMED_ID,
  type Page,
  readOne,
  representation,
  resolveLocation,
  type Schemas,
  UNKNOWN_ID,
  withFixture,
} from "../support/api.ts";
import { createGuest, createStay, type Guest } from "../support/domain.ts";

const GUESTS = "/v1/guests";
const GUEST = "/v1/guests/{id}";

const read = (api: Client, id: string) => readOne<Guest>(api, GUEST, { id });
const list = (api: Client, query = "") => listPage<Guest>(api, GUESTS, query);

function ids(page: Page<Guest>): string[] {
  return page.data.map((guest) => guest.id);
}

// ---------------------------------------------------------------- POST /v1/guests

Deno.test("POST /v1/guests with return=representation: 201, the guest, a relative Location and the ETag GET answers", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("guest-create");
    const input = {
      firstName: "Ana",
      lastName: "Silva",
      email: "ana.silva@guest.example",
      phone: "+351912345678",
      locale: "pt-BR",
      countryCode: "BR",
      marketingConsent: true,
      notes: "Prefers a quiet room.",
    };
    const response = await t.ownerClient.post("/guests", input, representation);
    const created = await expectStatus<Guest>("POST", GUESTS, response, 201);
    assert.match(created.id, /^[0-9a-f-]{36}$/);
    assert.deepEqual(created, {
      id: created.id,
      ...input,
      marketingConsentAt: created.createdAt,
      emailUndeliverableAt: null,
      emailUndeliverableReason: null,
      createdAt: created.createdAt,
      updatedAt: created.createdAt,
    });
    assert.ok(!Number.isNaN(Date.parse(created.createdAt)));
    assert.equal(response.headers.get("preference-applied"), "return=representation");
    assert.equal(response.headers.get("location"), `guests/${created.id}`, "a Location relative to /v1/guests");
    assert.equal(resolveLocation("/guests", response), `/guests/${created.id}`);
    const etag = response.headers.get("etag");
    assert.match(etag ?? "", /^"[A-Za-z0-9_-]+"$/);

    const again = await read(t.ownerClient, created.id);
    assert.deepEqual(again.body, created);
    assert.equal(again.etag, etag);
  }));

Deno.test("POST /v1/guests without Prefer: 201 with Location, ETag and the new id; the defaults; names trimmed", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("guest-create-min");
    const response = await t.ownerClient.post("/guests", { firstName: "  Bruno ", lastName: "\tCosta  " });
    const { etag, location } = await expectMinimal("POST", GUESTS, response, 201);
    assert.match(location ?? "", /^guests\/[0-9a-f-]{36}$/);
    const path = resolveLocation("/guests", response);
    const id = path.slice("/guests/".length);

    const { body: guest, etag: readTag } = await read(t.ownerClient, id);
    assert.equal(readTag, etag);
    assert.deepEqual(guest, {
      id,
      firstName: "Bruno",
      lastName: "Costa",
      email: null,
      phone: null,
      locale: "en",
      countryCode: null,
      marketingConsent: false,
      marketingConsentAt: null,
      notes: null,
      emailUndeliverableAt: null,
      emailUndeliverableReason: null,
      createdAt: guest.createdAt,
      updatedAt: guest.createdAt,
    });

    // Explicit nulls and an explicit refusal of consent are the same defaults.
    const explicit = await t.ownerClient.post("/guests", {
      firstName: "Carla",
      lastName: "Dias",
      email: null,
      phone: null,
      countryCode: null,
      notes: null,
      marketingConsent: false,
    }, representation);
    const carla = await expectStatus<Guest>("POST", GUESTS, explicit, 201);
    assert.deepEqual(
      [carla.email, carla.phone, carla.countryCode, carla.notes, carla.locale, carla.marketingConsent, carla.marketingConsentAt],
      [null, null, null, null, "en", false, null],
    );
  }));

Deno.test("POST /v1/guests: 400 for missing, unknown or invalid fields, and nothing is created", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("guest-create400");
    const valid = { firstName: "Ana", lastName: "Silva" };
    const cases: [unknown, string][] = [
      [{ lastName: "Silva" }, "firstName"],
      [{ firstName: "Ana" }, "lastName"],
      [{ ...valid, firstName: "   " }, "firstName"],
      [{ ...valid, lastName: "" }, "lastName"],
      [{ ...valid, firstName: null }, "firstName"],
      [{ ...valid, firstName: "A".repeat(101) }, "firstName"],
      [{ ...valid, lastName: 42 }, "lastName"],
      [{ ...valid, email: "ana at example" }, "email"],
      [{ ...valid, email: "ana@localhost" }, "email"],
      [{ ...valid, email: `${"a".repeat(310)}@guest.example` }, "email"],
      [{ ...valid, phone: "912345678" }, "phone"],
      [{ ...valid, phone: "+0912345678" }, "phone"],
      [{ ...valid, phone: "+351 912 345 678" }, "phone"],
      [{ ...valid, locale: "PT" }, "locale"],
      [{ ...valid, locale: "pt_BR" }, "locale"],
      [{ ...valid, locale: "english" }, "locale"],
      [{ ...valid, locale: null }, "locale"],
      [{ ...valid, countryCode: "pt" }, "countryCode"],
      [{ ...valid, countryCode: "PRT" }, "countryCode"],
      [{ ...valid, marketingConsent: "yes" }, "marketingConsent"],
      [{ ...valid, marketingConsent: null }, "marketingConsent"],
      [{ ...valid, notes: "n".repeat(4001) }, "notes"],
      [{ ...valid, vip: true }, "vip"],
      [{ ...valid, marketingConsentAt: "2026-01-01T00:00:00Z" }, "marketingConsentAt"],
      [{ ...valid, id: UNKNOWN_ID }, "id"],
      [[valid], "(body)"],
    ];
    for (const [body, path] of cases) {
      await expectInvalid("POST", GUESTS, await t.ownerClient.post("/guests", body), path, JSON.stringify(body).slice(0, 80));
    }
    await expectProblem("POST", GUESTS, await t.ownerClient.post("/guests"), 400, "validation");
    assert.equal((await list(t.ownerClient)).pagination.total, 0, "nothing was created");
  }));

Deno.test("POST /v1/guests: an email address another guest has (in any case) is no conflict", () =>
  withFixture(async ({ tenant }) => {
    // The schema indexes (tenant_id, lower(email)) without making it unique: a family
    // or a company may book several guests under one address.
    const t = await tenant("guest-shared-email");
    const first = await createGuest(t.ownerClient, { firstName: "Ana", lastName: "Rocha", email: "family@rocha.example" });
    const second = await createGuest(t.ownerClient, { firstName: "Rui", lastName: "Rocha", email: "Family@Rocha.example" });
    assert.equal(second.email, "Family@Rocha.example", "the address is stored as given");
    const found = await list(t.ownerClient, "?email=FAMILY%40rocha.example");
    assert.deepEqual(ids(found), [first.id, second.id]);
    assert.equal(found.pagination.total, 2);
  }));

// ---------------------------------------------------------------- 422: what the database refuses

Deno.test("POST and PATCH /v1/guests: 400 naming the field for text no column can store (a NUL character); nothing changes", () =>
  withFixture(async ({ tenant }) => {
    // JSON allows \u0000 in a string, but no Postgres text column can hold it.
    const t = await tenant("guest-nul");
    const created = await t.ownerClient.post("/guests", { firstName: "Ana\u0000", lastName: "Silva" });
    const refused = await expectProblem("POST", GUESTS, created, 400, "validation");
    assert.deepEqual(refused.errors?.map((error) => error.path), ["firstName"]);
    assert.equal((await list(t.ownerClient)).pagination.total, 0, "nothing was created");

    const guest = await createGuest(t.ownerClient);
    const before = await read(t.ownerClient, guest.id);
    const patched = await t.ownerClient.patch(`/guests/${guest.id}`, { notes: "Room\u0000 12" });
    const patchRefused = await expectProblem("PATCH", GUEST, patched, 400, "validation");
    assert.deepEqual(patchRefused.errors?.map((error) => error.path), ["notes"]);
    assert.deepEqual(await read(t.ownerClient, guest.id), before, "nothing changed");
  }));

// ---------------------------------------------------------------- GET /v1/guests

Deno.test("GET /v1/guests: the tenant's guests by last then first name in any case, then id; paged", () =>
  withFixture(async ({ tenant, memberOf }) => {
    const t = await tenant("guest-list");
    const other = await tenant("guest-list-other");
    const staff = await memberOf(t, "staff");
    const zhou1 = await createGuest(t.ownerClient, { firstName: "ana", lastName: "Zhou", email: null });
    const vries = await createGuest(t.ownerClient, { firstName: "Bea", lastName: "de Vries", email: null });
    const zhou2 = await createGuest(t.ownerClient, { firstName: "Ana", lastName: "zhou", email: null });
    const almeida = await createGuest(t.ownerClient, { firstName: "Carl", lastName: "Almeida", email: null });
    const brown = await createGuest(t.ownerClient, { firstName: "Zed", lastName: "Brown", email: null });
    const abel = await createGuest(t.ownerClient, { firstName: "abel", lastName: "Brown", email: null });
    await createGuest(other.ownerClient, { firstName: "Aaron", lastName: "Aardvark" });
    // Same last and first name in any case: the id decides.
    const zhous = [zhou1, zhou2].sort((a, b) => (a.id < b.id ? -1 : 1));
    const expected = [almeida.id, abel.id, brown.id, vries.id, ...zhous.map((g) => g.id)];

    const api = client(staff, t.tenantId);
    const all = await expectPaging((query) => list(api, query), expected, ["?limit=2&offset=1", "?limit=4&offset=4", "?offset=50&limit=100"]);
    assert.deepEqual(all.data[0], almeida, "the full representation");
  }));

Deno.test("GET /v1/guests?q=: part of a first name, last name or email in any case; %, _ and \\ are literal", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("guest-search");
    const silva = await createGuest(t.ownerClient, { firstName: "Ana", lastName: "Silva", email: "ana_silva@mail.example" });
    const costa = await createGuest(t.ownerClient, { firstName: "Rui", lastName: "100% Costa", email: "rui@mail.example" });
    const lee = await createGuest(t.ownerClient, { firstName: "Back\\slash", lastName: "Lee", email: "lee@mail.example" });
    const anaya = await createGuest(t.ownerClient, { firstName: "Pedro", lastName: "Anaya", email: "pedro@mail.example" });
    const xavier = await createGuest(t.ownerClient, { firstName: "Zoe", lastName: "Xavier", email: "ZOE@Example.COM" });
    const search = async (q: string) => await list(t.ownerClient, `?q=${encodeURIComponent(q)}`);

    const ana = await search("ana");
    assert.deepEqual(ids(ana), [anaya.id, silva.id], "first name Ana and last name Anaya, by last name");
    assert.equal(ana.pagination.total, 2);
    assert.deepEqual(ids(await search("ANA")), [anaya.id, silva.id], "in any case");
    assert.deepEqual(ids(await search("cOsT")), [costa.id], "part of a last name");
    assert.deepEqual(ids(await search("example.com")), [xavier.id], "part of an email, stored in capitals");
    assert.deepEqual(ids(await search("  silva ")), [silva.id], "surrounding spaces are trimmed");
    assert.deepEqual(ids(await search("% c")), [costa.id], "a literal % followed by ' c'");

    // As LIKE wildcards these would match every guest.
    const percent = await search("%");
    assert.deepEqual(ids(percent), [costa.id]);
    assert.equal(percent.pagination.total, 1);
    assert.deepEqual(ids(await search("_")), [silva.id]);
    assert.deepEqual(ids(await search("\\")), [lee.id]);
    assert.deepEqual(ids(await search("a_s")), [silva.id]);
    assert.deepEqual(await search("%%"), { data: [], pagination: { limit: 20, offset: 0, total: 0, hasMore: false } });
    assert.deepEqual(await search("r_i"), { data: [], pagination: { limit: 20, offset: 0, total: 0, hasMore: false } });

    const paged = await list(t.ownerClient, "?q=mail.example&limit=2&offset=1");
    assert.deepEqual(ids(paged), [anaya.id, lee.id], "after 100% Costa, by last name");
    assert.deepEqual(paged.pagination, { limit: 2, offset: 1, total: 4, hasMore: true });
  }));

Deno.test("GET /v1/guests?email=: the whole address in any case, alone or with q", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("guest-email");
    const zoe = await createGuest(t.ownerClient, { firstName: "Zoe", lastName: "Xavier", email: "ZOE@Example.COM" });
    const ana = await createGuest(t.ownerClient, { firstName: "Ana", lastName: "Silva", email: "ana@mail.example" });
    await createGuest(t.ownerClient, { firstName: "Noemail", lastName: "Person", email: null });
    const byEmail = async (email: string, extra = "") => await list(t.ownerClient, `?email=${encodeURIComponent(email)}${extra}`);

    const found = await byEmail("zoe@example.com");
    assert.deepEqual(found.data, [zoe]);
    assert.equal(found.pagination.total, 1);
    assert.deepEqual(ids(await byEmail("Ana@MAIL.example")), [ana.id]);
    assert.deepEqual(await byEmail("na@mail.example"), { data: [], pagination: { limit: 20, offset: 0, total: 0, hasMore: false } });
    assert.deepEqual(ids(await byEmail("ana@mail.example", "&q=silva")), [ana.id]);
    assert.deepEqual(ids(await byEmail("ana@mail.example", "&q=xavier")), []);
  }));

Deno.test("GET /v1/guests: 400 for a bad query", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("guest-list400");
    await createGuest(t.ownerClient);
    const cases: [string, string][] = [
      ["email=nope", "email"],
      ["email=", "email"],
      ["q=", "q"],
      ["q=%20%20", "q"],
      [`q=${"a".repeat(201)}`, "q"],
      ["q=a&q=b", "q"],
      ["limit=0", "limit"],
      ["limit=101", "limit"],
      ["limit=abc", "limit"],
      ["limit=1.5", "limit"],
      ["offset=-5", "offset"],
      ["sort=lastName", "sort"],
      ["firstName=Ana", "firstName"],
    ];
    for (const [query, path] of cases) {
      await expectInvalid("GET", GUESTS, await t.ownerClient.get(`/guests?${query}`), path, query);
    }
  }));

Deno.test("GET /v1/guests?q=: 400 for a NUL character, which no stored text can contain", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("guest-list-nul");
    await createGuest(t.ownerClient, { firstName: "Ana" });
    await expectInvalid("GET", GUESTS, await t.ownerClient.get("/guests?q=Ana%00"), "q");
  }));

// ---------------------------------------------------------------- GET /v1/guests/{id}

Deno.test("GET /v1/guests/{id}: 200 with an ETag; unknown, malformed and other tenants' ids are the same 404", () =>
  withFixture(async ({ tenant }) => {
    const a = await tenant("guest-get-a");
    const b = await tenant("guest-get-b");
    const guest = await createGuest(a.ownerClient, { phone: "+14155550123", countryCode: "US", locale: "en-US" });
    const { body: found } = await read(a.ownerClient, guest.id);
    assert.deepEqual(found, guest);

    const bodies = [];
    for (const path of [`/guests/${UNKNOWN_ID}`, `/guests/${MALFORMED_ID}`, `/guests/${guest.id}`]) {
      bodies.push(await expectProblem("GET", GUEST, await b.ownerClient.get(path), 404, "not-found"));
    }
    assert.deepEqual(bodies[1], bodies[0]);
    assert.deepEqual(bodies[2], bodies[0]);
    await expectProblem("GET", GUEST, await a.ownerClient.get(`/guests/${UNKNOWN_ID}`), 404, "not-found");
  }));

// ---------------------------------------------------------------- PATCH /v1/guests/{id}

Deno.test("PATCH /v1/guests/{id}: 204 with the ETag GET answers, or 200 with the guest; only the fields given change", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("guest-patch");
    const guest = await createGuest(t.ownerClient, {
      phone: "+351912345678",
      countryCode: "PT",
      locale: "pt-PT",
      notes: "Late arrival.",
    });
    const path = `/guests/${guest.id}`;

    const { etag } = await expectMinimal("PATCH", GUEST, await t.ownerClient.patch(path, { lastName: " Silva-Santos " }), 204);
    const afterMinimal = await read(t.ownerClient, guest.id);
    assert.equal(afterMinimal.etag, etag);
    assert.deepEqual(afterMinimal.body, { ...guest, lastName: "Silva-Santos", updatedAt: afterMinimal.body.updatedAt });
    assert.ok(Date.parse(afterMinimal.body.updatedAt) > Date.parse(guest.updatedAt), "updatedAt moves on");

    const full = await t.ownerClient.patch(path, {
      email: null,
      phone: null,
      countryCode: null,
      notes: null,
      locale: "fr",
      firstName: "Anne",
    }, representation);
    const updated = await expectStatus<Guest>("PATCH", GUEST, full, 200);
    assert.equal(full.headers.get("preference-applied"), "return=representation");
    assert.deepEqual(updated, {
      ...afterMinimal.body,
      firstName: "Anne",
      email: null,
      phone: null,
      countryCode: null,
      notes: null,
      locale: "fr",
      updatedAt: updated.updatedAt,
    });
    assert.equal(updated.createdAt, guest.createdAt);
    const afterFull = await read(t.ownerClient, guest.id);
    assert.deepEqual(afterFull.body, updated);
    assert.equal(afterFull.etag, full.headers.get("etag"));
    assert.notEqual(afterFull.etag, etag);
  }));

Deno.test("PATCH /v1/guests/{id}: If-Match — the current ETag or * succeeds, a stale one is a 412 and changes nothing", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("guest-ifmatch");
    const guest = await createGuest(t.ownerClient);
    const path = `/guests/${guest.id}`;
    const { etag: etag0 } = await read(t.ownerClient, guest.id);

    const { etag: etag1 } = await expectMinimal(
      "PATCH", GUEST, await t.ownerClient.patch(path, { notes: "VIP" }, { "if-match": etag0 }), 204,
    );
    assert.notEqual(etag1, etag0);
    const current = await read(t.ownerClient, guest.id);
    assert.equal(current.etag, etag1);
    assert.equal(current.body.notes, "VIP");

    const stale = await t.ownerClient.patch(path, { notes: "Overwritten" }, { "if-match": etag0 });
    await expectProblem("PATCH", GUEST, stale, 412, "stale-etag");
    assert.equal(stale.headers.get("etag"), etag1, "a 412 names the current ETag");
    const weak = await t.ownerClient.patch(path, { notes: "Overwritten" }, { "if-match": `W/${etag1}` });
    await expectProblem("PATCH", GUEST, weak, 412, "stale-etag");
    assert.deepEqual(await read(t.ownerClient, guest.id), current, "nothing changed");

    const listed = await t.ownerClient.patch(path, { notes: "Either" }, { "if-match": `${etag0}, ${etag1}`, ...representation });
    assert.equal((await expectStatus<Guest>("PATCH", GUEST, listed, 200)).notes, "Either");
    const any = await t.ownerClient.patch(path, { notes: "Any" }, { "if-match": "*", ...representation });
    assert.equal((await expectStatus<Guest>("PATCH", GUEST, any, 200)).notes, "Any");
  }));

Deno.test("PATCH /v1/guests/{id}: 400 for an empty, unknown or invalid body, and nothing changes", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("guest-patch400");
    const guest = await createGuest(t.ownerClient, { marketingConsent: true });
    const path = `/guests/${guest.id}`;
    const before = await read(t.ownerClient, guest.id);
    const cases: [unknown, string][] = [
      [{}, "(body)"],
      [{ vip: true }, "vip"],
      [{ notes: "ok", vip: true }, "vip"],
      [{ marketingConsentAt: null }, "marketingConsentAt"],
      [{ createdAt: "2026-01-01T00:00:00Z" }, "createdAt"],
      [{ id: UNKNOWN_ID }, "id"],
      [{ firstName: null }, "firstName"],
      [{ firstName: "  " }, "firstName"],
      [{ lastName: "" }, "lastName"],
      [{ lastName: "L".repeat(101) }, "lastName"],
      [{ email: "ana@" }, "email"],
      [{ phone: "00351912345678" }, "phone"],
      [{ locale: null }, "locale"],
      [{ locale: "EN" }, "locale"],
      [{ countryCode: "prt" }, "countryCode"],
      [{ marketingConsent: null }, "marketingConsent"],
      [{ marketingConsent: "false" }, "marketingConsent"],
      [{ notes: "n".repeat(4001) }, "notes"],
    ];
    for (const [body, errorPath] of cases) {
      await expectInvalid("PATCH", GUEST, await t.ownerClient.patch(path, body), errorPath, JSON.stringify(body).slice(0, 80));
    }
    await expectProblem("PATCH", GUEST, await t.ownerClient.patch(path), 400, "validation");
    assert.deepEqual(await read(t.ownerClient, guest.id), before, "nothing changed");
  }));

Deno.test("PATCH /v1/guests/{id}: 404 for unknown, malformed and other tenants' ids, with or without If-Match", () =>
  withFixture(async ({ tenant }) => {
    const a = await tenant("guest-patch404-a");
    const b = await tenant("guest-patch404-b");
    const guest = await createGuest(a.ownerClient);
    const before = await read(a.ownerClient, guest.id);
    for (const id of [UNKNOWN_ID, MALFORMED_ID, guest.id]) {
      await expectProblem("PATCH", GUEST, await b.ownerClient.patch(`/guests/${id}`, { notes: "x" }), 404, "not-found");
      await expectProblem(
        "PATCH", GUEST, await b.ownerClient.patch(`/guests/${id}`, { notes: "x" }, { "if-match": before.etag }), 404, "not-found",
      );
    }
    assert.deepEqual(await read(a.ownerClient, guest.id), before, "nothing changed");
  }));

// ---------------------------------------------------------------- marketing consent

Deno.test("marketing consent: giving it stamps marketingConsentAt, other changes keep it, withdrawing clears it", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("guest-consent");
    const guest = await createGuest(t.ownerClient);
    assert.deepEqual([guest.marketingConsent, guest.marketingConsentAt], [false, null]);
    const path = `/guests/${guest.id}`;
    const patch = async (body: Record<string, unknown>) =>
      await expectStatus<Guest>("PATCH", GUEST, await t.ownerClient.patch(path, body, representation), 200);

    // Changing something else while consent is withheld leaves it withheld.
    const noted = await patch({ notes: "Asked about offers." });
    assert.deepEqual([noted.marketingConsent, noted.marketingConsentAt], [false, null]);

    const given = await patch({ marketingConsent: true });
    assert.equal(given.marketingConsent, true);
    assert.equal(given.marketingConsentAt, given.updatedAt, "stamped by the write that gave it");
    assert.ok(Date.parse(given.marketingConsentAt!) > Date.parse(guest.createdAt));

    const renamed = await patch({ firstName: "Joana", email: "joana@guest.example" });
    assert.deepEqual([renamed.marketingConsent, renamed.marketingConsentAt], [true, given.marketingConsentAt]);
    assert.ok(Date.parse(renamed.updatedAt) > Date.parse(given.updatedAt));

    // Saying yes again is the same consent: it keeps the time it was first given.
    const reaffirmed = await patch({ marketingConsent: true, notes: null });
    assert.deepEqual([reaffirmed.marketingConsent, reaffirmed.marketingConsentAt], [true, given.marketingConsentAt]);

    const withdrawn = await patch({ marketingConsent: false });
    assert.deepEqual([withdrawn.marketingConsent, withdrawn.marketingConsentAt], [false, null]);
    const stillWithdrawn = await patch({ locale: "es" });
    assert.deepEqual([stillWithdrawn.marketingConsent, stillWithdrawn.marketingConsentAt], [false, null]);

    const regiven = await patch({ marketingConsent: true });
    assert.equal(regiven.marketingConsentAt, regiven.updatedAt, "a new consent, a new time");
    assert.ok(Date.parse(regiven.marketingConsentAt!) > Date.parse(given.marketingConsentAt!));
    assert.deepEqual((await read(t.ownerClient, guest.id)).body, regiven);
  }));

Deno.test("marketing consent given at creation is stamped then, and survives a minimal PATCH of other fields", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("guest-consent-create");
    const guest = await createGuest(t.ownerClient, { marketingConsent: true });
    assert.equal(guest.marketingConsentAt, guest.createdAt);
    await expectMinimal("PATCH", GUEST, await t.ownerClient.patch(`/guests/${guest.id}`, { phone: "+447700900123" }), 204);
    const { body: after } = await read(t.ownerClient, guest.id);
    assert.deepEqual([after.phone, after.marketingConsent, after.marketingConsentAt], ["+447700900123", true, guest.createdAt]);
  }));

// ---------------------------------------------------------------- DELETE /v1/guests/{id}

Deno.test("DELETE /v1/guests/{id}: 204, then 404; unknown, malformed and other tenants' ids are 404", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("guest-delete");
    const other = await tenant("guest-delete-other");
    const gone = await createGuest(t.ownerClient);
    const kept = await createGuest(t.ownerClient);
    const response = await t.ownerClient.delete(`/guests/${gone.id}`);
    assert.equal(await expectStatus("DELETE", GUEST, response, 204), undefined);
    await expectProblem("GET", GUEST, await t.ownerClient.get(`/guests/${gone.id}`), 404, "not-found");
    await expectProblem("DELETE", GUEST, await t.ownerClient.delete(`/guests/${gone.id}`), 404, "not-found");
    assert.deepEqual((await list(t.ownerClient)).data, [kept]);

    for (const id of [UNKNOWN_ID, MALFORMED_ID, kept.id]) {
      await expectProblem("DELETE", GUEST, await other.ownerClient.delete(`/guests/${id}`), 404, "not-found");
    }
    assert.deepEqual((await read(t.ownerClient, kept.id)).body, kept, "another tenant cannot erase it");
  }));

Deno.test("DELETE /v1/guests/{id}: 409 while a reservation refers to the guest, even a cancelled one; 204 once none does", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("guest-delete409");
    const { guest, reservation } = await createStay(t.ownerClient);
    const before = await read(t.ownerClient, guest.id);
    const path = `/guests/${guest.id}`;

    const refused = await t.ownerClient.delete(path);
    assert.match((await expectProblem("DELETE", GUEST, refused, 409, "still-referenced")).detail, /refer/);
    assert.deepEqual(await read(t.ownerClient, guest.id), before, "the guest is kept");
    const booking = await t.ownerClient.get(`/reservations/${reservation.id}`);
    assert.equal((await expectStatus<Schemas["Reservation"]>("GET", "/v1/reservations/{id}", booking, 200)).guestId, guest.id);

    await expectMinimal("POST", "/v1/reservations/{id}/cancel", await t.ownerClient.post(`/reservations/${reservation.id}/cancel`, {}), 204);
    await expectProblem("DELETE", GUEST, await t.ownerClient.delete(path), 409, "still-referenced");
    assert.deepEqual(await read(t.ownerClient, guest.id), before, "the guest is still kept");

    await expectStatus("DELETE", "/v1/reservations/{id}", await t.ownerClient.delete(`/reservations/${reservation.id}`), 204);
    await expectStatus("DELETE", GUEST, await t.ownerClient.delete(path), 204);
    await expectProblem("GET", GUEST, await t.ownerClient.get(path), 404, "not-found");
  }));

// ---------------------------------------------------------------- role matrix

Deno.test("role matrix: guests — staff list, create, read and update; only owners and admins delete", () =>
  withFixture(async ({ tenant, memberOf }) => {
    const t = await tenant("guest-roles");
    const admin = await memberOf(t, "admin");
    const staff = await memberOf(t, "staff");
    const staffApi = client(staff, t.tenantId);

    // Staff keep guest records.
    const created = await createGuest(staffApi, { firstName: "Staff", lastName: "Made" });
    const minimal = await staffApi.post("/guests", { firstName: "Also", lastName: "Staff" });
    await expectMinimal("POST", GUESTS, minimal, 201);
    const minimalId = resolveLocation("/guests", minimal).slice("/guests/".length);
    assert.deepEqual((await read(staffApi, created.id)).body, created);
    const patched = await staffApi.patch(`/guests/${created.id}`, { marketingConsent: true }, representation);
    const updated = await expectStatus<Guest>("PATCH", GUEST, patched, 200);
    assert.equal(updated.marketingConsentAt, updated.updatedAt);
    assert.deepEqual(ids(await list(staffApi)), [created.id, minimalId], "Made before Staff");

    // Erasing one is not theirs: refused before any query, and nothing changes.
    const refused = await staffApi.delete(`/guests/${created.id}`);
    assert.match((await expectProblem("DELETE", GUEST, refused, 403, "forbidden")).detail, /owners and admins/);
    await expectProblem("DELETE", GUEST, await staffApi.delete(`/guests/${UNKNOWN_ID}`), 403, "forbidden");
    assert.deepEqual((await read(staffApi, created.id)).body, updated);
    assert.equal((await list(staffApi)).pagination.total, 2);

    for (const manager of [t.owner, admin]) {
      const api = client(manager, t.tenantId);
      const own = await createGuest(api);
      assert.deepEqual((await read(api, own.id)).body, own);
      await expectMinimal("PATCH", GUEST, await api.patch(`/guests/${own.id}`, { notes: "Managed" }), 204);
      assert.equal((await list(api, `?q=${encodeURIComponent(own.lastName)}`)).pagination.total, 1);
      await expectStatus("DELETE", GUEST, await api.delete(`/guests/${own.id}`), 204);
      await expectProblem("GET", GUEST, await api.get(`/guests/${own.id}`), 404, "not-found");
    }
    // A manager erases what staff created.
    await expectStatus("DELETE", GUEST, await client(admin, t.tenantId).delete(`/guests/${created.id}`), 204);
    assert.deepEqual(ids(await list(staffApi)), [minimalId]);
  }));

// ---------------------------------------------------------------- the undeliverable mark

const MARK = "/v1/guests/{id}/email-undeliverable";

Deno.test("DELETE /v1/guests/{id}/email-undeliverable: a manager clears the mark (204, or 200 with the guest); an unmarked guest is left as it was; no client sets a mark", () =>
  withFixture(async ({ sql, tenant, memberOf }) => {
    const t = await tenant("guest-mark");
    const api = t.ownerClient;
    const guest = await createGuest(api);
    // As the provider's report marks it (private.record_delivery_events runs as the owner, as this connection does).
    await sql`update public.guests set email_undeliverable_at = '2026-11-20T08:00:00Z',
                                        email_undeliverable_reason = 'the mail bounced: 550 5.1.1 no such user'
              where id = ${guest.id}`;
    const { body: marked, etag } = await read(api, guest.id);
    assert.deepEqual([marked.emailUndeliverableAt, marked.emailUndeliverableReason],
      ["2026-11-20T08:00:00+00:00", "the mail bounced: 550 5.1.1 no such user"]);

    // Staff may not clear it; nobody may set it through the API.
    const staff = client(await memberOf(t, "staff"), t.tenantId);
    await expectProblem("DELETE", MARK, await staff.delete(`/guests/${guest.id}/email-undeliverable`), 403, "forbidden");
    await expectInvalid("PATCH", GUEST, await api.patch(`/guests/${guest.id}`, { emailUndeliverableAt: null }), "emailUndeliverableAt");
    await expectInvalid("POST", GUESTS, await api.post("/guests", { firstName: "A", lastName: "B", emailUndeliverableReason: "x" }),
      "emailUndeliverableReason");
    assert.equal((await read(api, guest.id)).etag, etag, "nothing changed");

    const cleared = await api.delete(`/guests/${guest.id}/email-undeliverable`);
    const { etag: clearedTag } = await expectMinimal("DELETE", MARK, cleared, 204);
    const after = await read(api, guest.id);
    assert.equal(after.etag, clearedTag);
    assert.deepEqual(after.body, { ...marked, emailUndeliverableAt: null, emailUndeliverableReason: null, updatedAt: after.body.updatedAt });
    const [row] = await sql<{ cleared_at: string | null }[]>`select email_undeliverable_cleared_at::text as cleared_at from public.guests where id = ${guest.id}`;
    assert.ok(row!.cleared_at, "the database stamped when it was cleared");

    // Again: nothing to clear, nothing written; the guest as it is.
    const again = await api.delete(`/guests/${guest.id}/email-undeliverable`, undefined, representation);
    assert.deepEqual(await expectStatus<Guest>("DELETE", MARK, again, 200), after.body);
    assert.equal(again.headers.get("etag"), after.etag, "its ETag unchanged");

    for (const id of [UNKNOWN_ID, MALFORMED_ID]) {
      await expectProblem("DELETE", MARK, await api.delete(`/guests/${id}/email-undeliverable`), 404, "not-found");
    }
  }));
