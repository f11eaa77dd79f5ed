import { httpErrorFromDatabase } from "./database-refusals.ts";
import type { Logger } from "../logging/logger.ts";
import { type CorsPolicy, grantedOrigin, isPreflight, preflightHeaders, withCorsGrant } from "./cors.ts";
import { HttpError, problemResponse } from "./problem.ts";

export type Params = Readonly<Record<string, string>>;
export type Handler = (request: Request, params: Params) => Promise<Response> | Response;
// Paths are written as in OpenAPI: /v1/properties/{id}.
export type Route = { method: string; path: string; handler: Handler };

type CompiledRoute = Route & { segments: string[]; parameterCount: number };

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

const noBrowserOrigins: CorsPolicy = { allowedOrigins: new Set() };

// The hosted platform hands a function its own name as the first path segment
// (/api/v1/...); routes are written without it. OPTIONS is answered for every known
// path: a CORS preflight from an allowed origin gets its grant (src/http/cors.ts), one
// from any other origin a 403, and a plain OPTIONS the Allow header.
export function createRouter(
  options: { functionName: string; routes: Route[]; logger: Logger; cors?: CorsPolicy },
): (request: Request) => Promise<Response> {
  // A literal segment wins over a parameter: /v1/notifications/preferences before /v1/notifications/{id}.
  const routes = options.routes.map(compile).sort((a, b) => a.parameterCount - b.parameterCount);
  const prefix = `/${options.functionName}`;
  const cors = options.cors ?? noBrowserOrigins;

  const answer = async (request: Request): Promise<Response> => {
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
      if (allowed.length > 0 && request.method === "OPTIONS") return answerOptions(request, [...new Set(allowed)]);
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

  const answerOptions = (request: Request, methods: string[]): Response => {
    if (!isPreflight(request)) {
      return new Response(null, { status: 204, headers: { allow: [...methods, "OPTIONS"].join(", ") } });
    }
    const origin = request.headers.get("origin");
    const granted = grantedOrigin(cors, origin);
    if (granted === null) {
      throw new HttpError("origin-not-allowed", `The origin ${origin} may not call this API from a browser.`);
    }
    return new Response(null, { status: 204, headers: preflightHeaders(granted, methods, cors) });
  };

  return async (request) => {
    const response = await answer(request);
    return isPreflight(request) ? response : withCorsGrant(response, request.headers.get("origin"), cors);
  };
}
