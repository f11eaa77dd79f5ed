// Supabase Auth's error bodies. Without an API version, or one before 2024-01-01, an error
// is {code: <status>, error_code, msg}; a client that sends X-Supabase-Api-Version
// 2024-01-01 or later (supabase-js always does) gets {code: <error code>, message}, and the
// header back on the error response, which is how supabase-js knows to read `code`. A weak
// password's error carries weak_password.reasons in both shapes.
export class AuthError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

export const badRequest = (code: string, message: string) => new AuthError(400, code, message);
export const unprocessable = (code: string, message: string) => new AuthError(422, code, message);
export const forbidden = (code: string, message: string) => new AuthError(403, code, message);
export const notFound = (code: string, message: string) => new AuthError(404, code, message);

export function weakPassword(messages: string[], reasons: string[]): AuthError {
  return new AuthError(422, "weak_password", messages.join(" "), { weak_password: { reasons } });
}

export const API_VERSION_HEADER = "x-supabase-api-version";
const API_VERSION_2024 = "2024-01-01";

// Whether the request asked for the 2024-01-01 shape: a YYYY-MM-DD date on or after it. A
// value that is not such a date is the initial version, as Auth reads it.
export function wants2024Errors(request: Request): boolean {
  const value = request.headers.get(API_VERSION_HEADER);
  if (value === null || !/^\d{4}-\d{2}-\d{2}$/.test(value)) return false;
  const date = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && value >= API_VERSION_2024;
}

export function errorResponse(request: Request, error: AuthError, headers: Headers = new Headers()): Response {
  headers.set("content-type", "application/json");
  headers.set("x-sb-error-code", error.code);
  let body: Record<string, unknown>;
  if (wants2024Errors(request)) {
    headers.set(API_VERSION_HEADER, API_VERSION_2024);
    body = { code: error.code, message: error.message, ...error.extra };
  } else {
    body = { code: error.status, error_code: error.code, msg: error.message, ...error.extra };
  }
  return new Response(JSON.stringify(body), { status: error.status, headers });
}
