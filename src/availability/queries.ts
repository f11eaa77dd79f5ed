import { sql } from "kysely";
import type { z } from "zod";
import type { Reads } from "../db/reads.ts";
import type { availability, availabilityQuery } from "./schema.ts";

// What the property can sell for the stay and party (private.availability), under the
// request's policies; undefined when the property is not the tenant's.
export async function findAvailability(db: Reads, query: z.output<typeof availabilityQuery>) {
  const { rows: [row] } = await sql<{ availability: z.output<typeof availability> | null }>`
    select private.availability(${query.propertyId}::uuid, ${query.arrival}::date, ${query.departure}::date,
                                ${query.adults}::integer, ${query.children}::integer) as availability`.execute(db);
  return row?.availability ?? undefined;
}
