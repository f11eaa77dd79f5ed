// The api function's push settings from its environment (src/push/settings.ts).
import assert from "node:assert/strict";
import { base64UrlBytes } from "../../src/push/keys.ts";
import { pushSettingsFrom } from "../../src/push/settings.ts";
import { base64url, p256PublicKey } from "../support/push.ts";

function read(env: Record<string, string>) {
  const logged: string[] = [];
  const settings = pushSettingsFrom((name) => env[name], { error: (message) => logged.push(message) });
  return { settings, logged };
}

Deno.test("push settings: unset is no VAPID key and no loopback endpoints", () => {
  assert.deepEqual(read({}), { settings: { vapidPublicKey: null, allowLoopbackPushEndpoints: false }, logged: [] });
  assert.deepEqual(read({ VAPID_PUBLIC_KEY: "", PUSH_ALLOW_LOOPBACK_HTTP: "" }).settings,
    { vapidPublicKey: null, allowLoopbackPushEndpoints: false });
});

Deno.test("push settings: a P-256 public key is offered without padding; anything else is logged and not offered", async () => {
  const key = base64url(await p256PublicKey());
  assert.equal(read({ VAPID_PUBLIC_KEY: key }).settings.vapidPublicKey, key);
  assert.equal(read({ VAPID_PUBLIC_KEY: `${key}=\n` }).settings.vapidPublicKey, key);
  // The private key, a key in standard base64, a key off the curve.
  const standard = btoa(String.fromCharCode(...base64UrlBytes(key)));
  const offCurve = `${key.slice(0, -1)}${key.at(-1) === "A" ? "E" : "A"}`;
  for (const wrong of [base64url(crypto.getRandomValues(new Uint8Array(32))), standard, offCurve]) {
    // A key whose standard base64 has no + or / is the same key.
    if (wrong.replace(/=+$/, "") === key) continue;
    const { settings, logged } = read({ VAPID_PUBLIC_KEY: wrong });
    assert.equal(settings.vapidPublicKey, null, wrong);
    assert.deepEqual(logged, ["the VAPID_PUBLIC_KEY setting is not a P-256 public key in base64url; push is not offered"]);
  }
});

Deno.test("push settings: PUSH_ALLOW_LOOPBACK_HTTP is true or false, and any other value stops the function", () => {
  assert.equal(read({ PUSH_ALLOW_LOOPBACK_HTTP: "true" }).settings.allowLoopbackPushEndpoints, true);
  assert.equal(read({ PUSH_ALLOW_LOOPBACK_HTTP: "false" }).settings.allowLoopbackPushEndpoints, false);
  for (const value of ["1", "yes", "TRUE", " true"]) {
    assert.throws(() => read({ PUSH_ALLOW_LOOPBACK_HTTP: value }), /PUSH_ALLOW_LOOPBACK_HTTP must be true or false/);
  }
});
