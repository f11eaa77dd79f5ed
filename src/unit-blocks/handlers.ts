import type { Endpoint } from "../http/endpoint.ts";
import { resourceEndpoints } from "../http/resource-endpoints.ts";
import type { RequestScope } from "../http/request-scope.ts";
import { deleteUnitBlock, findUnitBlock, insertUnitBlock, listUnitBlocks, lockUnitBlock, updateUnitBlock } from "./queries.ts";
import { createUnitBlockBody, listUnitBlocksQuery, unitBlock, updateUnitBlockBody } from "./schema.ts";

// Dated out-of-order periods of a unit: it takes no stay on their nights and counts out of
// its room type's inventory (supabase/schemas/inventory.sql).
export function unitBlockEndpoints(scope: RequestScope): Endpoint[] {
  const blocks = resourceEndpoints(scope, {
    tag: "Unit blocks", collection: "unit-blocks", schema: unitBlock,
    name: { one: "UnitBlock", many: "UnitBlocks" }, noun: { one: "unit block", many: "unit blocks" },
  });
  const refusals = ["unit-already-blocked", "unit-occupied", "no-availability", "unprocessable"] as const;
  return [
    blocks.list({ access: "member", summary: "List the tenant's unit blocks, by first night.", query: listUnitBlocksQuery },
      listUnitBlocks),
    blocks.create({
      access: "member",
      summary: "Take a unit out of order for some nights. Refused while it holds a stay on one of them, or when its room " +
        "type could not hold its stays without it.",
      body: createUnitBlockBody, problems: ["unknown-reference", ...refusals],
    }, insertUnitBlock),
    blocks.get({ access: "member", summary: "Read a unit block." }, findUnitBlock),
    blocks.update({
      access: "member", summary: "Change a block's nights or reason; it stays on its unit.",
      body: updateUnitBlockBody, problems: [...refusals, "immutable-field", "held-by-calendar-import"],
    }, { lock: lockUnitBlock, update: updateUnitBlock }),
    blocks.remove({
      access: "manager", problems: ["held-by-calendar-import"],
      summary: "Delete a block: the unit is back in service on its nights. Staff shorten it with PATCH instead. A block " +
        "from a calendar import goes only with its feed's event or its import (409).",
    }, deleteUnitBlock),
  ];
}
