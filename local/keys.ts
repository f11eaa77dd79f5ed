// Prints a fresh stack's keys, shaped like the ones `supabase start` makes:
//   JWT_SECRET        the legacy HS256 secret; the anon and service_role API keys are
//                     signed with it, and Auth still accepts tokens it signed
//   ANON_KEY, SERVICE_ROLE_KEY
//   AUTH_JWT_KEYS     Auth's key set (GOTRUE_JWT_KEYS): an ES256 private key that signs
//                     access tokens, published at /auth/v1/.well-known/jwks.json, and the
//                     legacy secret as a verify-only key
import { base64url, signHs256 } from "./jwt.ts";

const secret = base64url(crypto.getRandomValues(new Uint8Array(48)));
const issuedAt = Math.floor(Date.now() / 1000);
const tenYears = 10 * 365 * 24 * 3600;
const apiKey = (role: string) => signHs256({ iss: "supabase-local", role, iat: issuedAt, exp: issuedAt + tenYears }, secret);

const { privateKey } = await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign", "verify"]);
const { kty, crv, x, y, d } = await crypto.subtle.exportKey("jwk", privateKey);
const signingKey = { kty, crv, x, y, d, kid: crypto.randomUUID(), alg: "ES256", use: "sig", key_ops: ["sign", "verify"] };
const legacyKey = {
  kty: "oct",
  k: base64url(new TextEncoder().encode(secret)),
  kid: crypto.randomUUID(),
  alg: "HS256",
  key_ops: ["verify"],
};

console.log(`JWT_SECRET=${secret}`);
console.log(`ANON_KEY=${await apiKey("anon")}`);
console.log(`SERVICE_ROLE_KEY=${await apiKey("service_role")}`);
console.log(`AUTH_JWT_KEYS='${JSON.stringify([signingKey, legacyKey])}'`);
