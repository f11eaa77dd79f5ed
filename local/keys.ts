// Prints a fresh stack's keys, shaped like the ones `supabase start` makes, the key pair
// that signs the SendGrid double's Event Webhook posts, and the push channel's VAPID key
// pair. One group alone when named (`keys.ts jwt`, `keys.ts sendgrid-webhook`,
// `keys.ts vapid`), all when none is:
//   jwt                 JWT_SECRET, the legacy HS256 secret; the anon and service_role API
//                       keys are signed with it, and Auth still accepts tokens it signed
//                       ANON_KEY, SERVICE_ROLE_KEY
//                       AUTH_JWT_KEYS, Auth's key set (GOTRUE_JWT_KEYS): an ES256 private
//                       key that signs access tokens, published at
//                       /auth/v1/.well-known/jwks.json, and the legacy secret as a
//                       verify-only key
//   sendgrid-webhook    SENDGRID_WEBHOOK_VERIFICATION_KEY, the public key as SendGrid shows
//                       it (base64 of its SubjectPublicKeyInfo DER), which the api function
//                       verifies with; SENDGRID_EVENT_WEBHOOK_PRIVATE_KEY (base64 PKCS#8 DER),
//                       which only the SendGrid double holds, as SendGrid holds its own
//   vapid               VAPID_PUBLIC_KEY and VAPID_PRIVATE_KEY, the application server's key
//                       pair that signs each push (RFC 8292), made by web-push itself: the
//                       library that signs with them reads them in the form it writes
//                       (unpadded base64url of the raw point and scalar), and an operator makes a
//                       hosted project's pair with the same library (docs/notifications-push.md).
//                       web-push loads http_ece, which reads ECE_KEYLOG when it loads: this
//                       group alone needs --allow-env=ECE_KEYLOG, so web-push is loaded for it alone
import { base64url, exportJWK, generateKeyPair, SignJWT } from "jose";

const GROUPS = ["jwt", "sendgrid-webhook", "vapid"];
const groups = Deno.args.length > 0 ? Deno.args : GROUPS;
for (const group of groups) {
  if (!GROUPS.includes(group)) throw new Error(`unknown key group ${group}`);
}

if (groups.includes("jwt")) {
  const secret = base64url.encode(crypto.getRandomValues(new Uint8Array(48)));
  const secretBytes = new TextEncoder().encode(secret);
  const issuedAt = Math.floor(Date.now() / 1000);
  const tenYears = 10 * 365 * 24 * 3600;
  const apiKey = (role: string) =>
    new SignJWT({ iss: "supabase-local", role }).setProtectedHeader({ alg: "HS256", typ: "JWT" })
      .setIssuedAt(issuedAt).setExpirationTime(issuedAt + tenYears).sign(secretBytes);

  const { privateKey } = await generateKeyPair("ES256", { extractable: true });
  const { kty, crv, x, y, d } = await exportJWK(privateKey);
  const signingKey = { kty, crv, x, y, d, kid: crypto.randomUUID(), alg: "ES256", use: "sig", key_ops: ["sign", "verify"] };
  const legacyKey = { kty: "oct", k: base64url.encode(secretBytes), kid: crypto.randomUUID(), alg: "HS256", key_ops: ["verify"] };

  console.log(`JWT_SECRET=${secret}`);
  console.log(`ANON_KEY=${await apiKey("anon")}`);
  console.log(`SERVICE_ROLE_KEY=${await apiKey("service_role")}`);
  console.log(`AUTH_JWT_KEYS='${JSON.stringify([signingKey, legacyKey])}'`);
}

if (groups.includes("sendgrid-webhook")) {
  const pair = await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign", "verify"]);
  const base64 = (bytes: ArrayBuffer) => btoa(String.fromCharCode(...new Uint8Array(bytes)));
  console.log(`SENDGRID_WEBHOOK_VERIFICATION_KEY=${base64(await crypto.subtle.exportKey("spki", pair.publicKey))}`);
  console.log(`SENDGRID_EVENT_WEBHOOK_PRIVATE_KEY=${base64(await crypto.subtle.exportKey("pkcs8", pair.privateKey))}`);
}

if (groups.includes("vapid")) {
  const { default: webpush } = await import("web-push");
  const { publicKey, privateKey }: { publicKey: string; privateKey: string } = webpush.generateVAPIDKeys();
  console.log(`VAPID_PUBLIC_KEY=${publicKey}`);
  console.log(`VAPID_PRIVATE_KEY=${privateKey}`);
}
