import type { Endpoint } from "../http/endpoint.ts";
import { resourceEndpoints } from "../http/resource-endpoints.ts";
import type { RequestScope } from "../http/request-scope.ts";
import { deleteProperty, findProperty, insertProperty, listProperties, lockProperty, updateProperty } from "./queries.ts";
import { createPropertyBody, listPropertiesQuery, property, updatePropertyBody } from "./schema.ts";

export function propertyEndpoints(scope: RequestScope): Endpoint[] {
  const properties = resourceEndpoints(scope, {
    tag: "Properties", collection: "properties", schema: property,
    name: { one: "Property", many: "Properties" }, noun: { one: "property", many: "properties" },
  });
  return [
    properties.list({ access: "member", summary: "List the tenant's properties, by name.", query: listPropertiesQuery },
      listProperties),
    properties.create({ access: "manager", summary: "Create a property.", body: createPropertyBody, problems: ["already-exists", "unprocessable"] },
      insertProperty),
    properties.get({ access: "member", summary: "Read a property." }, findProperty),
    properties.update({
      access: "manager", summary: "Update a property. Archive it with status archived.",
      body: updatePropertyBody, problems: ["already-exists", "unprocessable"],
    }, { lock: lockProperty, update: updateProperty }),
    properties.remove({
      access: "manager", summary: "Delete a property nothing refers to yet. While anything does, 409: archive it with PATCH instead.", problems: ["still-referenced"],
    }, deleteProperty),
  ];
}
