// A loopback double of Twilio's Programmable Messaging API (Messages resource) for
// tests and local runs, the SMS counterpart of local/sendgrid-capture.
//   POST   /2010-04-01/Accounts/{sid}/Messages.json   Twilio's contract: a form with To, From and
//                                  Body under Basic auth (account SID and auth token); 201 and the
//                                  message resource, or Twilio's error shape {code, message, more_info, status}
//   GET    /_capture/messages       the accepted messages, oldest first
//   GET    /_capture/requests       every attempt with the status it got
//   POST   /_capture/script         {responses: [{status, headers?, body?, delayMs?}]}: the next
//                                  sends get these answers in order, then 201 again
//   POST   /_capture/fates          {fates: [{events, post?, duplicate?, delayMs?}]}: what becomes
//                                  of the next accepted messages, in order, then the default
//   GET    /_capture/reports        every status callback, its form and the answers it got
//   GET    /_capture/pending-reports  {pending}: accepted messages whose callbacks are not all posted yet
//   DELETE /_capture                forget everything, including a pending script and fates
// Run with --port, --account-sid, --auth-token and --from (the one number the account may send from).
//
// A message created with a StatusCallback URL gets Twilio's status callbacks there: one
// form POST per status it reaches (AccountSid, ApiVersion, From, To, MessageSid, SmsSid,
// MessageStatus, SmsStatus, and ErrorCode for undelivered and failed), signed as Twilio
// signs a request (X-Twilio-Signature: base64 of HMAC-SHA1, keyed with the auth token, of
// the URL followed by each parameter's name and value sorted by name). By default sent,
// then delivered, each 200 ms apart; a fate names other statuses ({status: "undelivered",
// errorCode: "30003"}), posts them last first, or each twice. A callback answered with a
// 5xx, or not at all, is tried again, up to three times more, as Twilio retries its
// webhooks.
import { Buffer } from "node:buffer";
import { createHmac } from "node:crypto";
import { readFlags, requireFlag } from "../args.ts";
import { createCapture, type Fate, json, loggingCalls, postsOf, sleep } from "../capture.ts";

type Attempt = {
  receivedAt: string;
  status: number;
  sid: string | null;
  // The account named in the path.
  accountSid: string;
  // The form as sent: To, From, Body and anything else.
  params: Record<string, string>;
};

const flags = readFlags(Deno.args);
const port = Number(requireFlag(flags, "port"));
const account = { sid: requireFlag(flags, "account-sid"), token: requireFlag(flags, "auth-token") };
const fromNumber = requireFlag(flags, "from");

const capture = createCapture<Attempt>(201);

const MESSAGES_PATH = /^\/2010-04-01\/Accounts\/([^/]+)\/Messages\.json$/;
const E164 = /^\+[1-9][0-9]{1,14}$/;
const MAX_BODY = 1600;

// Twilio's REST error body.
function twilioError(status: number, code: number, message: string, headers: Record<string, string> = {}): Response {
  return json(status, { code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status }, headers);
}

// Basic auth with the account's SID as the user and its auth token as the password,
// for the account the path names.
function authenticated(authorization: string, pathSid: string): boolean {
  const match = /^Basic ([A-Za-z0-9+/=]+)$/.exec(authorization);
  if (!match) return false;
  let decoded: string;
  try {
    decoded = atob(match[1]!);
  } catch {
    return false;
  }
  const colon = decoded.indexOf(":");
  if (colon < 0) return false;
  const [user, password] = [decoded.slice(0, colon), decoded.slice(colon + 1)];
  return user === account.sid && password === account.token && pathSid === account.sid;
}

async function readForm(request: Request): Promise<Record<string, string>> {
  const type = request.headers.get("content-type") ?? "";
  if (!type.toLowerCase().startsWith("application/x-www-form-urlencoded")) {
    await request.body?.cancel();
    return {};
  }
  return Object.fromEntries(new URLSearchParams(await request.text()));
}

// GSM-7 fits 160 characters in one segment (153 when split), anything else 70 (67).
function segments(body: string): number {
  const gsm = /^[\n\r A-Za-z0-9@£$¥èéùìòÇØøÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ!"#¤%&'()*+,\-./:;<=>?¡ÄÖÑÜ§¿äöñüà]*$/.test(body);
  const [single, part] = gsm ? [160, 153] : [70, 67];
  const length = [...body].length;
  return length <= single ? 1 : Math.ceil(length / part);
}

// The checks Twilio documents for a Messages create, enough to refuse what it refuses.
function validate(params: Record<string, string>): Response | null {
  const to = params.To ?? "";
  const from = params.From ?? "";
  const body = params.Body ?? "";
  if (to === "") return twilioError(400, 21604, "A 'To' phone number is required.");
  if (from === "") return twilioError(400, 21603, "A 'From' phone number is required.");
  if (body === "") return twilioError(400, 21602, "Message body is required.");
  if (!E164.test(to)) return twilioError(400, 21211, `Invalid 'To' Phone Number: ${to}`);
  if (from !== fromNumber) {
    return twilioError(400, 21606, `The From phone number ${from} is not a valid, SMS-capable inbound phone number or short code for your account.`);
  }
  if ([...body].length > MAX_BODY) {
    return twilioError(400, 21617, `The concatenated message body exceeds the ${MAX_BODY} character limit.`);
  }
  return null;
}

function messageSid(): string {
  return `SM${crypto.randomUUID().replaceAll("-", "")}`;
}

async function createMessage(request: Request, pathSid: string): Promise<Response> {
  const receivedAt = new Date().toISOString();
  const authorization = request.headers.get("authorization") ?? "";
  const params = await readForm(request);
  const record = (status: number, sid: string | null) =>
    capture.record({ receivedAt, status, sid, accountSid: pathSid, params });

  if (!authenticated(authorization, pathSid)) {
    record(401, null);
    return twilioError(401, 20003, "Authenticate", { "www-authenticate": 'Basic realm="Twilio API"' });
  }

  const scripted = await capture.nextScripted();
  if (scripted) {
    if (scripted.status < 200 || scripted.status > 299) {
      record(scripted.status, null);
      if (scripted.body !== undefined) return json(scripted.status, scripted.body, scripted.headers);
      return twilioError(scripted.status, scripted.status === 429 ? 20429 : 20500, `scripted ${scripted.status}`, scripted.headers);
    }
  }

  const refused = validate(params);
  if (refused) {
    record(refused.status, null);
    return refused;
  }
  const sid = messageSid();
  record(201, sid);
  const callback = params.StatusCallback;
  if (callback) {
    const fate = capture.nextFate() ?? { events: [{ status: "sent" }, { status: "delivered" }] };
    capture.track((live) => reportOn(live, callback, { sid, accountSid: pathSid, from: params.From!, to: params.To! }, fate));
  }
  const now = new Date().toUTCString().replace("GMT", "+0000");
  return json(201, {
    sid,
    account_sid: pathSid,
    to: params.To,
    from: params.From,
    body: params.Body,
    status: "queued",
    direction: "outbound-api",
    num_segments: String(segments(params.Body!)),
    num_media: "0",
    price: null,
    price_unit: "USD",
    error_code: null,
    error_message: null,
    api_version: "2010-04-01",
    date_created: now,
    date_updated: now,
    date_sent: null,
    uri: `/2010-04-01/Accounts/${pathSid}/Messages/${sid}.json`,
  }, scripted?.headers);
}

// Twilio's RawDlrDoneDate: the carrier's receipt time, YYMMDDhhmm.
function dlrDoneDate(at: Date): string {
  return at.toISOString().replace(/[-T:]/g, "").slice(2, 12);
}

// The status callbacks of one message, each a form of its own, posted as the fate says.
async function reportOn(
  live: () => boolean,
  url: string,
  message: { sid: string; accountSid: string; from: string; to: string },
  fate: Fate,
) {
  const callbacks = fate.events.map((event) => {
    const status = String(event.status ?? "delivered");
    const form: Record<string, string> = {
      AccountSid: message.accountSid, ApiVersion: "2010-04-01", From: message.from, To: message.to,
      MessageSid: message.sid, SmsSid: message.sid, MessageStatus: status, SmsStatus: status,
    };
    if (event.errorCode !== undefined) form.ErrorCode = String(event.errorCode);
    if (status === "delivered" || status === "undelivered") form.RawDlrDoneDate = dlrDoneDate(new Date());
    return form;
  });
  for (const [index, batch] of postsOf(callbacks, fate, "separately").entries()) {
    await sleep(index === 0 ? fate.delayMs ?? 200 : fate.gapMs ?? 200);
    for (const form of batch) {
      await capture.report(live, url, form, () => Promise.resolve(signedCallback(url, form)), {
        retry: (status) => status === "unreachable" || status >= 500, maxAttempts: 4, firstPauseMs: 250,
      });
    }
  }
}

// A callback as Twilio signs it, with node:crypto's HMAC.
function signedCallback(url: string, form: Record<string, string>): RequestInit {
  const signed = url + Object.keys(form).sort().map((name) => name + form[name]).join("");
  return {
    method: "POST",
    headers: {
      "content-type": "application/x-www-form-urlencoded; charset=utf-8",
      "user-agent": "TwilioProxy/1.1",
      "x-twilio-signature": createHmac("sha1", Buffer.from(account.token)).update(signed).digest("base64"),
    },
    body: new URLSearchParams(form).toString(),
  };
}

Deno.serve({ hostname: "127.0.0.1", port, onListen: () => {} }, loggingCalls((request) => {
  const { pathname } = new URL(request.url);
  const messages = MESSAGES_PATH.exec(pathname);
  if (messages) {
    if (request.method === "POST") return createMessage(request, decodeURIComponent(messages[1]!));
    return twilioError(405, 20004, "Method not allowed", { allow: "POST" });
  }
  return capture.control(request) ?? twilioError(404, 20404, "The requested resource was not found");
}));
