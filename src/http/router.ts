import { httpErrorFromDatabase } from "../db/errors.ts";
import { HttpError, problemResponse } from "./problem.ts";

export type Params = Readonly<Record<string, string>>;
export type Handler = (request: Request, params: Params) => Promise<Response> | Response;
// Paths are written as in OpenAPI: /v1/properties/{id}.
export type Route = { method: string; path: string; handler: Handler };

type CompiledRoute = Route & { segments: string[]; parameterCount: number };

export type Logger = {
  error(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
};

function parameterName(segment: string): string | null {
  return segment.startsWith("{") && segment.endsWith("}") ? segment.slice(1, -1) : null;
}

function compile(route: Route): CompiledRoute {
  const segments = route.path.split("/").filter(Boolean);
  return { ...route, segments, parameterCount: segments.filter((s) => parameterName(s) !== null).length };
}

function match(segments: string[], pathSegments: string[]): Params | null {
  if (segments.length !== pathSegments.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < segments.length; i++) {
    const expected = segments[i]!;
    const actual = pathSegments[i]!;
    const name = parameterName(expected);
    if (name !== null) {
      try {
        params[name] = decodeURIComponent(actual);
      } catch {
        return null;
      }
    } else if (expected !== actual) {
      return null;
    }
  }
  return params;
}

// The hosted platform hands a function its own name as the first path segment
// (/api/v1/...); routes are written without it.
export function createRouter(
  options: { functionName: string; routes: Route[]; logger: Logger },
): (request: Request) => Promise<Response> {
  // A literal segment wins over a parameter: /v1/notifications/preferences before /v1/notifications/{id}.
  const routes = options.routes.map(compile).sort((a, b) => a.parameterCount - b.parameterCount);
  const prefix = `/${options.functionName}`;

  return async (request) => {
    const url = new URL(request.url);
    const path = url.pathname === prefix || url.pathname.startsWith(`${prefix}/`)
      ? url.pathname.slice(prefix.length)
      : url.pathname;
    const pathSegments = path.split("/").filter(Boolean);
    try {
      const allowed: string[] = [];
      for (const route of routes) {
        const params = match(route.segments, pathSegments);
        if (!params) continue;
        if (route.method === request.method) return await route.handler(request, params);
        allowed.push(route.method);
      }
      if (allowed.length > 0) {
        throw new HttpError("method-not-allowed", `${request.method} is not allowed here.`, {
          headers: { allow: [...new Set(allowed)].join(", ") },
        });
      }
      throw new HttpError("not-found", `No route for ${request.method} ${path}.`);
    } catch (error) {
      if (error instanceof HttpError) return problemResponse(error);
      const refused = httpErrorFromDatabase(error);
      if (refused) return problemResponse(refused);
      options.logger.error("unhandled error", {
        method: request.method,
        path,
        error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
      });
      return problemResponse(new HttpError("internal", "The request could not be completed."));
    }
  };
}
