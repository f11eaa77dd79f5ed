// What verifying one access token costs: jose (Web Crypto underneath) beside a
// hand-written node:crypto path, for ES256 and HS256, and the API's own verifier on top
// of jose. The key set is fetched once, before the first measured call, through a fetch
// that answers in-process, so what is measured is the per-token work of a warm cache.
//
//   DENO_DIR=.stack/deno node_modules/.bin/deno bench --config deno.json bench/verify.bench.ts
import { Buffer } from "node:buffer";
import { createHmac, createPublicKey, type KeyObject, timingSafeEqual, verify as verifySignature } from "node:crypto";
import { createLocalJWKSet, exportJWK, generateKeyPair, jwtVerify, SignJWT } from "jose";
import { createAccessTokenVerifier } from "../src/auth/access-token.ts";

const JWT_SECRET = "a-legacy-jwt-secret-of-at-least-thirty-two-characters";
const KID = "bench-key";
const nowSeconds = Math.floor(Date.now() / 1000);
const claims = {
  sub: crypto.randomUUID(),
  session_id: crypto.randomUUID(),
  role: "authenticated",
  aud: "authenticated",
  email: "owner@bench.example",
  aal: "aal1",
  iat: nowSeconds,
  exp: nowSeconds + 3600,
};

const { publicKey, privateKey } = await generateKeyPair("ES256", { extractable: true });
const publicJwk = { ...(await exportJWK(publicKey)), kid: KID, alg: "ES256", use: "sig" };
const es256Token = await new SignJWT(claims).setProtectedHeader({ alg: "ES256", typ: "JWT", kid: KID }).sign(privateKey);
const secretBytes = new TextEncoder().encode(JWT_SECRET);
const hs256Token = await new SignJWT(claims).setProtectedHeader({ alg: "HS256", typ: "JWT" }).sign(secretBytes);

// jose, keys prepared once.
const localKeySet = createLocalJWKSet({ keys: [publicJwk] });
const hmacKey = await crypto.subtle.importKey("raw", secretBytes, { name: "HMAC", hash: "SHA-256" }, false, ["verify"]);

// The API's verifier, its key set served without a network.
const verifier = createAccessTokenVerifier({
  jwksUrl: "http://auth.bench.invalid/auth/v1/.well-known/jwks.json",
  jwtSecret: JWT_SECRET,
  now: () => Date.now(),
  fetch: () => Promise.resolve(Response.json({ keys: [publicJwk] })),
});

// The hand-written path: split, decode, check alg, verify, parse: what the verifier did
// before jose, for HS256, and its ES256 counterpart.
function decodeJson(segment: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(segment, "base64url").toString("utf8"));
}

function handWritten(token: string, verifyParts: (signingInput: string, signature: Buffer) => boolean, alg: string) {
  const [headerPart, payloadPart, signaturePart] = token.split(".") as [string, string, string];
  if (decodeJson(headerPart).alg !== alg) throw new Error("alg");
  if (!verifyParts(`${headerPart}.${payloadPart}`, Buffer.from(signaturePart, "base64url"))) throw new Error("signature");
  const payload = decodeJson(payloadPart);
  if ((payload.exp as number) * 1000 <= Date.now()) throw new Error("expired");
  return payload;
}

const ecPublicKey: KeyObject = createPublicKey({ key: publicJwk, format: "jwk" });
const secretBuffer = Buffer.from(JWT_SECRET, "utf8");

const es256ByNodeCrypto = (signingInput: string, signature: Buffer) =>
  verifySignature("sha256", Buffer.from(signingInput), { key: ecPublicKey, dsaEncoding: "ieee-p1363" }, signature);

const hs256ByNodeCrypto = (signingInput: string, signature: Buffer) => {
  const expected = createHmac("sha256", secretBuffer).update(signingInput).digest();
  return signature.length === expected.length && timingSafeEqual(signature, expected);
};

// Every path must accept its token before its time counts; the verifier's first call
// also fills its key set cache.
await jwtVerify(es256Token, localKeySet, { algorithms: ["ES256"] });
await jwtVerify(hs256Token, hmacKey, { algorithms: ["HS256"] });
await verifier(es256Token);
await verifier(hs256Token);
handWritten(es256Token, es256ByNodeCrypto, "ES256");
handWritten(hs256Token, hs256ByNodeCrypto, "HS256");

Deno.bench("ES256: node:crypto verify, by hand", { group: "ES256", baseline: true }, () => {
  handWritten(es256Token, es256ByNodeCrypto, "ES256");
});

Deno.bench("ES256: jose jwtVerify, local JWK set", { group: "ES256" }, async () => {
  await jwtVerify(es256Token, localKeySet, { algorithms: ["ES256"] });
});

Deno.bench("ES256: the API's verifier (jose, remote set cached)", { group: "ES256" }, async () => {
  await verifier(es256Token);
});

Deno.bench("HS256: node:crypto createHmac, by hand", { group: "HS256", baseline: true }, () => {
  handWritten(hs256Token, hs256ByNodeCrypto, "HS256");
});

Deno.bench("HS256: jose jwtVerify, CryptoKey", { group: "HS256" }, async () => {
  await jwtVerify(hs256Token, hmacKey, { algorithms: ["HS256"] });
});

Deno.bench("HS256: jose jwtVerify, secret bytes (imported per token)", { group: "HS256" }, async () => {
  await jwtVerify(hs256Token, secretBytes, { algorithms: ["HS256"] });
});

Deno.bench("HS256: the API's verifier (jose)", { group: "HS256" }, async () => {
  await verifier(hs256Token);
});
