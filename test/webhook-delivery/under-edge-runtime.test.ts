// The webhook sender's own tests, run again under the Deno the hosted Edge Runtime
// implements (2.1.4, as the local runtime runs the functions) and with the runtime's
// permissions (net, env, read, writes to /tmp; the tests' certificates alone need openssl):
// what passes there is what a deployed webhooks worker does, the private-address refusals
// after DNS, the checked address kept for the connection, TLS by the URL's name and the
// run's kept connections among it. The functions' deno.json is the import map, as deployed.
import assert from "node:assert/strict";

const root = new URL("../../", import.meta.url);
const path = (relative: string) => new URL(relative, root).pathname;
const EDGE_DENO = path(`node_modules/deno-edge-runtime-linux-${Deno.build.arch === "aarch64" ? "arm64" : "x64"}/deno`);
const SUITES = ["test/webhook-delivery/endpoint.unit.test.ts", "test/webhook-delivery/endpoint.test.ts"];

Deno.test("the webhook sender's tests pass under the Edge Runtime's Deno and permissions, the refusals after DNS among them", async () => {
  const output = await new Deno.Command(EDGE_DENO, {
    // Type-checked under the tools' Deno already; this run is about what the runtime does.
    args: ["test", "--no-check", "--config", path("supabase/functions/deno.json"), "--allow-net", "--allow-env", "--allow-read",
      "--allow-write=/tmp", "--allow-run=openssl", ...SUITES.map(path)],
    env: { DENO_DIR: path(".stack/deno-edge"), NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(output.stdout) + new TextDecoder().decode(output.stderr);
  assert.equal(output.code, 0, text);
  const summary = /ok \| (\d+) passed \| 0 failed/.exec(text);
  assert.ok(summary, text);
  assert.match(text, /a name that resolves to any private, link-local, loopback or unique-local address is refused before connecting \.\.\. ok/);
  assert.match(text, /posting over https: the connection goes to the checked address.* \.\.\. ok/);
  // Every test of both files ran.
  let declared = 0;
  for (const suite of SUITES) declared += ((await Deno.readTextFile(path(suite))).match(/^Deno\.test\(/gm) ?? []).length;
  assert.equal(Number(summary[1]), declared);
});
