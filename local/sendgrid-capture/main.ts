// A loopback double of SendGrid's v3 Mail Send endpoint and its signed Event Webhook, for
// tests and local runs.
//   POST   /v3/mail/send          SendGrid's contract: 202 and X-Message-Id, or its error shape
//                                 {errors: [{message, field, help}]}
//   GET    /_capture/messages     the accepted mails, oldest first: one per personalization, as
//                                 its recipient gets it (substitutions made, its subject and
//                                 custom_args), with the X-Message-Id of the request it came in
//   GET    /_capture/requests     every request as sent, with the status it got
//   POST   /_capture/script       {responses: [{status, headers?, body?, delayMs?}]}: the next
//                                 requests get these answers in order, then 202 again
//   POST   /_capture/refuse       {addresses: [...]}: every request naming one of them as a
//                                 recipient is refused from now on, with SendGrid's 400 for an
//                                 address it does not take, naming the personalization
//   POST   /_capture/fates        {fates: [{events, post?, duplicate?, delayMs?}]}: what becomes
//                                 of the next accepted mails (personalizations), in order, then
//                                 the default
//   GET    /_capture/reports      every event post, its events and the answers it got
//   GET    /_capture/pending-reports  {pending}: accepted mails whose events are not all posted yet
//   DELETE /_capture               forget everything, including a pending script, refusals and fates
//
// A request is checked as SendGrid checks it, and refused whole with a 400 for any fault:
// 1 to 1,000 personalizations, 1,000 recipients at most, each with a `to` of valid
// addresses, no address twice among them; a sender; a subject for every personalization
// (its own or the message's); content; substitutions of strings, at most 100 and 10,000
// bytes (keys and values, UTF-8) per personalization; custom_args of strings, under 10,000
// bytes with the message's. Each personalization is a mail of its own: its substitutions
// are made in the content and the subject (and again inside what was substituted, as
// SendGrid nests them), its custom_args are the message's with its own over them.
//
// With --event-webhook-url and the private key of the webhook's signing key pair in
// SENDGRID_EVENT_WEBHOOK_PRIVATE_KEY (base64 PKCS#8 DER; the stack makes the pair and gives
// the api function the public half), it plays SendGrid's Event Webhook: after accepting a
// request it posts events about each of its mails to that URL, as SendGrid does, as a JSON
// array of event objects with the mail's custom args as top-level fields, each with its
// own sg_event_id and an sg_message_id that is the request's X-Message-Id, a dot, and the
// mail's own suffix. Each post is signed as SendGrid signs it (ECDSA P-256 over SHA-256 of
// the timestamp header's value followed by the body, DER, base64 in
// X-Twilio-Email-Event-Webhook-Signature) when it is sent, and sent again on any answer but
// a 2xx (SendGrid keeps trying for a day; this double five times, from a quarter second
// apart). By default a mail is processed, then delivered, in one post 200 ms after it was
// accepted. A fate names other events ({event: "deferred"}, {event: "bounce", type:
// "bounce", reason, status}, {event: "dropped", reason: "Invalid"}, {event: "spamreport"};
// any field given is sent as given, the rest filled in), and posts them separately, last
// first, each twice, or with a pause between posts.
import { Buffer } from "node:buffer";
import { sign } from "node:crypto";
import { readFlags, requireFlag } from "../args.ts";
import { createCapture, type Fate, isRecord, json, loggingCalls, postsOf, sleep } from "../capture.ts";

type Attempt = {
  receivedAt: string;
  status: number;
  messageId: string | null;
  // The request as it came.
  body: unknown;
};

// One mail: what one personalization's recipients get.
type Mail = {
  receivedAt: string;
  status: number;
  // The X-Message-Id of the request it came in, and its place there.
  messageId: string;
  personalization: number;
  body: {
    personalizations: [Record<string, unknown>];
    from: unknown;
    subject: string;
    content: { type: string; value: string }[];
    custom_args: Record<string, string>;
    categories?: unknown;
  };
};

type FieldError = { message: string; field: string | null; help: string | null };

const MAX_PERSONALIZATIONS = 1000;
const MAX_RECIPIENTS = 1000;
const MAX_SUBSTITUTIONS = 100;
const MAX_SUBSTITUTION_BYTES = 10_000;
const MAX_CUSTOM_ARGS_BYTES = 10_000;
// How many times SendGrid substitutes again inside what it substituted.
const SUBSTITUTION_DEPTH = 4;

const flags = readFlags(Deno.args);
const port = Number(requireFlag(flags, "port"));
const eventWebhookUrl = flags.get("event-webhook-url") ?? null;
const signingKey = Deno.env.get("SENDGRID_EVENT_WEBHOOK_PRIVATE_KEY") || null;
if (eventWebhookUrl && !signingKey) throw new Error("--event-webhook-url needs SENDGRID_EVENT_WEBHOOK_PRIVATE_KEY");

const capture = createCapture<Attempt>(202, mailsOf);
// Addresses every request naming them is refused for (POST /_capture/refuse), lower case.
let refused = new Set<string>();

const utf8 = new TextEncoder();
const bytesOf = (record: Record<string, unknown>) =>
  Object.entries(record).reduce((sum, [key, value]) => sum + utf8.encode(key).length + utf8.encode(String(value)).length, 0);

function isEmailObject(value: unknown): value is { email: string } {
  return isRecord(value) && typeof value.email === "string" && /^[^@\s]+@[^@\s]+$/.test(value.email);
}

function isStringRecord(value: unknown): value is Record<string, string> {
  return isRecord(value) && Object.values(value).every((v) => typeof v === "string");
}

const personalizationsOf = (body: Record<string, unknown>) =>
  Array.isArray(body.personalizations) ? body.personalizations.filter(isRecord) : [];

const recipientsOf = (personalization: Record<string, unknown>) =>
  (["to", "cc", "bcc"] as const).flatMap((kind) => {
    const list = personalization[kind];
    return Array.isArray(list) ? list.map((address, index) => ({ kind, index, address })) : [];
  });

// The checks SendGrid documents for a Mail Send body, enough to reject what it rejects.
function validateMail(body: unknown): FieldError[] {
  const errors: FieldError[] = [];
  const fail = (field: string, message: string) => errors.push({ field, message, help: null });
  if (!isRecord(body)) return [{ field: null, message: "Bad Request", help: null }];

  const personalizations = body.personalizations;
  if (!Array.isArray(personalizations) || personalizations.length === 0) {
    fail("personalizations", "The personalizations field is required and must have at least one personalization.");
  } else if (personalizations.length > MAX_PERSONALIZATIONS) {
    fail("personalizations", `A request takes at most ${MAX_PERSONALIZATIONS} personalizations; this one has ${personalizations.length}.`);
  } else {
    const seen = new Set<string>();
    let recipients = 0;
    if (body.custom_args !== undefined && !isStringRecord(body.custom_args)) fail("custom_args", "Custom args must be strings.");
    personalizations.forEach((personalization, index) => {
      const at = `personalizations.${index}`;
      if (!isRecord(personalization) || !Array.isArray(personalization.to) || personalization.to.length === 0) {
        fail(`${at}.to`, "The to array is required for all personalization objects, and must have at least one email object with a valid email address.");
        return;
      }
      for (const { kind, index: position, address } of recipientsOf(personalization)) {
        recipients++;
        if (!isEmailObject(address)) {
          fail(`${at}.${kind}.${position}.email`, "Does not contain a valid address.");
          continue;
        }
        const key = address.email.toLowerCase();
        if (seen.has(key)) fail(`${at}.${kind}.${position}.email`, `${address.email} is named more than once among the personalizations.`);
        seen.add(key);
      }
      const { substitutions, custom_args: customArgs } = personalization;
      if (substitutions !== undefined) {
        if (!isStringRecord(substitutions)) {
          fail(`${at}.substitutions`, "Substitutions must be strings.");
        } else if (Object.keys(substitutions).length > MAX_SUBSTITUTIONS) {
          fail(`${at}.substitutions`, `A personalization takes at most ${MAX_SUBSTITUTIONS} substitutions.`);
        } else if (bytesOf(substitutions) > MAX_SUBSTITUTION_BYTES) {
          fail(`${at}.substitutions`, `A personalization's substitutions take at most ${MAX_SUBSTITUTION_BYTES} bytes; these take ${bytesOf(substitutions)}.`);
        }
      }
      if (customArgs !== undefined && !isStringRecord(customArgs)) {
        fail(`${at}.custom_args`, "Custom args must be strings.");
      } else if (bytesOf({ ...(isRecord(body.custom_args) ? body.custom_args : {}), ...customArgs }) >= MAX_CUSTOM_ARGS_BYTES) {
        fail(`${at}.custom_args`, `Custom args take less than ${MAX_CUSTOM_ARGS_BYTES} bytes.`);
      }
    });
    if (recipients > MAX_RECIPIENTS) fail("personalizations", `A request takes at most ${MAX_RECIPIENTS} recipients (to, cc and bcc).`);
  }
  if (!isEmailObject(body.from)) fail("from.email", "The from object must be provided for every email send. It is an object that requires the email parameter, but may also contain a name parameter.");

  const hasTemplate = typeof body.template_id === "string";
  const everyPersonalizationHasSubject = Array.isArray(personalizations) &&
    personalizations.every((p) => isRecord(p) && typeof p.subject === "string" && p.subject !== "");
  if (!hasTemplate && !(typeof body.subject === "string" && body.subject !== "") && !everyPersonalizationHasSubject) {
    fail("subject", "The subject is required. You can get around this requirement if you use a template with a subject defined or if every personalization has a subject defined.");
  }
  if (!hasTemplate) {
    const content = body.content;
    if (!Array.isArray(content) || content.length === 0) {
      fail("content", "Unless a valid template_id is provided, the content parameter is required. There must be at least one defined content block.");
    } else if (!content.every((c) => isRecord(c) && typeof c.type === "string" && typeof c.value === "string" && c.value !== "")) {
      fail("content", "The content value must be a string at least one character in length.");
    }
  }
  return errors;
}

// SendGrid's refusal of an address it does not take, for every recipient refused by a test.
function refusals(body: Record<string, unknown>): FieldError[] {
  return personalizationsOf(body).flatMap((personalization, index) =>
    recipientsOf(personalization)
      .filter(({ address }) => isEmailObject(address) && refused.has(address.email.toLowerCase()))
      .map(({ kind, index: position }) => ({
        field: `personalizations.${index}.${kind}.${position}.email`,
        message: "Does not contain a valid address.",
        help: null,
      }))
  );
}

// Every key by its value, and again inside what was put in, a few levels deep.
function substitute(text: string, substitutions: Record<string, string>): string {
  const keys = Object.keys(substitutions).filter((key) => key !== "").sort((a, b) => b.length - a.length);
  if (keys.length === 0) return text;
  const pattern = new RegExp(keys.map((key) => key.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|"), "g");
  let result = text;
  for (let depth = 0; depth <= SUBSTITUTION_DEPTH; depth++) {
    const next = result.replace(pattern, (key) => substitutions[key] ?? key);
    if (next === result) break;
    result = next;
  }
  return result;
}

// The mails of an accepted request: one per personalization, as its recipients get it.
function mailsOf(attempt: Attempt): Mail[] {
  const body = attempt.body as Record<string, unknown>;
  const content = Array.isArray(body.content) ? body.content.filter(isRecord) : [];
  return personalizationsOf(body).map((personalization, index) => {
    const substitutions = isStringRecord(personalization.substitutions) ? personalization.substitutions : {};
    const subject = typeof personalization.subject === "string" ? personalization.subject : String(body.subject ?? "");
    const { substitutions: _made, custom_args: _own, subject: _subject, ...recipients } = personalization;
    return {
      receivedAt: attempt.receivedAt,
      status: attempt.status,
      messageId: attempt.messageId!,
      personalization: index,
      body: {
        personalizations: [recipients],
        from: body.from,
        subject: substitute(subject, substitutions),
        content: content.map((part) => ({ type: String(part.type), value: substitute(String(part.value), substitutions) })),
        custom_args: customArgsOf(body, personalization),
        ...(body.categories !== undefined ? { categories: body.categories } : {}),
      },
    };
  });
}

// The message's custom args with the personalization's over them, as SendGrid merges them.
function customArgsOf(body: Record<string, unknown>, personalization: Record<string, unknown>): Record<string, string> {
  return {
    ...(isStringRecord(body.custom_args) ? body.custom_args : {}),
    ...(isStringRecord(personalization.custom_args) ? personalization.custom_args : {}),
  };
}

async function mailSend(request: Request): Promise<Response> {
  const receivedAt = new Date().toISOString();
  const authorization = request.headers.get("authorization") ?? "";
  let body: unknown = null;
  try {
    body = await request.json();
  } catch {
    body = null;
  }
  const record = (status: number, messageId: string | null) => capture.record({ receivedAt, status, messageId, body });

  if (!/^Bearer \S+$/.test(authorization)) {
    record(401, null);
    return json(401, { errors: [{ field: null, message: "authorization required", help: null }] });
  }

  const scripted = await capture.nextScripted();
  if (scripted) {
    if (scripted.status !== 202) {
      record(scripted.status, null);
      const errorBody = scripted.body ?? { errors: [{ field: null, message: `scripted ${scripted.status}`, help: null }] };
      return json(scripted.status, errorBody, scripted.headers);
    }
  }

  if (body === null) {
    record(400, null);
    return json(400, { errors: [{ field: null, message: "Bad Request", help: null }] });
  }
  const errors = validateMail(body);
  if (errors.length === 0) errors.push(...refusals(body as Record<string, unknown>));
  if (errors.length > 0) {
    record(400, null);
    return json(400, { errors });
  }
  const messageId = crypto.randomUUID().replaceAll("-", "").slice(0, 22);
  const attempt: Attempt = { receivedAt, status: 202, messageId, body };
  capture.record(attempt);
  if (eventWebhookUrl && signingKey) {
    const [url, key] = [eventWebhookUrl, signingKey];
    for (const mail of mailsOf(attempt)) {
      const fate = capture.nextFate() ?? { events: [{ event: "processed" }, { event: "delivered", response: "250 OK" }] };
      capture.track((live) => reportOn(live, mail, fate, url, key));
    }
  }
  return new Response(null, { status: 202, headers: { "x-message-id": messageId, ...scripted?.headers } });
}

// POST /_capture/refuse {addresses: [...]}: requests naming any of them are refused from now on.
async function refuse(request: Request): Promise<Response> {
  const body: unknown = await request.json().catch(() => null);
  const addresses = isRecord(body) && Array.isArray(body.addresses) && body.addresses.every((a) => typeof a === "string")
    ? body.addresses as string[]
    : null;
  if (!addresses) return json(400, { message: "expected {addresses: [string]}" });
  for (const address of addresses) refused.add(address.toLowerCase());
  return json(200, { refused: refused.size });
}

// SendGrid's event ids are 22 base64url characters.
function eventId(): string {
  return btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(16)))).replaceAll("+", "-").replaceAll("/", "_")
    .slice(0, 22);
}

// The events about one accepted mail, for each of its recipients, posted as the fate says.
// Event i happened i seconds after the mail was accepted, unless it says when. The mail's
// sg_message_id is the request's X-Message-Id, a dot, and its own suffix: SendGrid's are
// like that, one per mail a request makes.
async function reportOn(live: () => boolean, mail: Mail, fate: Fate, url: string, key: string) {
  const accepted = Math.floor(Date.now() / 1000);
  const { messageId, personalization: p, body } = mail;
  const recipients = recipientsOf(body.personalizations[0]).map(({ address }) => address).filter(isRecord);
  const events = recipients.flatMap((recipient, r) =>
    fate.events.map((event, i) => ({
      email: recipient.email,
      timestamp: accepted + i,
      "smtp-id": `<${messageId}@ismtpd-capture>`,
      sg_event_id: eventId(),
      sg_message_id: `${messageId}.filtercapture-${p}-${r}-0`,
      ...(Array.isArray(body.categories) ? { category: body.categories } : {}),
      ...body.custom_args,
      ...event,
    }))
  );
  for (const [index, batch] of postsOf(events, fate, "together").entries()) {
    await sleep(index === 0 ? fate.delayMs ?? 200 : fate.gapMs ?? 0);
    const posted = JSON.stringify(batch);
    await capture.report(live, url, batch, () => Promise.resolve(signedPost(posted, key)), {
      retry: () => true, maxAttempts: 5, firstPauseMs: 250,
    });
  }
}

// A post as SendGrid signs it: the signature covers the timestamp header's value followed
// by the body. Signed with node:crypto, whose DER output is SendGrid's encoding.
function signedPost(body: string, privateKey: string): RequestInit {
  const timestamp = String(Math.floor(Date.now() / 1000));
  const signature = sign("sha256", Buffer.from(timestamp + body), {
    key: Buffer.from(privateKey, "base64"), format: "der", type: "pkcs8",
  }).toString("base64");
  return {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "user-agent": "SendGrid Event API",
      "x-twilio-email-event-webhook-signature": signature,
      "x-twilio-email-event-webhook-timestamp": timestamp,
    },
    body,
  };
}

Deno.serve({ hostname: "127.0.0.1", port, onListen: () => {} }, loggingCalls((request) => {
  const { pathname } = new URL(request.url);
  if (request.method === "POST" && pathname === "/v3/mail/send") return mailSend(request);
  if (request.method === "POST" && pathname === "/_capture/refuse") return refuse(request);
  if (request.method === "DELETE" && pathname === "/_capture") refused = new Set();
  return capture.control(request) ?? json(404, { errors: [{ field: null, message: "not found", help: null }] });
}));
