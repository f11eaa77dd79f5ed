import type { Endpoint } from "../http/endpoint.ts";
import { jsonText } from "../http/json.ts";
import { HttpError } from "../http/problem.ts";
import { tenantEndpoint } from "../http/session-endpoints.ts";
import type { RequestScope } from "../http/request-scope.ts";
import { findAvailability } from "./queries.ts";
import { availability, availabilityQuery } from "./schema.ts";

export function availabilityEndpoints(scope: RequestScope): Endpoint[] {
  return [
    tenantEndpoint(scope, {
      method: "GET", path: "/v1/availability", operationId: "getAvailability", tag: "Availability", access: "member",
      summary: "What a property can sell from arrival to departure for a party: per room type, the rooms left on its fullest " +
        "night, the units free on every night, and each plan that sells it with its total, its nightly breakdown and the " +
        "restrictions that stop it.",
      query: availabilityQuery, problems: ["unknown-reference", "unprocessable"],
      success: [{ status: 200, description: "The property's availability.", schema: availability }],
    }, async ({ db, query }) => {
      const found = await findAvailability(db, query);
      if (!found) {
        throw new HttpError("unknown-reference", "The property does not exist in this tenant.", {
          errors: [{ path: "propertyId", message: "The property does not exist in this tenant." }],
        });
      }
      return jsonText(200, found);
    }),
  ];
}
