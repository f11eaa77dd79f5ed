// A loopback double of SendGrid's v3 Mail Send endpoint for tests and local runs.
//   POST   /v3/mail/send          SendGrid's contract: 202 and X-Message-Id, or its error shape
//   GET    /_capture/messages     the accepted mails, oldest first
//   GET    /_capture/requests     every attempt with the status it got
//   POST   /_capture/script       {responses: [{status, headers?, body?, delayMs?}]}: the next
//                                 sends get these answers in order, then 202 again
//   DELETE /_capture               forget everything, including a pending script
import { readFlags, requireFlag } from "../args.ts";
import { createCapture, isRecord, json, loggingCalls } from "../capture.ts";

type Attempt = {
  receivedAt: string;
  status: number;
  messageId: string | null;
  body: unknown;
};

type FieldError = { message: string; field: string | null; help: string | null };

const flags = readFlags(Deno.args);
const port = Number(requireFlag(flags, "port"));

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
  return new Response(null, { status: 202, headers: { "x-message-id": messageId, ...scripted?.headers } });
}

Deno.serve({ hostname: "127.0.0.1", port, onListen: () => {} }, loggingCalls((request) => {
  const { pathname } = new URL(request.url);
  if (request.method === "POST" && pathname === "/v3/mail/send") return mailSend(request);
  return capture.control(request) ?? json(404, { errors: [{ field: null, message: "not found", help: null }] });
}));
