// Every error the API returns is an RFC 9457 problem document:
//   {type, title, status, detail, errors?: [{path, message}], ...extension members}
// 400 means the request itself is malformed; 422 means it is well-formed but the
// domain refuses it (a rule the database enforces, like a unit's capacity).
// `type` is a stable URN per kind of problem, so clients branch on it, not on text:
// one kind per thing a client does differently (a refused access token means "refresh",
// a refused refresh token means "sign in again", wrong credentials mean "ask again").

export type FieldError = { path: string; message: string };

export type ProblemKind =
  | "validation"
  | "unprocessable"
  | "malformed-json"
  | "unsupported-media-type"
  | "payload-too-large"
  | "unauthorized"
  | "invalid-credentials"
  | "invalid-refresh-token"
  | "forbidden"
  | "email-not-confirmed"
  | "signup-disabled"
  | "not-found"
  | "method-not-allowed"
  | "conflict"
  | "email-taken"
  | "weak-password"
  | "precondition-failed"
  | "too-many-requests"
  | "service-unavailable"
  | "internal";

const titles: Record<ProblemKind, [number, string]> = {
  "validation": [400, "Invalid request"],
  "unprocessable": [422, "Unprocessable request"],
  "malformed-json": [400, "Malformed JSON"],
  "unsupported-media-type": [415, "Unsupported media type"],
  "payload-too-large": [413, "Payload too large"],
  "unauthorized": [401, "Unauthorized"],
  "invalid-credentials": [401, "Invalid credentials"],
  "invalid-refresh-token": [401, "Invalid refresh token"],
  "forbidden": [403, "Forbidden"],
  "email-not-confirmed": [403, "Email not confirmed"],
  "signup-disabled": [403, "Sign-up disabled"],
  "not-found": [404, "Not found"],
  "method-not-allowed": [405, "Method not allowed"],
  "conflict": [409, "Conflict"],
  "email-taken": [409, "Email already registered"],
  "weak-password": [422, "Weak password"],
  "precondition-failed": [412, "Precondition failed"],
  "too-many-requests": [429, "Too many requests"],
  "service-unavailable": [503, "Service unavailable"],
  "internal": [500, "Internal error"],
};

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
    [this.status, this.title] = titles[kind];
  }
}

export const PROBLEM_CONTENT_TYPE = "application/problem+json";

const STANDARD_MEMBERS = new Set(["type", "title", "status", "detail", "errors"]);

export function problemResponse(error: HttpError): Response {
  const extensions = Object.entries(error.extra.members ?? {}).filter(([name]) => !STANDARD_MEMBERS.has(name));
  const body = {
    type: `urn:pms:problem:${error.kind}`,
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
