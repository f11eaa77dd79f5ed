import { sql } from "kysely";
import type { z } from "zod";
import type { Reads } from "../db/reads.ts";
import type { availabilityQuery } from "./schema.ts";

// What the property can sell for the stay and party (private.availability), under the
// request's policies, as the JSON text of the response's body (the schema's
// `availability`): the database builds it, and it is answered as it is rather than parsed
// and written again. Undefined when the property is not the tenant's.
export async function findAvailability(db: Reads, query: z.output<typeof availabilityQuery>) {
  const { rows: [row] } = await sql<{ availability: string | null }>`
    select private.availability(${query.propertyId}::uuid, ${query.arrival}::date, ${query.departure}::date,
                                ${query.adults}::integer, ${query.children}::integer)::text as availability`.execute(db);
  return row?.availability ?? undefined;
}
