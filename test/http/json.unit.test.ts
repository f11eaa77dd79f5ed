// Reading a JSON body on its own: every way a body can be wrong is its own 4xx problem,
// before the handler sees it. errors.test.ts sends such bodies through the gateway.
import assert from "node:assert/strict";
import { z } from "zod";
import { fieldErrors, json, MAX_BODY_BYTES, noContent, readJson } from "../../src/http/json.ts";
import { HttpError } from "../../src/http/problem.ts";

const unit = z.strictObject({ name: z.string().min(1), capacity: z.number().int().positive() });

function post(body: BodyInit | null, headers: Record<string, string> = { "content-type": "application/json" }) {
  return new Request("http://function/api/v1/units", { method: "POST", headers, body });
}

async function refusal(reading: Promise<unknown>): Promise<HttpError> {
  const error = await reading.then(() => assert.fail("the body was accepted"), (error: unknown) => error);
  assert.ok(error instanceof HttpError, String(error));
  return error;
}

Deno.test("a valid body is parsed and typed", async () => {
  assert.deepEqual(await readJson(post(JSON.stringify({ name: "Room 1", capacity: 2 })), unit), { name: "Room 1", capacity: 2 });
  const withCharset = post(JSON.stringify({ name: "Room 1", capacity: 2 }), { "content-type": "Application/JSON; charset=utf-8" });
  assert.deepEqual(await readJson(withCharset, unit), { name: "Room 1", capacity: 2 });
});

Deno.test("a body that is not application/json is a 415", async () => {
  const error = await refusal(readJson(post("name=Room", { "content-type": "application/x-www-form-urlencoded" }), unit));
  assert.equal(error.status, 415);
  assert.equal(error.kind, "unsupported-media-type");
  assert.equal((await refusal(readJson(post("{}", {}), unit))).status, 415, "a body without a content type");
});

Deno.test("malformed JSON is a 400 malformed-json", async () => {
  const error = await refusal(readJson(post("{name: 'Room'"), unit));
  assert.equal(error.status, 400);
  assert.equal(error.kind, "malformed-json");
});

Deno.test("a body over the limit is a 413, by its declared length or as it streams", async () => {
  const big = JSON.stringify({ name: "x".repeat(MAX_BODY_BYTES), capacity: 1 });
  assert.equal((await refusal(readJson(post(big), unit))).kind, "payload-too-large");
  const declared = post("{}", { "content-type": "application/json", "content-length": String(MAX_BODY_BYTES + 1) });
  assert.equal((await refusal(readJson(declared, unit))).status, 413);
  const chunks = new ReadableStream<Uint8Array>({
    start(controller) {
      for (let i = 0; i < 3; i++) controller.enqueue(new Uint8Array(MAX_BODY_BYTES / 2));
      controller.close();
    },
  });
  assert.equal((await refusal(readJson(post(chunks), unit))).status, 413);
});

Deno.test("invalid fields are a 400 validation problem naming each; an unknown field by its name", async () => {
  const error = await refusal(readJson(post(JSON.stringify({ name: "", capacity: 2.5, colour: "red" })), unit));
  assert.equal(error.status, 400);
  assert.equal(error.kind, "validation");
  assert.deepEqual(error.extra.errors?.map((e) => e.path).sort(), ["capacity", "colour", "name"]);
  assert.ok(error.extra.errors?.some((e) => e.path === "colour" && e.message === "Unknown field colour."));
});

Deno.test("no body where one is required is a 400 about the body itself, not a crash", async () => {
  const error = await refusal(readJson(post(null, {}), unit));
  assert.equal(error.kind, "validation");
  assert.deepEqual(error.extra.errors?.map((e) => e.path), ["(body)"]);
});

Deno.test("a NUL character anywhere, in a value or a key, is a 400 naming where", async () => {
  const inValue = await refusal(readJson(post(JSON.stringify({ name: "Room\u00001", capacity: 2 })), unit));
  assert.equal(inValue.kind, "validation");
  assert.deepEqual(inValue.extra.errors, [{ path: "name", message: "Contains U+0000." }]);
  const inKey = await refusal(readJson(post(JSON.stringify({ name: "Room", capacity: 2, "a\u0000b": 1 })), unit));
  assert.deepEqual(inKey.extra.errors?.map((e) => e.path), ["a\u0000b"]);
});

Deno.test("an unknown query parameter is named as one", () => {
  const query = z.strictObject({ limit: z.string().optional() });
  const parsed = query.safeParse({ limit: "2", sort: "name" });
  assert.ok(!parsed.success);
  assert.deepEqual(fieldErrors(parsed.error, "(query)"), [{ path: "sort", message: "Unknown query parameter sort." }]);
});

Deno.test("json and noContent answer as the API answers every success", async () => {
  const ok = json(201, { id: "x" }, { etag: '"1"' });
  assert.equal(ok.status, 201);
  assert.equal(ok.headers.get("content-type"), "application/json");
  assert.equal(ok.headers.get("etag"), '"1"');
  assert.deepEqual(await ok.json(), { id: "x" });
  const empty = noContent({ etag: '"2"' });
  assert.equal(empty.status, 204);
  assert.equal(empty.headers.get("content-type"), null);
  assert.equal(await empty.text(), "");
});
