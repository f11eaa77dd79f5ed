// Every error the API returns is an RFC 9457 problem document:
//   {type, title, status, detail, errors?: [{path, message}]}
// 400 means the request itself is malformed; 422 means it is well-formed but the
// domain refuses it (a rule the database enforces, like a unit's capacity).
// `type` is a stable URN per kind of problem, so clients branch on it, not on text.

export type FieldError = { path: string; message: string };

export type ProblemKind =
  | "validation"
  | "unprocessable"
  | "malformed-json"
  | "unsupported-media-type"
  | "payload-too-large"
  | "unauthorized"
  | "forbidden"
  | "not-found"
  | "method-not-allowed"
  | "conflict"
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
  "forbidden": [403, "Forbidden"],
  "not-found": [404, "Not found"],
  "method-not-allowed": [405, "Method not allowed"],
  "conflict": [409, "Conflict"],
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
    readonly extra: { errors?: FieldError[]; headers?: Record<string, string> } = {},
  ) {
    super(detail);
    [this.status, this.title] = titles[kind];
  }
}

export const PROBLEM_CONTENT_TYPE = "application/problem+json";

export function problemResponse(error: HttpError): Response {
  const body = {
    type: `urn:pms:problem:${error.kind}`,
    title: error.title,
    status: error.status,
    detail: error.detail,
    ...(error.extra.errors ? { errors: error.extra.errors } : {}),
  };
  return new Response(JSON.stringify(body), {
    status: error.status,
    headers: { "content-type": PROBLEM_CONTENT_TYPE, ...error.extra.headers },
  });
}

export function unauthorized(detail: string): HttpError {
  return new HttpError("unauthorized", detail, { headers: { "www-authenticate": 'Bearer realm="pms"' } });
}
