import type { Endpoint } from "../http/endpoint.ts";
import { resourceEndpoints } from "../http/resource-endpoints.ts";
import type { RequestScope } from "../http/request-scope.ts";
import { deleteRatePlan, findRatePlan, insertRatePlan, listRatePlans, lockRatePlan, updateRatePlan } from "./queries.ts";
import { createRatePlanBody, listRatePlansQuery, ratePlan, updateRatePlanBody } from "./schema.ts";

export function ratePlanEndpoints(scope: RequestScope): Endpoint[] {
  const ratePlans = resourceEndpoints(scope, {
    tag: "Rate plans", collection: "rate-plans", schema: ratePlan,
    name: { one: "RatePlan", many: "RatePlans" }, noun: { one: "rate plan", many: "rate plans" },
  });
  return [
    ratePlans.list({
      access: "member", summary: "List the tenant's rate plans, by property and code.", query: listRatePlansQuery,
    }, listRatePlans),
    ratePlans.create({
      access: "manager", summary: "Create a rate plan for a property.", body: createRatePlanBody, problems: ["already-exists", "unknown-reference", "unprocessable"],
    }, insertRatePlan),
    ratePlans.get({ access: "member", summary: "Read a rate plan." }, findRatePlan),
    ratePlans.update({
      access: "manager",
      summary: "Update a rate plan. Its property and currency stay; withdraw it with active false.",
      body: updateRatePlanBody, problems: ["already-exists", "unknown-reference", "unprocessable"],
    }, { lock: lockRatePlan, update: updateRatePlan }),
    ratePlans.remove({
      access: "manager", summary: "Delete a rate plan no reservation uses. While one does, 409: set it inactive with PATCH instead.", problems: ["still-referenced"],
    }, deleteRatePlan),
  ];
}
