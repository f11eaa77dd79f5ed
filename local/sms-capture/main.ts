// A loopback double of Twilio's Programmable Messaging API (Messages resource) for
// tests and local runs, the SMS counterpart of local/sendgrid-capture.
//   POST   /2010-04-01/Accounts/{sid}/Messages.json   Twilio's contract: a form with To, From and
//                                  Body under Basic auth (account SID and auth token); 201 and the
//                                  message resource, or Twilio's error shape {code, message, more_info, status}
//   GET    /_capture/messages       the accepted messages, oldest first
//   GET    /_capture/requests       every attempt with the status it got
//   POST   /_capture/script         {responses: [{status, headers?, body?, delayMs?}]}: the next
//                                  sends get these answers in order, then 201 again
//   DELETE /_capture                forget everything, including a pending script
// Run with --port, --account-sid, --auth-token and --from (the one number the account may send from).
import { readFlags, requireFlag } from "../args.ts";
import { createCapture, json, loggingCalls } from "../capture.ts";

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

Deno.serve({ hostname: "127.0.0.1", port, onListen: () => {} }, loggingCalls((request) => {
  const { pathname } = new URL(request.url);
  const messages = MESSAGES_PATH.exec(pathname);
  if (messages) {
    if (request.method === "POST") return createMessage(request, decodeURIComponent(messages[1]!));
    return twilioError(405, 20004, "Method not allowed", { allow: "POST" });
  }
  return capture.control(request) ?? twilioError(404, 20404, "The requested resource was not found");
}));
