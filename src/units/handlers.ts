import type { Endpoint } from "../http/endpoint.ts";
import { resourceEndpoints } from "../http/resource-endpoints.ts";
import type { RequestScope } from "../http/request-scope.ts";
import { deleteUnit, findUnit, insertUnit, listUnits, lockUnit, updateUnit } from "./queries.ts";
import { createUnitBody, listUnitsQuery, unit, updateUnitBody } from "./schema.ts";

export function unitEndpoints(scope: RequestScope): Endpoint[] {
  const units = resourceEndpoints(scope, {
    tag: "Units", collection: "units", schema: unit,
    name: { one: "Unit", many: "Units" }, noun: { one: "unit", many: "units" },
  });
  return [
    units.list({ access: "member", summary: "List the tenant's units, by property and name.", query: listUnitsQuery },
      listUnits),
    units.create({ access: "manager", summary: "Create a unit in a property.", body: createUnitBody, problems: ["already-exists", "unknown-reference", "unprocessable"] },
      insertUnit),
    units.get({ access: "member", summary: "Read a unit." }, findUnit),
    units.update({
      access: "manager", summary: "Update a unit. Retire it with status archived; it cannot move to another property.",
      body: updateUnitBody, problems: ["already-exists", "unknown-reference", "unprocessable", "unit-occupied", "no-availability"],
    }, { lock: lockUnit, update: updateUnit }),
    units.remove({
      access: "manager", summary: "Delete a unit nothing refers to yet. While anything does, 409: archive it with PATCH instead.", problems: ["still-referenced"],
    }, deleteUnit),
  ];
}
