// Web Push's keys as the API takes them: the patterns the document states admit exactly the
// canonical base64url of the right number of bytes (a P-256 point's first byte 0x04), and a
// key of that form must also lie on the curve.
import assert from "node:assert/strict";
import { AUTH_SECRET_PATTERN, base64UrlBytes, isP256Point, isP256PublicKey, P256_PUBLIC_KEY_PATTERN } from "../../src/push/keys.ts";
import { base64url, p256PublicKey } from "../support/push.ts";

const p256Pattern = new RegExp(P256_PUBLIC_KEY_PATTERN);
const authPattern = new RegExp(AUTH_SECRET_PATTERN);

function randomBytes(length: number, first?: number): Uint8Array {
  const bytes = crypto.getRandomValues(new Uint8Array(length));
  if (first !== undefined) bytes[0] = first;
  return bytes;
}

Deno.test("the P-256 pattern takes the base64url of 65 bytes starting with 0x04, padded or not, and nothing else", () => {
  for (let i = 0; i < 500; i++) {
    const encoded = base64url(randomBytes(65, 0x04));
    assert.ok(p256Pattern.test(encoded), encoded);
    assert.ok(p256Pattern.test(`${encoded}=`), `${encoded}=`);
    assert.deepEqual(base64UrlBytes(encoded).length, 65);
  }
  const refused = [
    base64url(randomBytes(65, 0x05)), base64url(randomBytes(65, 0x00)), base64url(randomBytes(33, 0x02)),
    base64url(randomBytes(64, 0x04)), base64url(randomBytes(66, 0x04)), `${base64url(randomBytes(65, 0x04))}==`,
    "",
  ];
  // The same bytes in standard base64, and a last character whose spare bits are not zero.
  const standard = btoa(String.fromCharCode(...randomBytes(65, 0x04)));
  if (/[+/]/.test(standard)) refused.push(standard.replace(/=$/, ""));
  const canonical = base64url(randomBytes(65, 0x04));
  refused.push(`${canonical.slice(0, -1)}${canonical.at(-1) === "B" ? "C" : "B"}`);
  for (const encoded of refused) assert.ok(!p256Pattern.test(encoded), encoded);
});

Deno.test("the authentication secret's pattern takes the base64url of 16 bytes, padded or not, and nothing else", () => {
  for (let i = 0; i < 200; i++) {
    const encoded = base64url(randomBytes(16));
    assert.ok(authPattern.test(encoded), encoded);
    assert.ok(authPattern.test(`${encoded}==`), `${encoded}==`);
  }
  for (const encoded of [base64url(randomBytes(15)), base64url(randomBytes(17)), `${base64url(randomBytes(16))}=`, "AAAAAAAAAAAAAAAAAAAAAB"]) {
    assert.ok(!authPattern.test(encoded), encoded);
  }
});

Deno.test("a P-256 key is on the curve; bytes of its form mostly are not", async () => {
  for (let i = 0; i < 20; i++) {
    const key = await p256PublicKey();
    assert.ok(isP256Point(key));
    assert.ok(isP256PublicKey(base64url(key)));
    // Another y for the same x is off the curve (only y and p - y are on it).
    const tampered = key.slice();
    tampered[64] = tampered[64]! ^ 0x01;
    assert.ok(!isP256Point(tampered));
    assert.ok(!isP256PublicKey(base64url(tampered)));
  }
  assert.ok(!isP256Point(randomBytes(65, 0x04)), "65 random bytes");
  assert.ok(!isP256Point(new Uint8Array(65).fill(0xff).fill(0x04, 0, 1)), "coordinates past the prime");
  assert.ok(!isP256Point((await p256PublicKey()).subarray(0, 64)), "a short key");
});
