// Staff texts: the check-in alert (in the app and by push), the push payload a
// service worker receives (never over its size limit), and the notice to managers
// that a notification failed for good. Pure: no stack needed.
import assert from "node:assert/strict";
import {
  type CheckInAlertData,
  MAX_PUSH_PAYLOAD_BYTES,
  pushPayload,
  renderCheckInAlert,
  renderDeliveryFailedNotice,
} from "../../src/notifications/staff-text.ts";

function checkIn(): CheckInAlertData {
  return {
    locale: "en",
    guest: { firstName: "Ada", lastName: "Lovelace" },
    property: { name: "Casa Azul", timezone: "Europe/Lisbon" },
    unit: { name: "Room 3" },
    reservation: {
      id: "7d0c1a9e-2f4b-4c1e-9a55-0b6f0f1d2c3e",
      confirmationCode: "CA-7Q2X",
      checkIn: "2027-03-26",
      checkOut: "2027-03-29",
      adults: 2,
      children: 1,
      balance: 15000,
      currency: "EUR",
    },
    checkedInAt: "2027-03-26T15:42:10Z",
  };
}

const extra = { notificationId: "0b1c2d3e-4f50-4617-8293-a4b5c6d7e8f9", tenantId: "9f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a", templateKey: "check_in_alerts" };
const bytes = (text: string) => new TextEncoder().encode(text).length;

Deno.test("check-in alert: who, where, for how long, what is due and when, on the property's clock", () => {
  assert.deepEqual(renderCheckInAlert(checkIn()), {
    title: "Guest checked in: Ada Lovelace",
    body: "Room 3 at Casa Azul · CA-7Q2X\n" +
      "3 nights until Mon, Mar 29 · 2 adults, 1 child\n" +
      "Balance due: €150.00\n" +
      "Checked in Mar 26, 3:42 PM (local time)",
    url: "/reservations/7d0c1a9e-2f4b-4c1e-9a55-0b6f0f1d2c3e",
  });

  // No unit, one adult, one night, nothing due: no unit, no children, no balance line.
  const plain = checkIn();
  plain.unit = null;
  plain.reservation = { ...plain.reservation, checkOut: "2027-03-27", adults: 1, children: 0, balance: 0 };
  assert.equal(
    renderCheckInAlert(plain).body,
    "Casa Azul · CA-7Q2X\n1 night until Sat, Mar 27 · 1 adult\nChecked in Mar 26, 3:42 PM (local time)",
  );
  // Overpaid is not due either.
  plain.reservation = { ...plain.reservation, balance: -500 };
  assert.ok(!renderCheckInAlert(plain).body.includes("Balance"));
  // The money's own minor units.
  const yen = checkIn();
  yen.reservation = { ...yen.reservation, currency: "JPY", balance: 45000 };
  assert.ok(renderCheckInAlert(yen).body.includes("\nBalance due: ¥45,000\n"));
});

Deno.test("check-in alert: the time is the property's, across zones and the date line", () => {
  const at = (timezone: string, checkedInAt: string) => {
    const data = checkIn();
    data.property = { ...data.property, timezone };
    data.checkedInAt = checkedInAt;
    return renderCheckInAlert(data).body.split("\n").at(-1);
  };
  assert.equal(at("Europe/Lisbon", "2027-03-26T15:42:10Z"), "Checked in Mar 26, 3:42 PM (local time)");
  assert.equal(at("America/New_York", "2027-03-26T15:42:10Z"), "Checked in Mar 26, 11:42 AM (local time)");
  assert.equal(at("Pacific/Auckland", "2027-03-26T15:42:10Z"), "Checked in Mar 27, 4:42 AM (local time)");
  // An offset in the instant is honoured: 16:42 at +01:00 is 15:42 UTC.
  assert.equal(at("Europe/Lisbon", "2027-03-26T16:42:10+01:00"), "Checked in Mar 26, 3:42 PM (local time)");
  assert.throws(() => at("Europe/Lisbon", "yesterday"), { name: "TemplateError", message: '"yesterday" is not an RFC 3339 timestamp' });
});

Deno.test("check-in alert: values from the data stay on their line, and the url is a path whatever the id", () => {
  const data = checkIn();
  data.guest = { firstName: "Ada\n", lastName: "  Lovelace\r\nKing" };
  data.unit = { name: "Room\t3" };
  data.reservation = { ...data.reservation, id: "a/b?c" };
  const alert = renderCheckInAlert(data);
  assert.equal(alert.title, "Guest checked in: Ada Lovelace King");
  assert.ok(alert.body.startsWith("Room 3 at Casa Azul · CA-7Q2X\n"));
  assert.equal(alert.url, "/reservations/a%2Fb%3Fc");
  data.guest = { firstName: " ", lastName: "" };
  assert.equal(renderCheckInAlert(data).title, "Guest checked in");
});

Deno.test("pushPayload: the alert and its ids as JSON, as the service worker reads them", () => {
  const alert = renderCheckInAlert(checkIn());
  const payload = pushPayload(alert, extra);
  assert.deepEqual(JSON.parse(payload), { ...alert, ...extra });
  assert.deepEqual(Object.keys(JSON.parse(payload)), ["title", "body", "url", "notificationId", "tenantId", "templateKey"]);
  assert.ok(!payload.includes("…"));
});

Deno.test("pushPayload: never over 3,000 bytes of UTF-8: a long body is cut whole characters at a time, with an ellipsis", () => {
  assert.equal(MAX_PUSH_PAYLOAD_BYTES, 3000);
  const alert = renderCheckInAlert(checkIn());
  for (
    const [what, body] of [
      ["ASCII", "x".repeat(5000)],
      ["two-byte letters", "é".repeat(3000)],
      ["three-byte letters", "漢".repeat(2000)],
      ["emoji with a skin tone, four code points of bytes each", "👍🏽".repeat(1000)],
      ["flags, two regional indicators each", "🇵🇹".repeat(1000)],
      ["quotes and controls, which JSON escapes", '"\\\u0001'.repeat(1000)],
      ["a mix", "Room 3 · Casa Azul 🇵🇹 \"quoted\"\n".repeat(200)],
    ] as const
  ) {
    const payload = pushPayload({ ...alert, body }, extra);
    const size = bytes(payload);
    assert.ok(size <= MAX_PUSH_PAYLOAD_BYTES, `${what}: ${size} bytes`);
    // Cut no shorter than needed: the next character would not have fitted (none takes 60 bytes in JSON).
    assert.ok(size > MAX_PUSH_PAYLOAD_BYTES - 60, `${what}: only ${size} bytes`);
    const parsed = JSON.parse(payload);
    assert.deepEqual({ ...parsed, body: undefined }, { ...alert, ...extra, body: undefined }, what);
    assert.ok(parsed.body.endsWith("…"), what);
    const kept = parsed.body.slice(0, -1);
    assert.ok(body.startsWith(kept), `${what}: the body is not a start of the original`);
    // No character cut in two: what is kept is whole graphemes of the original.
    const graphemes = [...new Intl.Segmenter("en", { granularity: "grapheme" }).segment(body)].map((part) => part.segment);
    let whole = "";
    for (const grapheme of graphemes) {
      if (whole.length >= kept.length) break;
      whole += grapheme;
    }
    assert.equal(whole, kept, `${what}: a character was cut`);
  }
  // A body that fits exactly is left whole.
  const base = bytes(pushPayload({ ...alert, body: "" }, extra));
  const exact = "y".repeat(MAX_PUSH_PAYLOAD_BYTES - base);
  assert.equal(JSON.parse(pushPayload({ ...alert, body: exact }, extra)).body, exact);
  // One byte more, and the body gives up three letters for the ellipsis' three bytes.
  assert.equal(JSON.parse(pushPayload({ ...alert, body: exact + "y" }, extra)).body, "y".repeat(exact.length - 3) + "…");
  // Trailing spaces do not stay before the ellipsis.
  // (Each shift puts the cut at another letter of "word ", one of them just after the space.)
  for (let shift = 0; shift < 5; shift++) {
    const body = JSON.parse(pushPayload({ ...alert, body: "x".repeat(shift) + "word ".repeat(1000) }, extra)).body;
    assert.match(body, /\S…$/);
    assert.ok(bytes(pushPayload({ ...alert, body }, extra)) <= MAX_PUSH_PAYLOAD_BYTES);
  }
});

Deno.test("pushPayload: a title too long on its own is cut too, and ids that cannot fit are an error", () => {
  const alert = { title: "T".repeat(4000), body: "some body", url: "/reservations/1" };
  const payload = pushPayload(alert, extra);
  assert.ok(bytes(payload) <= MAX_PUSH_PAYLOAD_BYTES);
  const parsed = JSON.parse(payload);
  assert.equal(parsed.body, "");
  assert.match(parsed.title, /^T+…$/);
  assert.throws(() => pushPayload({ ...alert, url: `/reservations/${"x".repeat(3000)}` }, extra), /cannot fit 3000 bytes/);
});

Deno.test("delivery failed notice: what failed, to whom, why, and the notification to open", () => {
  assert.deepEqual(
    renderDeliveryFailedNotice({
      templateKey: "access_code_delivery",
      channel: "sms",
      recipientType: "guest",
      recipientLabel: "Ada Lovelace",
      reason: "the guest has no phone number",
      notificationId: "0b1c2d3e-4f50-4617-8293-a4b5c6d7e8f9",
    }),
    {
      title: "SMS to guest Ada Lovelace failed",
      body: "The door code was not delivered and will not be tried again.\nReason: the guest has no phone number",
      url: "/notifications/0b1c2d3e-4f50-4617-8293-a4b5c6d7e8f9",
    },
  );
  const notice = (fields: Partial<Parameters<typeof renderDeliveryFailedNotice>[0]>) =>
    renderDeliveryFailedNotice({
      templateKey: "checkin_reminder",
      channel: "email",
      recipientType: "guest",
      recipientLabel: null,
      reason: "the provider answered 400: invalid address",
      notificationId: "n-1",
      ...fields,
    });
  assert.equal(notice({}).title, "Email to a guest failed");
  assert.equal(notice({}).body, "The check-in welcome was not delivered and will not be tried again.\nReason: the provider answered 400: invalid address");
  assert.equal(notice({ channel: "push", recipientType: "user", recipientLabel: "sam@acme.example" }).title, "Push notification to team member sam@acme.example failed");
  assert.equal(notice({ channel: "in_app", recipientType: "admin" }).title, "In-app notification to an admin failed");
  assert.ok(notice({ templateKey: "nightly_summary" }).body.startsWith("The nightly summary was not delivered"));
  assert.ok(notice({ templateKey: "check_in_alerts" }).body.startsWith("The check-in alert was not delivered"));
  // A key, channel or kind of recipient added later shows as it is rather than failing the notice.
  assert.equal(notice({ channel: "fax", recipientType: "vendor", recipientLabel: "Bob" }).title, "fax to vendor Bob failed");
  assert.ok(notice({ templateKey: "payment_receipt" }).body.startsWith("The payment receipt was not delivered"));
  // The reason on one line, and cut when a provider's answer runs long; an empty one says so.
  assert.ok(notice({ reason: "gave up after 6 attempts:\n  timeout\r\n" }).body.endsWith("\nReason: gave up after 6 attempts: timeout"));
  const long = notice({ reason: "z".repeat(2000) }).body.split("Reason: ")[1]!;
  assert.equal([...long].length, 500);
  assert.ok(long.endsWith("…"));
  assert.ok(notice({ reason: "  " }).body.endsWith("\nReason: no reason was recorded"));
  assert.equal(notice({ recipientLabel: "Ada\nLovelace" }).title, "Email to guest Ada Lovelace failed");
  assert.equal(notice({ notificationId: "a b" }).url, "/notifications/a%20b");
});
