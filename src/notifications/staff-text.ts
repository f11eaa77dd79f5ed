// The texts staff read in the app and in push notifications: the check-in alert
// and the notice that a notification failed for good. Pure, no I/O. Each is a
// title, a plain-text body (lines, no markup: the app and the service worker
// show it as text) and a relative app path to open. pushPayload turns one into
// what a service worker receives, small enough for Web Push.

import { countFormatter, formatShortDate, formatShortInstant, moneyFormatter, nightsBetween, usableLocale } from "./format.ts";

export interface StaffAlert {
  title: string;
  body: string;
  /** A path in the app, relative to its origin: /reservations/<id>, /notifications/<id>. */
  url: string;
}

export interface CheckInAlertData {
  /** "en" for staff for now. */
  locale: string;
  guest: { firstName: string; lastName: string };
  property: { name: string; timezone: string };
  unit: { name: string } | null;
  reservation: {
    id: string;
    confirmationCode: string;
    /** "YYYY-MM-DD", the property's calendar dates. */
    checkIn: string;
    checkOut: string;
    adults: number;
    children: number;
    /** In the currency's minor units. */
    balance: number;
    currency: string;
  };
  /** RFC 3339 instant. */
  checkedInAt: string;
}

/**
 * "Guest checked in: Ada Lovelace", with where (unit, property, confirmation
 * code), for how long and how many, the balance still due if any, and when, on
 * the property's clock. Throws TemplateError for a date, time or amount that is
 * not one.
 */
export function renderCheckInAlert(data: CheckInAlertData): StaffAlert {
  const locale = usableLocale(data.locale);
  const { guest, property, unit, reservation } = data;
  const count = countFormatter(locale);
  const fullName = oneLine(`${guest.firstName} ${guest.lastName}`);
  const guests = [
    count(reservation.adults, "adult", "adults"),
    ...(reservation.children > 0 ? [count(reservation.children, "child", "children")] : []),
  ].join(", ");
  const nights = count(nightsBetween(reservation.checkIn, reservation.checkOut), "night", "nights");
  const where = unit?.name.trim() ? `${oneLine(unit.name)} at ${oneLine(property.name)}` : oneLine(property.name);
  const lines = [
    `${where} · ${oneLine(reservation.confirmationCode)}`,
    `${nights} until ${formatShortDate(locale, reservation.checkOut)} · ${guests}`,
    ...(reservation.balance > 0 ? [`Balance due: ${moneyFormatter(locale, reservation.currency)(reservation.balance)}`] : []),
    `Checked in ${formatShortInstant(locale, property.timezone, data.checkedInAt)} (local time)`,
  ];
  return {
    title: fullName ? `Guest checked in: ${fullName}` : "Guest checked in",
    body: lines.join("\n"),
    url: `/reservations/${encodeURIComponent(reservation.id)}`,
  };
}

export interface DeliveryFailedNoticeData {
  templateKey: string;
  channel: string;
  recipientType: string;
  /** Who it was for, as people know them (a guest's name, a member's email); null when there is none. */
  recipientLabel: string | null;
  /** Why it failed: the worker's or the provider's words. */
  reason: string;
  notificationId: string;
}

// How a manager knows each template, channel and kind of recipient; a value not
// listed (a key added later) shows as it is rather than failing the notice.
const templateNames: Readonly<Record<string, string>> = {
  checkin_reminder: "check-in welcome",
  checkout_summary: "check-out summary",
  reservation_cancelled: "cancellation notice",
  access_code_delivery: "door code",
  nightly_summary: "nightly summary",
  check_in_alerts: "check-in alert",
};
const channelNames: Readonly<Record<string, string>> = {
  email: "Email",
  sms: "SMS",
  push: "Push notification",
  in_app: "In-app notification",
};
// The recipient with a name after it, and without one.
const recipientNames: Readonly<Record<string, readonly [named: string, unnamed: string]>> = {
  guest: ["guest", "a guest"],
  user: ["team member", "a team member"],
  admin: ["admin", "an admin"],
  system: ["system", "the system"],
};

// A provider's reason can be a long answer; the notice links to the notification for all of it.
const MAX_REASON_GRAPHEMES = 500;

/**
 * What a tenant's managers read in their inbox when a notification failed for
 * good: "SMS to guest Ada Lovelace failed", the template and the reason, and the
 * notification to open.
 */
export function renderDeliveryFailedNotice(data: DeliveryFailedNoticeData): StaffAlert {
  const channel = channelNames[data.channel] ?? oneLine(data.channel);
  const [named, unnamed] = recipientNames[data.recipientType] ?? [oneLine(data.recipientType), oneLine(data.recipientType)];
  const label = data.recipientLabel === null ? "" : oneLine(data.recipientLabel);
  const template = templateNames[data.templateKey] ?? oneLine(data.templateKey).replace(/_/g, " ");
  const reason = truncateGraphemes(oneLine(data.reason), MAX_REASON_GRAPHEMES) || "no reason was recorded";
  return {
    title: `${channel} to ${label ? `${named} ${label}` : unnamed} failed`,
    body: `The ${template} was not delivered and will not be tried again.\nReason: ${reason}`,
    url: `/notifications/${encodeURIComponent(data.notificationId)}`,
  };
}

// A URL's host, for a notice that names an address without its path, which may carry a
// secret; `otherwise` when the text is not a URL.
function hostOf(url: string, otherwise: string): string {
  try {
    return new URL(url).host;
  } catch {
    return otherwise;
  }
}

export interface WebhookDisabledNoticeData {
  subscriptionId: string;
  url: string;
  reason: "gone" | "failing";
}

// A webhook subscription the worker disabled: which endpoint, why, and where to turn it
// back on. The URL's host names it; its path may carry a receiver's token, so it is left out.
export function renderWebhookDisabledNotice(data: WebhookDisabledNoticeData): StaffAlert {
  const host = hostOf(data.url, "an endpoint");
  const why = data.reason === "gone"
    ? "It answered 410 Gone: the receiver says it wants no more events."
    : "Every delivery to it has failed for a day.";
  return {
    title: `Webhooks to ${oneLine(host)} were turned off`,
    body: `${why} No more events are sent to it until an owner or admin enables it again; check the endpoint, then ` +
      "redeliver what it missed.",
    url: `/webhook-subscriptions/${encodeURIComponent(data.subscriptionId)}`,
  };
}

export interface CalendarImportFailingNoticeData {
  calendarImportId: string;
  name: string;
  url: string;
  failures: number;
  error: string | null;
}

// A calendar import whose feed failed three fetches in a row: the unit's holds from it are
// as the last good fetch left them, so a booking taken elsewhere since may not be held.
// The feed is named by its import's name and host; its path often carries the other
// service's secret.
export function renderCalendarImportFailingNotice(data: CalendarImportFailingNoticeData): StaffAlert {
  const host = hostOf(data.url, "its address");
  const why = data.error ? ` The last attempt: ${oneLine(data.error)}` : "";
  return {
    title: `The calendar ${oneLine(data.name)} cannot be imported`,
    body: `${data.failures} fetches in a row from ${oneLine(host)} failed.${why} The unit keeps the holds of the last ` +
      "calendar that could be read: bookings made elsewhere since then do not block it. Check the calendar's address.",
    url: `/calendar-imports/${encodeURIComponent(data.calendarImportId)}`,
  };
}

/**
 * The most a push payload may take, in UTF-8 bytes. Web Push carries at most 4096
 * bytes of encrypted record, of which the encryption's header, padding and tag
 * take about a hundred; 3,000 leaves room for that and for the push service's
 * own limits, which some set lower than the standard's.
 */
export const MAX_PUSH_PAYLOAD_BYTES = 3000;

export interface PushPayloadExtra {
  notificationId: string;
  tenantId: string;
  templateKey: string;
}

/**
 * The JSON text a service worker receives as the push message's data:
 *
 *   { "title": string, "body": string, "url": string,
 *     "notificationId": string, "tenantId": string, "templateKey": string }
 *
 * url is the app path to open on a click; the ids let the app mark the
 * notification read. It is never longer than MAX_PUSH_PAYLOAD_BYTES in UTF-8:
 * a body too long for it is cut at a character boundary (never inside a
 * character a reader sees as one, like an emoji with its modifiers) and ends in
 * "…"; if the title alone is too long, so is the title. Throws only when the
 * url and the ids take the room themselves, which no app path and id do.
 */
export function pushPayload(alert: StaffAlert, extra: PushPayloadExtra): string {
  const encode = (title: string, body: string) =>
    JSON.stringify({
      title,
      body,
      url: alert.url,
      notificationId: extra.notificationId,
      tenantId: extra.tenantId,
      templateKey: extra.templateKey,
    });
  const fits = (json: string) => utf8Bytes(json) <= MAX_PUSH_PAYLOAD_BYTES;

  const whole = encode(alert.title, alert.body);
  if (fits(whole)) return whole;
  const body = shortenToFit(alert.body, (candidate) => fits(encode(alert.title, candidate)));
  if (body !== null) return encode(alert.title, body);
  const title = shortenToFit(alert.title, (candidate) => fits(encode(candidate, "")));
  if (title !== null) return encode(title, "");
  throw new Error(`a push payload for ${alert.url} cannot fit ${MAX_PUSH_PAYLOAD_BYTES} bytes even without its title and body`);
}

const utf8 = new TextEncoder();

function utf8Bytes(text: string): number {
  return utf8.encode(text).length;
}

const graphemes = new Intl.Segmenter("en", { granularity: "grapheme" });

function graphemesOf(text: string): string[] {
  return Array.from(graphemes.segment(text), (part) => part.segment);
}

// The text cut to its longest start that fits, with an ellipsis, or null when not even
// the ellipsis alone fits. How much a start takes grows with its length (trailing
// spaces dropped), so a binary search over the graphemes finds it.
function shortenToFit(text: string, fits: (candidate: string) => boolean): string | null {
  const parts = graphemesOf(text);
  const shortened = (kept: number) => `${parts.slice(0, kept).join("").trimEnd()}…`;
  if (!fits(shortened(0))) return null;
  let low = 0; // fits
  let high = parts.length; // the whole text, which does not
  while (high - low > 1) {
    const middle = Math.floor((low + high) / 2);
    if (fits(shortened(middle))) low = middle;
    else high = middle;
  }
  return shortened(low);
}

function truncateGraphemes(text: string, max: number): string {
  const parts = graphemesOf(text);
  return parts.length <= max ? text : `${parts.slice(0, max - 1).join("").trimEnd()}…`;
}

// A value from the data on one line: its line breaks, tabs and other controls become single spaces.
function oneLine(value: string): string {
  // deno-lint-ignore no-control-regex
  return value.replace(/[\s\u0000-\u001f\u007f]+/g, " ").trim();
}
