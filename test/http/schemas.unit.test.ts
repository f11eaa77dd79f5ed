// The shared shapes of src/http/schemas.ts as the OpenAPI document states them: the pattern
// of each date and date-time is exactly what the server takes or answers, checked against
// every day of the years and every offset on either side of the range.
import assert from "node:assert/strict";
import { z } from "zod";
import { answeredDate, isoDate, timestamp, timestampInput } from "../../src/http/schemas.ts";
import { apiDocument } from "../support/api-document.ts";

type JsonSchema = Record<string, unknown>;
type Side = "request" | "response";

// The pattern a shape puts in the document.
function patternOf(schema: z.ZodType): string {
  return (z.toJSONSchema(schema) as { pattern: string }).pattern;
}

const patterns = {
  requestDateTime: patternOf(timestampInput),
  date: patternOf(isoDate),
  answeredDateTime: patternOf(timestamp),
};

// Every schema in the document with a date or date-time format, or the pattern of one, by
// the side it is on.
async function datedSchemas(): Promise<{ side: Side; format: unknown; pattern: unknown; where: string }[]> {
  const document = await apiDocument() as unknown as {
    paths: Record<string, Record<string, Record<string, unknown>>>;
    components: { schemas: Record<string, JsonSchema> };
  };
  const found: { side: Side; format: unknown; pattern: unknown; where: string }[] = [];
  const dated = new Set<unknown>(Object.values(patterns));
  const walk = (node: unknown, side: Side, where: string, seen: Set<string>): void => {
    if (Array.isArray(node)) return node.forEach((item) => walk(item, side, where, seen));
    if (!node || typeof node !== "object") return;
    const schema = node as JsonSchema;
    if (typeof schema.$ref === "string" && schema.$ref.startsWith("#/components/schemas/")) {
      const name = schema.$ref.slice("#/components/schemas/".length);
      if (!seen.has(name)) walk(document.components.schemas[name], side, `${where} ${name}`, new Set([...seen, name]));
    }
    if (schema.format === "date" || schema.format === "date-time" || dated.has(schema.pattern)) {
      found.push({ side, format: schema.format, pattern: schema.pattern, where });
    }
    for (const [key, value] of Object.entries(schema)) {
      if (key !== "$ref") walk(value, side, where, seen);
    }
  };
  for (const [path, operations] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      const where = `${method.toUpperCase()} ${path}`;
      walk(operation.parameters, "request", where, new Set());
      walk(operation.requestBody, "request", where, new Set());
      walk(operation.responses, "response", where, new Set());
    }
  }
  return found;
}

Deno.test("every date and date-time in the document has the pattern the server checks: a request's in 1900-2999, an answer's in UTC", async () => {
  const dated = await datedSchemas();
  const wrong = dated.filter((d) =>
    d.side === "request"
      // A request's carry the pattern alone: a format would have a generator draw years 1 to 9999.
      ? d.format !== undefined || (d.pattern !== patterns.requestDateTime && d.pattern !== patterns.date)
      : !(d.format === "date-time" && d.pattern === patterns.answeredDateTime) && !(d.format === "date" && d.pattern === patterns.date)
  ).map((d) => `${d.where} (${d.side}): format ${d.format}, pattern ${d.pattern}`);
  assert.deepEqual(wrong, []);
  for (const [side, pattern] of [["request", patterns.requestDateTime], ["request", patterns.date], ["response", patterns.answeredDateTime], ["response", patterns.date]]) {
    assert.ok(dated.some((d) => d.side === side && d.pattern === pattern), `a ${side} carries ${pattern}`);
  }
  assert.equal(patternOf(answeredDate), patterns.date, "a date is answered as it was taken");
});

// What zod decides and what the document's pattern says, for one value.
const documented = new Map<z.ZodType, RegExp>([[timestampInput, new RegExp(patterns.requestDateTime)], [isoDate, new RegExp(patterns.date)]]);
function agree(schema: typeof timestampInput | typeof isoDate, value: string): boolean {
  const byPattern = documented.get(schema)!.test(value);
  const byZod = schema.safeParse(value).success;
  assert.equal(byPattern, byZod, `${value}: the pattern says ${byPattern}, zod ${byZod}`);
  return byZod;
}

// Every day from 1898 to 3001 as YYYY-MM-DD, and whether the calendar has it (the proleptic
// Gregorian calendar of JavaScript's Date, which Postgres shares).
function* everyDay(): Generator<[string, boolean]> {
  for (let year = 1898; year <= 3001; year++) {
    for (let month = 1; month <= 12; month++) {
      for (let day = 1; day <= 31; day++) {
        const text = `${year}-${String(month).padStart(2, "0")}-${String(day).padStart(2, "0")}`;
        const date = new Date(Date.UTC(year, month - 1, day));
        yield [text, date.getUTCMonth() === month - 1];
      }
    }
  }
}

Deno.test("a date is a real calendar day from 1900-01-01 to 2999-12-31, February 29 in leap years only", () => {
  let taken = 0;
  for (const [text, real] of everyDay()) {
    const year = Number(text.slice(0, 4));
    const expected = real && year >= 1900 && year <= 2999;
    assert.equal(agree(isoDate, text), expected, text);
    assert.equal(agree(timestampInput, `${text}T12:00:00Z`), expected, `${text}T12:00:00Z`);
    // An answer's instant may be a day beyond, in 1899 or 3000.
    assert.equal(timestamp.safeParse(`${text}T12:00:00+00:00`).success, real && year >= 1899 && year <= 3000, text);
    if (expected) taken++;
  }
  assert.equal(taken, 365 * 1100 + 267, "1,100 years with 267 leap days (not 1900, 2100, 2200, 2300, 2500, 2600, 2700, 2900)");
  for (const text of ["0000-01-01", "9999-12-31", "2027-1-01", "2027-01-1", "20270101", " 2027-01-01", "2027-01-01 ", "２027-01-01"]) {
    assert.equal(agree(isoDate, text), false, text);
  }
});

Deno.test("a request's date-time carries Z or an offset within 15:59 either way, seconds, and at most nine digits of fraction", () => {
  for (const sign of ["+", "-"]) {
    for (let hours = 0; hours <= 23; hours++) {
      for (let minutes = 0; minutes <= 59; minutes++) {
        const offset = `${sign}${String(hours).padStart(2, "0")}:${String(minutes).padStart(2, "0")}`;
        assert.equal(agree(timestampInput, `2027-03-01T10:00:00${offset}`), hours <= 15, offset);
        // What the API answers is in UTC.
        assert.equal(timestamp.safeParse(`2027-03-01T10:00:00${offset}`).success, offset === "+00:00", offset);
      }
    }
  }
  assert.equal(timestamp.safeParse("2027-03-01T10:00:00.123456Z").success, true);
  for (
    const [value, taken] of [
      ["2027-03-01T10:00:00Z", true],
      ["2027-03-01T10:00:00.1+01:00", true],
      ["2027-03-01T10:00:00.123456789-15:59", true],
      ["2027-03-01T10:00:00.1234567890Z", false],
      ["2027-03-01T10:00:00.Z", false],
      ["2027-03-01T10:00Z", false],
      ["2027-03-01T24:00:00Z", false],
      ["2027-03-01T23:59:60Z", false],
      ["2027-03-01T10:00:00", false],
      ["2027-03-01T10:00:00+0100", false],
      ["2027-03-01t10:00:00z", false],
      ["2027-03-01 10:00:00Z", false],
    ] as const
  ) {
    assert.equal(agree(timestampInput, value), taken, value);
  }
});
