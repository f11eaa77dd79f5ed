// The in-app inbox end to end: GET /v1/inbox (the caller's own messages, newest first,
// paged, filtered), GET /v1/inbox/unread-count, POST /v1/inbox/{id}/read and
// POST /v1/inbox/read-all. The messages are put where the notifications worker puts them,
// with the admin connection; every answer is checked against the served contract. A user
// only ever sees and marks their own messages, by the table's row-level security: the
// tests below show it for members of one tenant, across tenants and for non-members.
import assert from "node:assert/strict";
import {
  client,
  expectInvalid,
  expectMinimal,
  expectPaging,
  expectProblem,
  expectStatus,
  MALFORMED_ID,
  representation,
  UNKNOWN_ID,
  withFixture,
  expectSignedInOnly,
  type RouteCall,
} from "../support/api.ts";
import {
  deliverToInbox,
  INBOX,
  type InboxMessage,
  listInbox,
  MARK_READ,
  markAllRead,
  markRead,
  READ_ALL,
  storedMessages,
  UNREAD_COUNT,
  unreadCount,
} from "../support/inbox.ts";

const ids = (rows: { id: string }[]) => rows.map((row) => row.id);

// ---------------------------------------------------------------- GET /v1/inbox

Deno.test("GET /v1/inbox: the caller's messages newest first (ties by id), in the list envelope, paged", () =>
  withFixture(async ({ sql, tenant, memberOf }) => {
    const t = await tenant("inbox-list");
    const staff = await memberOf(t, "staff");
    const api = client(staff, t.tenantId);
    assert.deepEqual(await listInbox(api), { data: [], pagination: { limit: 20, offset: 0, total: 0, hasMore: false } }, "an empty inbox");

    const oldest = await deliverToInbox(sql, t.tenantId, staff.id, { minutesAgo: 30, read: true, url: null });
    const failed = await deliverToInbox(sql, t.tenantId, staff.id, {
      minutesAgo: 20, templateKey: "delivery_failed", title: "An email could not be delivered", body: "To ana@guest.example",
    });
    // Two that landed at the same instant: the larger id first.
    const instant = new Date(Date.now() - 10 * 60_000).toISOString();
    const tied = [
      await deliverToInbox(sql, t.tenantId, staff.id, { at: instant }),
      await deliverToInbox(sql, t.tenantId, staff.id, { at: instant }),
    ].sort((x, y) => x.id < y.id ? 1 : -1);
    const newest = await deliverToInbox(sql, t.tenantId, staff.id, { minutesAgo: 1, url: "/reservations/42" });

    const order = [newest.id, ...tied.map((message) => message.id), failed.id, oldest.id];
    const all = await expectPaging((query) => listInbox(api, query), order,
      ["?limit=2", "?limit=2&offset=2", "?limit=3&offset=1", "?offset=5", "?limit=1&offset=9"]);
    for (let i = 1; i < all.data.length; i++) assert.ok(all.data[i - 1]!.createdAt >= all.data[i]!.createdAt, "newest first");

    const byId = new Map(all.data.map((message) => [message.id, message]));
    assert.deepEqual(byId.get(failed.id), {
      id: failed.id, notificationId: failed.notificationId, templateKey: "delivery_failed",
      title: "An email could not be delivered", body: "To ana@guest.example", url: "/reservations",
      readAt: null, createdAt: byId.get(failed.id)!.createdAt,
    });
    assert.equal(byId.get(newest.id)!.url, "/reservations/42");
    assert.equal(byId.get(oldest.id)!.url, null);
    assert.ok(byId.get(oldest.id)!.readAt! > byId.get(oldest.id)!.createdAt, "the read one has its readAt");
    assert.deepEqual((await listInbox(api, "?limit=100")).pagination, { limit: 100, offset: 0, total: 5, hasMore: false });
  }));

Deno.test("GET /v1/inbox: filters by unread (true or false) and templateKey (one or several, comma-separated)", () =>
  withFixture(async ({ sql, tenant }) => {
    const t = await tenant("inbox-filter");
    const ownerId = t.owner.id;
    const readAlert = await deliverToInbox(sql, t.tenantId, ownerId, { minutesAgo: 4, read: true });
    const readFailure = await deliverToInbox(sql, t.tenantId, ownerId, { minutesAgo: 3, read: true, templateKey: "delivery_failed" });
    const unreadAlert = await deliverToInbox(sql, t.tenantId, ownerId, { minutesAgo: 2 });
    const unreadFailure = await deliverToInbox(sql, t.tenantId, ownerId, { minutesAgo: 1, templateKey: "delivery_failed" });
    const cases: [string, { id: string }[]][] = [
      ["?unread=true", [unreadFailure, unreadAlert]],
      ["?unread=false", [readFailure, readAlert]],
      ["?templateKey=check_in_alerts", [unreadAlert, readAlert]],
      ["?templateKey=delivery_failed", [unreadFailure, readFailure]],
      ["?templateKey=check_in_alerts,delivery_failed", [unreadFailure, unreadAlert, readFailure, readAlert]],
      ["?templateKey= delivery_failed , check_in_alerts", [unreadFailure, unreadAlert, readFailure, readAlert]],
      ["?unread=true&templateKey=check_in_alerts", [unreadAlert]],
      ["?unread=false&templateKey=delivery_failed", [readFailure]],
    ];
    for (const [query, expected] of cases) {
      const page = await listInbox(t.ownerClient, query);
      assert.deepEqual(ids(page.data), ids(expected), query);
      assert.deepEqual(page.pagination, { limit: 20, offset: 0, total: expected.length, hasMore: false }, query);
    }
    const paged = await listInbox(t.ownerClient, "?unread=true&limit=1&offset=1");
    assert.deepEqual(paged, { data: paged.data, pagination: { limit: 1, offset: 1, total: 2, hasMore: false } });
    assert.deepEqual(ids(paged.data), [unreadAlert.id]);
  }));

Deno.test("GET /v1/inbox: 400 for a bad filter or page, a template no inbox holds, an unknown parameter", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("inbox-400");
    const cases: [string, string][] = [
      ["unread=yes", "unread"],
      ["unread=", "unread"],
      ["unread=TRUE", "unread"],
      ["unread=true&unread=false", "unread"],
      ["templateKey=checkin_reminder", "templateKey.0"],
      ["templateKey=check_in_alerts,nightly_summary", "templateKey.1"],
      ["templateKey=", "templateKey.0"],
      ["limit=0", "limit"],
      ["limit=101", "limit"],
      ["offset=-1", "offset"],
      ["read=false", "read"],
      ["userId=" + UNKNOWN_ID, "userId"],
    ];
    for (const [query, field] of cases) {
      await expectInvalid("GET", INBOX, await t.ownerClient.get(`/inbox?${query}`), field, query);
    }
    await expectProblem("GET", UNREAD_COUNT, await t.ownerClient.get("/inbox/unread-count?unread=true"), 400, "validation");
  }));

// ---------------------------------------------------------------- unread count and marks

Deno.test("GET /v1/inbox/unread-count: the caller's unread messages, following each mark", () =>
  withFixture(async ({ sql, tenant }) => {
    const t = await tenant("inbox-count");
    const api = t.ownerClient;
    assert.equal(await unreadCount(api), 0);
    const first = await deliverToInbox(sql, t.tenantId, t.owner.id, { minutesAgo: 3 });
    await deliverToInbox(sql, t.tenantId, t.owner.id, { minutesAgo: 2, templateKey: "delivery_failed" });
    await deliverToInbox(sql, t.tenantId, t.owner.id, { minutesAgo: 1, read: true });
    assert.equal(await unreadCount(api), 2);
    await markRead(api, first.id);
    assert.equal(await unreadCount(api), 1);
    await markAllRead(api);
    assert.equal(await unreadCount(api), 0);
    assert.deepEqual(await storedMessages(sql, t.tenantId, t.owner.id), { unread: 0, read: 3 });
  }));

Deno.test("POST /v1/inbox/{id}/read: 204 with an ETag, or 200 with the message under Prefer; marking again keeps the first readAt", () =>
  withFixture(async ({ sql, tenant }) => {
    const t = await tenant("inbox-mark");
    const api = t.ownerClient;
    const one = await deliverToInbox(sql, t.tenantId, t.owner.id, { minutesAgo: 2 });
    const other = await deliverToInbox(sql, t.tenantId, t.owner.id, { minutesAgo: 1 });
    const [before] = (await listInbox(api, "?unread=true")).data.filter((message) => message.id === one.id);
    assert.ok(before);

    const minimal = await api.post(`/inbox/${one.id}/read`);
    await expectMinimal("POST", MARK_READ, minimal, 204);
    const [after] = (await listInbox(api)).data.filter((message) => message.id === one.id) as InboxMessage[];
    assert.ok(after?.readAt, "marked read");
    assert.deepEqual({ ...after, readAt: null }, before, "nothing but readAt changed");

    // Again, twice: the first mark stays, and the answer is the same message.
    const again = await api.post(`/inbox/${one.id}/read`, undefined, representation);
    const marked = await expectStatus<InboxMessage>("POST", MARK_READ, again, 200);
    assert.equal(again.headers.get("preference-applied"), "return=representation");
    assert.deepEqual(marked, after);
    assert.equal(again.headers.get("etag"), minimal.headers.get("etag"), "the same representation, the same ETag");
    assert.deepEqual(await markRead(api, one.id), after);

    // The other message is untouched.
    assert.deepEqual(ids((await listInbox(api, "?unread=true")).data), [other.id]);
    const [stored] = await sql<{ same: boolean }[]>`
      select read_at = ${after.readAt}::text::timestamptz as same from public.inbox_messages where id = ${one.id}`;
    assert.equal(stored!.same, true, "the stored mark is the one answered");
  }));

Deno.test("POST /v1/inbox/read-all: marks each unread message of the caller in the tenant, keeps the read ones' readAt; again marks none", () =>
  withFixture(async ({ sql, tenant }) => {
    const t = await tenant("inbox-read-all");
    const api = t.ownerClient;
    assert.equal(await markAllRead(api), 0, "an empty inbox");
    const read = await deliverToInbox(sql, t.tenantId, t.owner.id, { minutesAgo: 5, read: true });
    for (const minutesAgo of [4, 3, 2]) await deliverToInbox(sql, t.tenantId, t.owner.id, { minutesAgo });
    const readAtBefore = (await listInbox(api)).data.find((message) => message.id === read.id)!.readAt;

    assert.equal(await markAllRead(api), 3);
    const page = await listInbox(api);
    assert.equal(page.data.filter((message) => message.readAt === null).length, 0, "none left unread");
    assert.equal(page.data.find((message) => message.id === read.id)!.readAt, readAtBefore, "a read message keeps its first mark");
    assert.equal(await markAllRead(api), 0, "nothing left to mark");
    // No body is read: one sent is ignored, as by every action without a body.
    await expectStatus("POST", READ_ALL, await api.post("/inbox/read-all", {}), 200);
  }));

// ---------------------------------------------------------------- isolation

Deno.test("inbox isolation: members of one tenant see, count and mark only their own messages; another's id is the same 404 as an unknown one", () =>
  withFixture(async ({ sql, tenant, memberOf }) => {
    const t = await tenant("inbox-isolation");
    const alice = await memberOf(t, "staff", "alice");
    const bob = await memberOf(t, "staff", "bob");
    const asAlice = client(alice, t.tenantId);
    const asBob = client(bob, t.tenantId);
    const alices = await deliverToInbox(sql, t.tenantId, alice.id, { minutesAgo: 2 });
    const bobs = [
      await deliverToInbox(sql, t.tenantId, bob.id, { minutesAgo: 3 }),
      await deliverToInbox(sql, t.tenantId, bob.id, { minutesAgo: 1, templateKey: "delivery_failed" }),
    ];

    assert.deepEqual(ids((await listInbox(asAlice)).data), [alices.id]);
    assert.deepEqual(ids((await listInbox(asBob)).data), [bobs[1]!.id, bobs[0]!.id]);
    assert.equal(await unreadCount(asAlice), 1);
    assert.equal(await unreadCount(asBob), 2);
    // The owner reads no member's inbox: theirs is empty.
    assert.deepEqual((await listInbox(t.ownerClient)).pagination.total, 0);
    assert.equal(await unreadCount(t.ownerClient), 0);

    // Bob's message by Alice: the 404 an unknown id gets, and a malformed one.
    const others = await expectProblem("POST", MARK_READ, await asAlice.post(`/inbox/${bobs[0]!.id}/read`), 404, "not-found");
    const unknown = await expectProblem("POST", MARK_READ, await asAlice.post(`/inbox/${UNKNOWN_ID}/read`), 404, "not-found");
    const malformed = await expectProblem("POST", MARK_READ, await asAlice.post(`/inbox/${MALFORMED_ID}/read`), 404, "not-found");
    assert.deepEqual(others, unknown, "another user's message answers as an unknown one");
    assert.deepEqual(malformed, unknown);
    await expectProblem("POST", MARK_READ, await t.ownerClient.post(`/inbox/${bobs[0]!.id}/read`), 404, "not-found");

    // Alice's read-all marks hers alone.
    assert.equal(await markAllRead(asAlice), 1);
    assert.deepEqual(await storedMessages(sql, t.tenantId, bob.id), { unread: 2, read: 0 }, "Bob's are untouched");
    assert.equal(await unreadCount(asBob), 2);
  }));

Deno.test("inbox across tenants: a user's messages in one tenant are not in their inbox in another; a non-member gets 403 as on every tenant route", () =>
  withFixture(async ({ sql, tenant, user }) => {
    const a = await tenant("inbox-tenant-a");
    const b = await tenant("inbox-tenant-b");
    // A's owner is a member of B as well.
    const both = a.owner;
    const inB = client(both, b.tenantId);
    await expectStatus("POST", "/v1/tenants/{tenantId}/members",
      await b.ownerClient.post(`/tenants/${b.tenantId}/members`, { email: both.email, role: "staff" }), 201);
    const inA = await deliverToInbox(sql, a.tenantId, both.id, { minutesAgo: 2 });
    const ofB = await deliverToInbox(sql, b.tenantId, both.id, { minutesAgo: 1 });

    assert.deepEqual(ids((await listInbox(a.ownerClient)).data), [inA.id]);
    assert.deepEqual(ids((await listInbox(inB)).data), [ofB.id]);
    assert.equal(await unreadCount(inB), 1);
    // A's message named in B is unknown there, and stays unread.
    await expectProblem("POST", MARK_READ, await inB.post(`/inbox/${inA.id}/read`), 404, "not-found");
    assert.equal(await markAllRead(inB), 1);
    assert.deepEqual(await storedMessages(sql, a.tenantId, both.id), { unread: 1, read: 0 });

    // Outside the tenant the request names: 403 before anything is read or marked.
    const stranger = client(await user("inbox-stranger"), a.tenantId);
    const bsOwnerInA = client(b.owner, a.tenantId);
    for (const outsider of [stranger, bsOwnerInA]) {
      await expectProblem("GET", INBOX, await outsider.get("/inbox"), 403, "forbidden");
      await expectProblem("GET", UNREAD_COUNT, await outsider.get("/inbox/unread-count"), 403, "forbidden");
      await expectProblem("POST", MARK_READ, await outsider.post(`/inbox/${inA.id}/read`), 403, "forbidden");
      await expectProblem("POST", READ_ALL, await outsider.post("/inbox/read-all"), 403, "forbidden");
    }
    assert.deepEqual(await storedMessages(sql, a.tenantId, both.id), { unread: 1, read: 0 }, "nothing was marked");
  }));

Deno.test("inbox: 401 without a token and after the session ended", () =>
  withFixture(async ({ sql, tenant }) => {
    const t = await tenant("inbox-401");
    const message = await deliverToInbox(sql, t.tenantId, t.owner.id);
    const calls: RouteCall[] = [
      ["GET", INBOX, (api) => api.get("/inbox")],
      ["GET", UNREAD_COUNT, (api) => api.get("/inbox/unread-count")],
      ["POST", MARK_READ, (api) => api.post(`/inbox/${message.id}/read`)],
      ["POST", READ_ALL, (api) => api.post("/inbox/read-all")],
    ];
    await expectSignedInOnly(calls, t.tenantId, t.owner, t.ownerClient);
    assert.deepEqual(await storedMessages(sql, t.tenantId, t.owner.id), { unread: 1, read: 0 }, "nothing was marked");
  }));
