// The served OpenAPI document as an integrator's generator reads it: openapi-python-client,
// independent of the openapi-typescript that makes the tests' own types, generates a
// client from GET /v1/openapi.json without a single warning (a response a generator
// cannot type is one it drops, so every error would reach the integrator untyped), and
// that client creates, reads and is refused through the gateway with typed answers:
// a create's 201 with the new id and Location, the resource under Prefer, problems as
// Problem with their type.
import assert from "node:assert/strict";
import { join } from "node:path";
import { withFixture } from "../support/api.ts";
import { stack } from "../support/stack.ts";

const root = new URL("../../", import.meta.url).pathname;
const requirements = join(root, "test/docs/python-client/requirements.txt");
const decoder = new TextDecoder();

async function run(command: string, args: string[], env: Record<string, string> = {}) {
  const output = await new Deno.Command(command, { args, env, stdin: "null", stdout: "piped", stderr: "piped" }).output();
  return { code: output.code, stdout: decoder.decode(output.stdout), stderr: decoder.decode(output.stderr) };
}

// The generator in a virtual environment of its own, kept per requirements file as the
// fuzzer's is (scripts/python-venv.sh), installed from the pinned list alone.
async function generatorEnvironment(): Promise<string> {
  const made = await run("bash", [join(root, "scripts/python-venv.sh"), "openapi-python-client", requirements]);
  assert.equal(made.code, 0, made.stderr);
  return made.stdout.trim();
}

Deno.test("openapi-python-client generates a client from the served document without a warning, and it works", async () => {
  const venv = await generatorEnvironment();
  const work = await Deno.makeTempDir({ prefix: "generated-client-" });
  try {
    const served = await fetch(`${stack.v1}/openapi.json`);
    assert.equal(served.status, 200);
    const document = join(work, "openapi.json");
    await Deno.writeTextFile(document, await served.text());

    const packageName = "pms_client";
    // The generator formats what it writes with ruff, from the same environment.
    const env = { PATH: `${join(venv, "bin")}:${Deno.env.get("PATH") ?? ""}`, NO_COLOR: "1" };
    const generated = await run(join(venv, "bin/openapi-python-client"), [
      "generate", "--path", document, "--output-path", join(work, packageName), "--meta", "none",
    ], env);
    const said = `${generated.stdout}\n${generated.stderr}`;
    assert.equal(generated.code, 0, said);
    // Anything the generator says beyond that it generates is a warning: a response or
    // schema it could not read, a skipped operation, a failed formatting hook.
    const remarks = said.split("\n").map((line) => line.trim()).filter((line) => line !== "" && !line.startsWith("Generating "));
    assert.deepEqual(remarks, [], said);

    await withFixture(async ({ tenant }) => {
      const { owner, tenantId } = await tenant("generated-client");
      const exercised = await run(join(venv, "bin/python"), [join(root, "test/docs/python-client/exercise.py")], {
        ...env,
        CLIENT_PARENT: work,
        CLIENT_PACKAGE: packageName,
        API_BASE: stack.v1.replace(/\/v1$/, ""),
        TOKEN: owner.token,
        TENANT_ID: tenantId,
      });
      assert.equal(exercised.code, 0, exercised.stderr);
      const seen = JSON.parse(exercised.stdout);
      assert.equal(seen.created.status, 201);
      assert.equal(seen.created.kind, "Created", "a create's default body parses as the new id");
      assert.match(seen.created.id, /^[0-9a-f-]{36}$/);
      assert.equal(seen.created.location, `properties/${seen.created.id}`);
      assert.deepEqual(seen.read, { status: 200, kind: "Property", name: seen.read.name });
      assert.match(seen.read.name, /^Generated client house /);
      assert.deepEqual(seen.again, { status: 409, kind: "Problem", type: "urn:pms:problem:already-exists" });
      assert.equal(seen.whole.status, 201);
      assert.equal(seen.whole.kind, "Property", "under Prefer: return=representation the body is the resource");
      assert.equal(seen.whole.name, `${seen.read.name} annex`);
      assert.deepEqual(seen.unknown, { status: 404, kind: "Problem", type: "urn:pms:problem:not-found" });
    });
  } finally {
    await Deno.remove(work, { recursive: true });
  }
});
