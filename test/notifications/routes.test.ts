// The notification routes end to end: GET /v1/notifications (newest first, paged,
// filtered, the tenant's only), GET /v1/notifications/{id}, and the tenant's
// preferences (GET, and PATCH that creates or updates the one row per template and
// channel). Notifications come from the real triggers and the worker; every response
// is checked against the served contract.
import assert from "node:assert/strict";
import {
  type Client,
  client,
  expectInvalid,
  expectMinimal,
  expectPaging,
  expectProblem,
  expectStatus,
  MALFORMED_ID,
  readOne,
  type Schemas,
  UNKNOWN_ID,
  withFixture,
  expectSignedInOnly,
  type RouteCall,
} from "../support/api.ts";
import { createStay, stepReservation } from "../support/domain.ts";
import {
  drainQueue,
  listNotifications,
  listPreferences,
  type Notification,
  NOTIFICATION,
  NOTIFICATIONS,
  notificationFor,
  type NotificationWithEvents,
  type Preference,
  PREFERENCES,
  runWorker,
  setPreference,
  summary,
} from "../support/notifications.ts";

// Four notifications from four changes, newest first: a cancel (pending), a check-out
// (pending), an access code (skipped: the tenant opted out of it) and a check-in (sent).
async function fourNotifications(api: Client, sql: Parameters<typeof drainQueue>[0]) {
  await drainQueue(sql);
  await setPreference(api, { templateKey: "access_code_delivery", channel: "email", enabled: false });
  const stayed = await createStay(api, { status: "confirmed" });
  const coded = await createStay(api, { status: "confirmed" });
  const cancelled = await createStay(api);

  await stepReservation(api, stayed.reservation.id, "check-in");
  const code = await api.post(`/reservations/${coded.reservation.id}/access-codes`, {});
  await expectMinimal("POST", "/v1/reservations/{id}/access-codes", code, 201);
  assert.deepEqual(await runWorker(), summary({ events: 2, read: 2, sent: 1, skipped: 1 }));
  await stepReservation(api, stayed.reservation.id, "check-out");
  await stepReservation(api, cancelled.reservation.id, "cancel");

  const checkin = await notificationFor(api, stayed.reservation.id, "checkin_reminder");
  const access = await notificationFor(api, coded.reservation.id, "access_code_delivery");
  const checkout = await notificationFor(api, stayed.reservation.id, "checkout_summary");
  const cancel = await notificationFor(api, cancelled.reservation.id, "reservation_cancelled");
  assert.deepEqual([checkin.status, access.status, checkout.status, cancel.status], ["sent", "skipped", "pending", "pending"]);
  return { stayed, coded, cancelled, checkin, access, checkout, cancel, newestFirst: [cancel, checkout, access, checkin] };
}

const ids = (rows: { id: string }[]) => rows.map((row) => row.id);

// ---------------------------------------------------------------- GET /v1/notifications

Deno.test("GET /v1/notifications: the tenant's notifications newest first, in the list envelope, paged; a staff member reads them too", () =>
  withFixture(async ({ sql, tenant, memberOf }) => {
    const t = await tenant("notifications-list");
    const four = await fourNotifications(t.ownerClient, sql);
    const staff = client(await memberOf(t, "staff"), t.tenantId);

    const order = ids(four.newestFirst);
    const all = await expectPaging((query) => listNotifications(staff, query), order,
      ["?limit=2", "?limit=2&offset=2", "?limit=3&offset=1", "?offset=4", "?limit=1&offset=10"]);
    assert.deepEqual(all.data, four.newestFirst, "the rows as each was read alone");
    for (let i = 1; i < all.data.length; i++) {
      assert.ok(all.data[i - 1]!.createdAt >= all.data[i]!.createdAt, "newest first");
    }
    assert.deepEqual(all.data.map((n) => n.tenantId), Array(4).fill(t.tenantId));
    const max = await listNotifications(staff, "?limit=100");
    assert.deepEqual(max.pagination, { limit: 100, offset: 0, total: 4, hasMore: false });
  }));

Deno.test("GET /v1/notifications: filters by status, templateKey (one or several, comma-separated), reservationId and deliveryState", () =>
  withFixture(async ({ sql, tenant }) => {
    const t = await tenant("notifications-filter");
    const { stayed, cancelled, checkin, access, checkout, cancel } = await fourNotifications(t.ownerClient, sql);
    const cases: [string, Notification[]][] = [
      ["?status=pending", [cancel, checkout]],
      ["?status=sent", [checkin]],
      ["?status=skipped", [access]],
      ["?status=failed", []],
      ["?status=sent,skipped", [access, checkin]],
      ["?templateKey=checkout_summary", [checkout]],
      ["?templateKey=checkin_reminder,reservation_cancelled", [cancel, checkin]],
      [`?reservationId=${stayed.reservation.id}`, [checkout, checkin]],
      [`?reservationId=${cancelled.reservation.id}`, [cancel]],
      [`?reservationId=${UNKNOWN_ID}`, []],
      [`?reservationId=${stayed.reservation.id}&status=sent`, [checkin]],
      [`?reservationId=${stayed.reservation.id}&templateKey=reservation_cancelled`, []],
      // What the provider reported after accepting it: the sent one was delivered.
      ["?deliveryState=delivered", [checkin]],
      ["?deliveryState=bounced,dropped,spam_report", []],
      ["?deliveryState=delivered,deferred&status=sent", [checkin]],
    ];
    for (const [query, expected] of cases) {
      const page = await listNotifications(t.ownerClient, query);
      assert.deepEqual(ids(page.data), ids(expected), query);
      assert.deepEqual(page.pagination, { limit: 20, offset: 0, total: expected.length, hasMore: false }, query);
    }
    const paged = await listNotifications(t.ownerClient, "?status=pending,sent&limit=1&offset=1");
    assert.deepEqual(ids(paged.data), [checkout.id]);
    assert.deepEqual(paged.pagination, { limit: 1, offset: 1, total: 3, hasMore: true });
  }));

Deno.test("GET /v1/notifications: 400 for a bad filter or page, a notification's template key only, an unknown parameter", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("notifications-400");
    const cases: [string, string][] = [
      // A list's error names the bad item, as every comma-separated filter does.
      ["status=delivered", "status.0"],
      ["status=", "status.0"],
      ["status=pending,bogus", "status.1"],
      ["status=pending&status=sent", "status"],
      ["templateKey=welcome", "templateKey.0"],
      // A preference under which nothing is sent is no notification's template.
      ["templateKey=checkin_reminder,marketing_emails", "templateKey.1"],
      ["reservationId=not-a-uuid", "reservationId"],
      // A status is no delivery state: sent stays the status, delivered is what followed.
      ["deliveryState=sent", "deliveryState.0"],
      ["deliveryState=delivered,opened", "deliveryState.1"],
      ["limit=0", "limit"],
      ["limit=101", "limit"],
      ["limit=abc", "limit"],
      ["offset=-1", "offset"],
      // An unknown parameter is named by its key.
      ["recipientId=" + UNKNOWN_ID, "recipientId"],
      ["sort=createdAt", "sort"],
    ];
    for (const [query, field] of cases) {
      await expectInvalid("GET", NOTIFICATIONS, await t.ownerClient.get(`/notifications?${query}`), field, query);
    }
  }));

Deno.test("GET /v1/notifications/{id}: 200 with an ETag; another tenant's, an unknown and a malformed id are the same 404", () =>
  withFixture(async ({ sql, tenant, user }) => {
    const a = await tenant("notification-a");
    const b = await tenant("notification-b");
    const four = await fourNotifications(a.ownerClient, sql);

    // Read by id, each is the list's row with its provider's reports: the sent one's
    // SendGrid (its double) reported processed, then delivered.
    for (const notification of four.newestFirst) {
      const { body } = await readOne<NotificationWithEvents>(a.ownerClient, NOTIFICATION, { id: notification.id });
      assert.deepEqual(body, { ...notification, events: body.events });
      assert.deepEqual(body.events.map((event) => event.event), notification === four.checkin ? ["delivered", "processed"] : []);
    }

    // Tenant B sees none of A's: a caller sees only its own tenant's notifications.
    const inB = await listNotifications(b.ownerClient);
    assert.deepEqual(inB, { data: [], pagination: { limit: 20, offset: 0, total: 0, hasMore: false } });
    assert.equal((await listNotifications(b.ownerClient, `?reservationId=${four.stayed.reservation.id}`)).pagination.total, 0);
    const other = await expectProblem("GET", NOTIFICATION, await b.ownerClient.get(`/notifications/${four.checkin.id}`), 404, "not-found");
    const unknown = await expectProblem("GET", NOTIFICATION, await b.ownerClient.get(`/notifications/${UNKNOWN_ID}`), 404, "not-found");
    const malformed = await expectProblem("GET", NOTIFICATION, await b.ownerClient.get(`/notifications/${MALFORMED_ID}`), 404, "not-found");
    assert.deepEqual(other, unknown, "another tenant's id answers as an unknown one");
    assert.deepEqual(malformed, unknown);

    // A's id under A's header, by someone who is not A's member: 403 before anything is read.
    const stranger = client(await user("stranger"), a.tenantId);
    await expectProblem("GET", NOTIFICATIONS, await stranger.get("/notifications"), 403, "forbidden");
    await expectProblem("GET", NOTIFICATION, await stranger.get(`/notifications/${four.checkin.id}`), 403, "forbidden");
    const wrongTenant = client(b.owner, a.tenantId);
    await expectProblem("GET", NOTIFICATIONS, await wrongTenant.get("/notifications"), 403, "forbidden");
  }));

Deno.test("notifications: 401 without a token and after the session ended", () =>
  withFixture(async ({ sql, tenant }) => {
    const t = await tenant("notifications-401");
    const calls: RouteCall[] = [
      ["GET", NOTIFICATIONS, (api) => api.get("/notifications")],
      ["GET", NOTIFICATION, (api) => api.get(`/notifications/${UNKNOWN_ID}`)],
      ["GET", PREFERENCES, (api) => api.get("/notifications/preferences")],
      ["PATCH", PREFERENCES, (api) => api.patch("/notifications/preferences", { templateKey: "checkin_reminder", channel: "email", enabled: false })],
    ];
    await expectSignedInOnly(calls, t.tenantId, t.owner, t.ownerClient);
    const [stored] = await sql<{ count: number }[]>`
      select count(*)::int as count from public.notification_preferences where tenant_id = ${t.tenantId}`;
    assert.equal(stored!.count, 0, "the refused PATCH stored nothing");
  }));

// ---------------------------------------------------------------- preferences

const PREFERENCE_PATH = "/notifications/preferences";

Deno.test("GET /v1/notifications/preferences: none stored at first; then every stored row, by template and channel", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("preferences-list");
    const api = t.ownerClient;
    assert.deepEqual(await listPreferences(api), { data: [], pagination: { limit: 100, offset: 0, total: 0, hasMore: false } });

    const stored: Preference[] = [];
    const pairs: Schemas["NotificationPreferenceSet"][] = [
      { templateKey: "marketing_emails", channel: "email", enabled: false },
      { templateKey: "checkin_reminder", channel: "sms", enabled: true },
      { templateKey: "checkin_reminder", channel: "email", enabled: false },
      { templateKey: "check_in_alerts", channel: "push", enabled: true },
      { templateKey: "nightly_summary", channel: "in_app", enabled: false },
    ];
    for (const pair of pairs) {
      const saved = await setPreference(api, pair);
      assert.deepEqual({ ...saved, updatedAt: "" }, { ...pair, updatedAt: "" });
      stored.push(saved);
    }
    const byKey = (p: Preference) => `${p.templateKey}/${p.channel}`;
    const expected = [...stored].sort((x, y) => byKey(x) < byKey(y) ? -1 : 1);
    const all = await listPreferences(api);
    assert.deepEqual(all, { data: expected, pagination: { limit: 100, offset: 0, total: 5, hasMore: false } });
    assert.deepEqual(all.data.map(byKey),
      ["check_in_alerts/push", "checkin_reminder/email", "checkin_reminder/sms", "marketing_emails/email", "nightly_summary/in_app"]);
    const page = await listPreferences(api, "?limit=2&offset=2");
    assert.deepEqual(page, { data: expected.slice(2, 4), pagination: { limit: 2, offset: 2, total: 5, hasMore: true } });
    const bad: [string, string][] = [["limit=0", "limit"], ["limit=101", "limit"], ["offset=-1", "offset"], ["channel=email", "channel"]];
    for (const [query, field] of bad) {
      await expectInvalid("GET", PREFERENCES, await api.get(`${PREFERENCE_PATH}?${query}`), field, query);
    }
  }));

Deno.test("PATCH /v1/notifications/preferences: creates the pair's row, a second PATCH updates that one row", () =>
  withFixture(async ({ sql, tenant }) => {
    const t = await tenant("preferences-upsert");
    const api = t.ownerClient;
    const other = await tenant("preferences-other");

    const first = await api.patch(PREFERENCE_PATH, { templateKey: "checkin_reminder", channel: "email", enabled: false }, {
      prefer: "return=representation",
    });
    const created = await expectStatus<Preference>("PATCH", PREFERENCES, first, 200);
    assert.equal(first.headers.get("preference-applied"), "return=representation");
    assert.match(first.headers.get("etag") ?? "", /^"[A-Za-z0-9_-]+"$/);
    assert.deepEqual({ ...created, updatedAt: "" }, { templateKey: "checkin_reminder", channel: "email", enabled: false, updatedAt: "" });

    // Without Prefer: 204 and the ETag of the row it left.
    const { etag } = await expectMinimal("PATCH", PREFERENCES,
      await api.patch(PREFERENCE_PATH, { templateKey: "checkin_reminder", channel: "email", enabled: true }), 204);
    assert.notEqual(etag, first.headers.get("etag"));

    const list = await listPreferences(api);
    assert.equal(list.pagination.total, 1, "one row for the pair");
    const [row] = list.data;
    assert.deepEqual({ ...row!, updatedAt: "" }, { templateKey: "checkin_reminder", channel: "email", enabled: true, updatedAt: "" });
    assert.ok(Date.parse(row!.updatedAt) > Date.parse(created.updatedAt), "updatedAt moved");
    const [count] = await sql<{ count: number }[]>`
      select count(*)::int as count from public.notification_preferences
      where tenant_id = ${t.tenantId} and template_key = 'checkin_reminder' and channel = 'email'`;
    assert.equal(count!.count, 1);

    // The same pair in another tenant is that tenant's own row.
    await setPreference(other.ownerClient, { templateKey: "checkin_reminder", channel: "email", enabled: false });
    assert.equal((await listPreferences(api)).data[0]!.enabled, true, "A's row is untouched");
    assert.equal((await listPreferences(other.ownerClient)).data[0]!.enabled, false);
  }));

Deno.test("PATCH /v1/notifications/preferences: 400 for a channel, template key or body the contract refuses, and nothing is stored", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("preferences-400");
    const api = t.ownerClient;
    const saved = await setPreference(api, { templateKey: "checkin_reminder", channel: "email", enabled: false });
    const valid = { templateKey: "checkin_reminder", channel: "email", enabled: true };
    const cases: [unknown, string][] = [
      [{ ...valid, channel: "fax" }, "channel"],
      [{ ...valid, channel: "EMAIL" }, "channel"],
      [{ ...valid, channel: null }, "channel"],
      [{ ...valid, templateKey: "welcome_email" }, "templateKey"],
      [{ ...valid, templateKey: "" }, "templateKey"],
      [{ ...valid, enabled: "false" }, "enabled"],
      [{ ...valid, enabled: null }, "enabled"],
      [{ templateKey: "checkin_reminder", channel: "email" }, "enabled"],
      [{ channel: "email", enabled: true }, "templateKey"],
      [{ ...valid, tenantId: UNKNOWN_ID }, "tenantId"],
      [{ ...valid, unexpected: 1 }, "unexpected"],
      [{}, "templateKey"],
      [[valid], "(body)"],
    ];
    for (const [body, field] of cases) {
      await expectInvalid("PATCH", PREFERENCES, await api.patch(PREFERENCE_PATH, body), field, JSON.stringify(body));
    }
    assert.deepEqual(await listPreferences(api), { data: [saved], pagination: { limit: 100, offset: 0, total: 1, hasMore: false } }, "nothing changed");
  }));

Deno.test("preferences: a staff member reads them (200) but may not change them (403); nothing changed", () =>
  withFixture(async ({ tenant, memberOf }) => {
    const t = await tenant("preferences-roles");
    const saved = await setPreference(t.ownerClient, { templateKey: "checkout_summary", channel: "email", enabled: false });
    const staff = client(await memberOf(t, "staff"), t.tenantId);
    const admin = client(await memberOf(t, "admin"), t.tenantId);

    assert.deepEqual(await listPreferences(staff), { data: [saved], pagination: { limit: 100, offset: 0, total: 1, hasMore: false } });
    for (const body of [
      { templateKey: "checkout_summary", channel: "email", enabled: true },
      { templateKey: "checkin_reminder", channel: "sms", enabled: false },
    ]) {
      await expectProblem("PATCH", PREFERENCES, await staff.patch(PREFERENCE_PATH, body), 403, "forbidden");
    }
    assert.deepEqual(await listPreferences(t.ownerClient), { data: [saved], pagination: { limit: 100, offset: 0, total: 1, hasMore: false } },
      "nothing changed");

    // An admin is a manager: allowed.
    const byAdmin = await setPreference(admin, { templateKey: "checkout_summary", channel: "email", enabled: true });
    assert.equal(byAdmin.enabled, true);
    assert.deepEqual((await listPreferences(staff)).data, [byAdmin]);
  }));
