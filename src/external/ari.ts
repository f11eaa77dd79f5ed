import type { z } from "zod";
import type { ari } from "./schema.ts";

export type Ari = z.output<typeof ari>;
type RoomType = Ari["roomTypes"][number];
type RatePlan = Ari["ratePlans"][number];
type Values = Omit<RatePlan, "ratePlanId" | "code" | "name" | "roomTypeId" | "currency">;
type Day = { [field in keyof Values]: Values[field][number] };

// What private.channel_ari answers, days counted from the first day asked: a room type's
// holds as the nights each takes (holdStarts[i] to holdEnds[i], the end excluded; they may
// begin before the first day and end after the last); a rate plan's defaults, and for each
// value the days that differ from its default and what they hold (changes.price.days[i]
// holds changes.price.values[i]; a value no day changes may be left out).
export type HeldAri = Omit<Ari, "roomTypes" | "ratePlans"> & {
  roomTypes: (Omit<RoomType, "available"> & { holdStarts: number[]; holdEnds: number[] })[];
  ratePlans: (Omit<RatePlan, keyof Values> & {
    defaults: Day;
    changes: { [field in keyof Values]?: { days: number[]; values: Values[field] } };
  })[];
};

const FIELDS = [
  "price",
  "extraAdultPrice",
  "extraChildPrice",
  "minStay",
  "maxStay",
  "closedToArrival",
  "closedToDeparture",
  "closed",
] as const satisfies readonly (keyof Values)[];

// One value a day for each of `days` days: each room type's rooms left each night (its
// units in service less the holds that take that night, never below 0), each plan's
// values (its default but where a day changes it).
export function nightByNight(held: HeldAri, days: number): Ari {
  return {
    propertyId: held.propertyId,
    from: held.from,
    to: held.to,
    roomTypes: held.roomTypes.map(({ holdStarts, holdEnds, ...type }) => ({ ...type, available: roomsLeft(type.units, holdStarts, holdEnds, days) })),
    ratePlans: held.ratePlans.map(({ defaults, changes, ...plan }) => {
      const values = Object.fromEntries(FIELDS.map((field) => {
        const daily: unknown[] = new Array(days).fill(defaults[field]);
        const changed = changes[field];
        if (changed) for (let i = 0; i < changed.days.length; i++) daily[changed.days[i]!] = changed.values[i];
        return [field, daily];
      })) as Values;
      return { ...plan, ...values };
    }),
  };
}

// A hold adds one where it starts and gives it back where it ends; the running sum of
// those is the night's count.
function roomsLeft(units: number, starts: number[], ends: number[], days: number): number[] {
  const changes = new Int32Array(days);
  for (const start of starts) {
    const night = Math.max(0, start);
    changes[night] = changes[night]! + 1;
  }
  for (const end of ends) if (end < days) changes[end] = changes[end]! - 1;
  const available = new Array<number>(days);
  let taken = 0;
  for (let night = 0; night < days; night++) {
    taken += changes[night]!;
    available[night] = Math.max(0, units - taken);
  }
  return available;
}
