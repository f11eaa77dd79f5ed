// Every error the API returns is an RFC 9457 problem document:
//   {type, title, status, detail, errors?: [{path, message}], ...extension members}
// 400 means the request itself is malformed; 422 means it is well-formed but the
// domain refuses it (a rule the database enforces, like a unit's capacity).
// `type` is a stable URN per kind of problem, so clients branch on it, not on text:
// one kind per thing a client does differently (a refused access token means "refresh",
// a refused refresh token means "sign in again", wrong credentials mean "ask again").

export type FieldError = { path: string; message: string };

export type ProblemType = {
  status: number;
  title: string;
  // When it is answered and what a client does about it.
  meaning: string;
};

// The registry: every problem type the API answers, with its status. The OpenAPI
// document lists them (components.schemas.ProblemType) and /v1/docs shows them.
export const problemTypes = {
  "validation": {
    status: 400, title: "Invalid request",
    meaning: "A field, query parameter or header is missing, has the wrong type or format, or is unknown; `errors` names each. Fix the request.",
  },
  "malformed-json": { status: 400, title: "Malformed JSON", meaning: "The body is not JSON." },
  "unauthorized": {
    status: 401, title: "Unauthorized",
    meaning: "The access token or API key is missing, invalid, expired or revoked: refresh the session, or sign in again.",
  },
  "invalid-credentials": {
    status: 401, title: "Invalid credentials",
    meaning: "Sign-in with a wrong email or password (the same answer for both, and for a banned account): ask again.",
  },
  "invalid-refresh-token": {
    status: 401, title: "Invalid refresh token",
    meaning: "The refresh token is unknown, already used, or its session ended: sign in again.",
  },
  "invalid-signature": {
    status: 401, title: "Invalid signature",
    meaning: "A provider's webhook post whose signature is missing or does not verify against the configured key, or (SendGrid) " +
      "whose timestamp is more than the tolerance (300 s) from now: nothing was recorded. The provider sends it again; a " +
      "steady stream of these means the verification key or auth token setting is wrong.",
  },
  "forbidden": { status: 403, title: "Forbidden", meaning: "Signed in, but this caller may not do this in this tenant." },
  "insufficient-scope": {
    status: 403, title: "Insufficient scope",
    meaning: "The API key lacks the scope this route needs, named in requiredScope: ask the tenant's managers for a key " +
      "that has it. Nothing was read or written.",
  },
  "not-a-channel-booking": {
    status: 403, title: "Not a channel booking",
    meaning: "An integration changes and cancels only the stays booked through a channel; this one is the property's own, " +
      "and only its staff change it. Nothing was written.",
  },
  "origin-not-allowed": {
    status: 403, title: "Origin not allowed",
    meaning: "A browser's CORS preflight from an origin this deployment does not grant (CORS_ALLOWED_ORIGINS): " +
      "the browser will not send the request. Serve the app from a listed origin, or have the operator list it.",
  },
  "email-not-confirmed": {
    status: 403, title: "Email not confirmed",
    meaning: "The password is right but the address is not confirmed yet: follow the link sent to it.",
  },
  "signup-disabled": { status: 403, title: "Sign-up disabled", meaning: "The project takes no new accounts." },
  "not-found": {
    status: 404, title: "Not found",
    meaning: "An unknown route, or no such resource in this tenant (another tenant's id answers the same).",
  },
  "push-not-configured": {
    status: 404, title: "Push not configured",
    meaning: "This deployment sends no Web Push (it has no VAPID key): offer no push notifications; the in-app inbox " +
      "still works. Not transient: an operator sets the key.",
  },
  "method-not-allowed": { status: 405, title: "Method not allowed", meaning: "A known path with another method; `Allow` lists the methods." },
  "unit-already-booked": {
    status: 409, title: "Unit already booked",
    meaning: "The unit is booked for some of these nights: choose other dates or another unit.",
  },
  "no-availability": {
    status: 409, title: "No availability",
    meaning: "The room type has no room left on some of these nights (`nights`, `roomTypeId`): every unit of it in service is " +
      "held by a stay or blocked. Offer other dates or another room type (GET /v1/availability); for a block or a unit " +
      "leaving service, move or cancel a stay of the type first.",
  },
  "unit-out-of-order": {
    status: 409, title: "Unit out of order",
    meaning: "The unit takes no stay on these nights: a block covers some of them (`blockId`, `startsOn`, `endsOn`), or its " +
      "status is not active (`unitStatus`). Assign another unit of the room type.",
  },
  "held-by-calendar-import": {
    status: 409, title: "Held by a calendar import",
    meaning: "The block is a calendar import's hold (`calendarImportId`): it changes and goes only with its feed's event. " +
      "Change the event in the calendar it comes from, or delete the import.",
  },
  "unit-occupied": {
    status: 409, title: "Unit occupied",
    meaning: "The unit holds a stay on some of these nights (`reservationId`, `confirmationCode`, `checkIn`, `checkOut`), so it " +
      "cannot be blocked, taken out of service or given another room type: move the stay to another unit first.",
  },
  "unit-already-blocked": {
    status: 409, title: "Unit already blocked",
    meaning: "Another block of the unit covers some of these nights: make that block longer instead.",
  },
  "access-code-in-use": {
    status: 409, title: "Access code in use",
    meaning: "The code already opens the unit for an overlapping stay: choose another code.",
  },
  "already-exists": {
    status: 409, title: "Already exists",
    meaning: "Something with this name, code or external reference already exists: read it, or choose another.",
  },
  "external-reference-reused": {
    status: 409, title: "External reference reused",
    meaning: "This `externalReference` is already recorded for another reservation or with other values: " +
      "a retry must repeat the first request exactly, a new payment or booking needs a new reference, and a booking's " +
      "change is a PATCH of the reservation.",
  },
  "lifecycle-transition-refused": {
    status: 409, title: "Lifecycle transition refused",
    meaning: "The resource's status does not allow this change; `currentStatus` says where it is, and " +
      "`allowedStatuses` (for a status change) where it may go. Read it again before deciding.",
  },
  "immutable-field": {
    status: 409, title: "Field cannot change",
    meaning: "These fields are fixed once created: revoke or cancel the resource and create another.",
  },
  "nothing-owed": {
    status: 409, title: "Nothing owed",
    meaning: "The reservation's balance is zero: there is nothing to ask for unless you give an amount.",
  },
  "still-referenced": {
    status: 409, title: "Still referenced",
    meaning: "It cannot be deleted while other records refer to it (`referencedBy`): archive or deactivate it instead.",
  },
  "already-a-member": { status: 409, title: "Already a member", meaning: "The user is already a member of this tenant." },
  "last-owner": {
    status: 409, title: "Last owner",
    meaning: "A tenant keeps at least one owner: make another member owner first.",
  },
  "idempotency-key-reused": {
    status: 422, title: "Idempotency-Key reused",
    meaning: "This Idempotency-Key was used for a different request: use a new key for a new request.",
  },
  "idempotency-key-in-progress": {
    status: 409, title: "Idempotency-Key in progress",
    meaning: "The first request with this Idempotency-Key has not finished: retry shortly with the same key.",
  },
  "conflict": {
    status: 409, title: "Conflict",
    meaning: "A rule of the resource's state refuses the change and no more specific type above applies. Read it again before deciding.",
  },
  "email-taken": { status: 409, title: "Email already registered", meaning: "Sign-up with an address that already has an account: sign in instead." },
  "stale-etag": {
    status: 412, title: "Stale ETag",
    meaning: "`If-Match` no longer matches: the resource changed since it was read (the current `ETag` is sent). Read it again and retry.",
  },
  "cursor-expired": {
    status: 410, title: "Cursor expired",
    meaning: "The cursor is older than the changes kept (7 days): read what you mirror in full again, then read changes " +
      "from the cursor that read gives.",
  },
  "payload-too-large": {
    status: 413, title: "Payload too large",
    meaning: "The body is over 65,536 bytes (1,048,576 for SendGrid's event batches).",
  },
  "unsupported-media-type": { status: 415, title: "Unsupported media type", meaning: "A body that is not `application/json`." },
  "unprocessable": {
    status: 422, title: "Unprocessable request",
    meaning: "Well-formed, but a rule of the data refuses it (dates, capacity, stay limits, formats, payments on one reservation past " +
      "1,000,000,000,000 in all); `errors` names the field where one is to blame.",
  },
  "rate-restricted": {
    status: 422, title: "Rate restricted",
    meaning: "The rate plan does not sell this stay (`ratePlanId`): each of `restrictions` says why, `{code, date}` with " +
      "code closed, closed_to_arrival, closed_to_departure, min_stay (`minStay`) or max_stay (`maxStay`). Offer other dates " +
      "or another plan (GET /v1/availability says which plans sell them).",
  },
  "over-occupancy": {
    status: 422, title: "Over occupancy",
    meaning: "The party is larger than the room type takes (`maxOccupancy`, `maxAdults`, `maxChildren`): book a larger room " +
      "type, or split the party over several stays.",
  },
  "unknown-reference": {
    status: 422, title: "Unknown reference",
    meaning: "A referenced record (a property, unit, guest, rate plan, reservation, member) does not exist in this tenant, " +
      "is not in the API key's property or the request's property, or can no longer be referenced (an archived property); `errors` names the field.",
  },
  "weak-password": {
    status: 422, title: "Weak password",
    meaning: "Supabase Auth refuses the password; `reasons` carries Auth's (`length`, `characters`, `pwned`) and `errors` names `password`.",
  },
  "too-many-requests": {
    status: 429, title: "Too many requests",
    meaning: "A rate limit was reached: Supabase Auth's for this client's address, an API key's requests per window, or " +
      "an address's unknown API keys per window. `Retry-After` says how many seconds to wait; on `/v1/external/*`, " +
      "`RateLimit` and `RateLimit-Policy` say which limit.",
  },
  "internal": { status: 500, title: "Internal error", meaning: "A defect of ours; the details go to the log only." },
  "report-too-early": {
    status: 503, title: "Report too early",
    meaning: "A provider's report names a notification whose acceptance by the provider the worker has not recorded yet " +
      "(it records it moments after the provider answers). The rest of the post was recorded; the provider sends the post " +
      "again (`Retry-After`), and what was recorded counts once.",
  },
  "service-unavailable": {
    status: 503, title: "Service unavailable",
    meaning: "Supabase Auth or the database cannot be reached; `Retry-After` says when to try again.",
  },
} as const satisfies Record<string, ProblemType>;

export type ProblemKind = keyof typeof problemTypes;

export const PROBLEM_TYPE_PREFIX = "urn:pms:problem:";

export function problemTypeUri(kind: ProblemKind): string {
  return `${PROBLEM_TYPE_PREFIX}${kind}`;
}

export class HttpError extends Error {
  readonly status: number;
  readonly title: string;

  constructor(
    readonly kind: ProblemKind,
    readonly detail: string,
    readonly extra: {
      errors?: FieldError[];
      headers?: Record<string, string>;
      // RFC 9457 extension members, beside the standard ones (which they cannot replace).
      members?: Record<string, unknown>;
    } = {},
  ) {
    super(detail);
    ({ status: this.status, title: this.title } = problemTypes[kind]);
  }

  // The same problem, answered with these headers as well (its own win).
  withHeaders(headers: Record<string, string>): HttpError {
    return new HttpError(this.kind, this.detail, { ...this.extra, headers: { ...headers, ...this.extra.headers } });
  }
}

export const PROBLEM_CONTENT_TYPE = "application/problem+json";

const STANDARD_MEMBERS = new Set(["type", "title", "status", "detail", "errors"]);

export function problemResponse(error: HttpError): Response {
  const extensions = Object.entries(error.extra.members ?? {}).filter(([name]) => !STANDARD_MEMBERS.has(name));
  const body = {
    type: problemTypeUri(error.kind),
    title: error.title,
    status: error.status,
    detail: error.detail,
    ...(error.extra.errors ? { errors: error.extra.errors } : {}),
    ...Object.fromEntries(extensions),
  };
  return new Response(JSON.stringify(body), {
    status: error.status,
    headers: { "content-type": PROBLEM_CONTENT_TYPE, ...error.extra.headers },
  });
}

export function unauthorized(detail: string): HttpError {
  return new HttpError("unauthorized", detail, { headers: { "www-authenticate": 'Bearer realm="pms"' } });
}
