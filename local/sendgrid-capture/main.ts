// A loopback double of SendGrid's v3 Mail Send endpoint and its signed Event Webhook, for
// tests and local runs.
//   POST   /v3/mail/send          SendGrid's contract: 202 and X-Message-Id, or its error shape
//   GET    /_capture/messages     the accepted mails, oldest first
//   GET    /_capture/requests     every attempt with the status it got
//   POST   /_capture/script       {responses: [{status, headers?, body?, delayMs?}]}: the next
//                                 sends get these answers in order, then 202 again
//   POST   /_capture/fates        {fates: [{events, post?, duplicate?, delayMs?}]}: what becomes
//                                 of the next accepted mails, in order, then the default
//   GET    /_capture/reports      every event post, its events and the answers it got
//   GET    /_capture/pending-reports  {pending}: accepted mails whose events are not all posted yet
//   DELETE /_capture               forget everything, including a pending script and fates
// With --event-webhook-url and the private key of the webhook's signing key pair in
// SENDGRID_EVENT_WEBHOOK_PRIVATE_KEY (base64 PKCS#8 DER; the stack makes the pair and gives
// the api function the public half), it plays SendGrid's Event Webhook: after accepting a
// mail it posts events about it to that URL, as SendGrid does, as a JSON array of event
// objects with the mail's custom args as top-level fields, each with its own sg_event_id
// and an sg_message_id that is the X-Message-Id it answered plus a suffix. Each post is
// signed as SendGrid signs it (ECDSA P-256 over SHA-256 of the timestamp header's value
// followed by the body, DER, base64 in X-Twilio-Email-Event-Webhook-Signature) when it is
// sent, and sent again on any answer but a 2xx (SendGrid keeps trying for a day; this
// double five times, from a quarter second apart). By default a mail is processed, then
// delivered, in one post 200 ms after it was accepted. A fate names other events
// ({event: "deferred"}, {event: "bounce", type: "bounce", reason, status}, {event:
// "dropped", reason: "Invalid"}, {event: "spamreport"}; any field given is sent as given,
// the rest filled in), and posts them separately, last first, each twice, or with a pause
// between posts.
import { Buffer } from "node:buffer";
import { sign } from "node:crypto";
import { readFlags, requireFlag } from "../args.ts";
import { createCapture, type Fate, isRecord, json, loggingCalls, postsOf, sleep } from "../capture.ts";

type Attempt = {
  receivedAt: string;
  status: number;
  messageId: string | null;
  body: unknown;
};

type FieldError = { message: string; field: string | null; help: string | null };

const flags = readFlags(Deno.args);
const port = Number(requireFlag(flags, "port"));
const eventWebhookUrl = flags.get("event-webhook-url") ?? null;
const signingKey = Deno.env.get("SENDGRID_EVENT_WEBHOOK_PRIVATE_KEY") || null;
if (eventWebhookUrl && !signingKey) throw new Error("--event-webhook-url needs SENDGRID_EVENT_WEBHOOK_PRIVATE_KEY");

const capture = createCapture<Attempt>(202);

function isEmailObject(value: unknown): boolean {
  return isRecord(value) && typeof value.email === "string" && /^[^@\s]+@[^@\s]+$/.test(value.email);
}

// The checks SendGrid documents for a Mail Send body, enough to reject what it rejects.
function validateMail(body: unknown): FieldError[] {
  const errors: FieldError[] = [];
  const fail = (field: string, message: string) => errors.push({ field, message, help: null });
  if (!isRecord(body)) return [{ field: null, message: "Bad Request", help: null }];

  const personalizations = body.personalizations;
  if (!Array.isArray(personalizations) || personalizations.length === 0 || personalizations.length > 1000) {
    fail("personalizations", "The personalizations field is required and must have at least one personalization.");
  } else {
    personalizations.forEach((personalization, index) => {
      if (!isRecord(personalization) || !Array.isArray(personalization.to) || personalization.to.length === 0) {
        fail(`personalizations.${index}.to`, "The to array is required for all personalization objects, and must have at least one email object with a valid email address.");
      } else if (!personalization.to.every(isEmailObject)) {
        fail(`personalizations.${index}.to`, "Does not contain a valid address.");
      }
    });
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

async function mailSend(request: Request): Promise<Response> {
  const receivedAt = new Date().toISOString();
  const authorization = request.headers.get("authorization") ?? "";
  let body: unknown = null;
  try {
    body = await request.json();
  } catch {
    body = null;
  }
  const record = (status: number, messageId: string | null) =>
    capture.record({ receivedAt, status, messageId, body });

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
  if (errors.length > 0) {
    record(400, null);
    return json(400, { errors });
  }
  const messageId = crypto.randomUUID().replaceAll("-", "").slice(0, 22);
  record(202, messageId);
  const fate = capture.nextFate() ?? { events: [{ event: "processed" }, { event: "delivered", response: "250 OK" }] };
  if (eventWebhookUrl && signingKey) {
    const [url, key] = [eventWebhookUrl, signingKey];
    capture.track((live) => reportOn(live, body as Record<string, unknown>, messageId, fate, url, key));
  }
  return new Response(null, { status: 202, headers: { "x-message-id": messageId, ...scripted?.headers } });
}

// SendGrid's event ids are 22 base64url characters.
function eventId(): string {
  return btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(16)))).replaceAll("+", "-").replaceAll("/", "_")
    .slice(0, 22);
}

// The events about one accepted mail, for each of its recipients, posted as the fate says.
// Event i happened i seconds after the mail was accepted, unless it says when.
async function reportOn(live: () => boolean, mail: Record<string, unknown>, messageId: string, fate: Fate, url: string, key: string) {
  const accepted = Math.floor(Date.now() / 1000);
  const personalizations = Array.isArray(mail.personalizations) ? mail.personalizations.filter(isRecord) : [];
  const categories = Array.isArray(mail.categories) ? mail.categories : undefined;
  const events = personalizations.flatMap((personalization, p) => {
    const customArgs = { ...(isRecord(mail.custom_args) ? mail.custom_args : {}), ...(isRecord(personalization.custom_args) ? personalization.custom_args : {}) };
    const recipients = Array.isArray(personalization.to) ? personalization.to.filter(isRecord) : [];
    return recipients.flatMap((recipient, r) =>
      fate.events.map((event, i) => ({
        email: recipient.email,
        timestamp: accepted + i,
        "smtp-id": `<${messageId}@ismtpd-capture>`,
        sg_event_id: eventId(),
        sg_message_id: `${messageId}.filtercapture-${p}-${r}-0`,
        ...(categories ? { category: categories } : {}),
        ...customArgs,
        ...event,
      }))
    );
  });
  for (const [index, batch] of postsOf(events, fate, "together").entries()) {
    await sleep(index === 0 ? fate.delayMs ?? 200 : fate.gapMs ?? 0);
    const body = JSON.stringify(batch);
    await capture.report(live, url, batch, () => Promise.resolve(signedPost(body, key)), {
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
  return capture.control(request) ?? json(404, { errors: [{ field: null, message: "not found", help: null }] });
}));
