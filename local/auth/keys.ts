// The Auth double's keys: the one that signs access tokens, the ones that verify bearer
// tokens, and the public set it publishes. As Supabase Auth configures them: GOTRUE_JWT_KEYS
// is an array of private JWKs, exactly one of which has "sign" among its key_ops; the rest
// only verify, found by kid. Without that array the legacy secret (GOTRUE_JWT_SECRET) signs
// with HS256. A token without a kid and with HS256 is checked against the secret either way
// (the anon and service_role API keys are such tokens). Tokens are verified with the
// algorithms of the configured keys, or GOTRUE_JWT_VALID_METHODS when set.
import {
  base64url,
  type CryptoKey,
  errors,
  importJWK,
  type JWK,
  type JWTPayload,
  jwtVerify,
  type ProtectedHeaderParameters,
  SignJWT,
} from "jose";
import type { AuthConfig } from "./config.ts";
import { AuthError } from "./errors.ts";

type KeyEntry = { jwk: JWK; alg: string; key: CryptoKey | Uint8Array };

export type Keys = {
  sign(claims: Record<string, unknown>): Promise<string>;
  // The claims of a token this Auth would accept, or a 403 bad_jwt.
  verify(token: string, now: Date): Promise<JWTPayload>;
  // The public members of the asymmetric keys, for /.well-known/jwks.json.
  published: JWK[];
};

const ASYMMETRIC = new Set(["RS256", "RS512", "ES256", "ES512", "EdDSA"]);

function algorithmOf(jwk: JWK): string {
  return jwk.alg && ASYMMETRIC.has(jwk.alg) ? jwk.alg : "HS256";
}

function publicPart(jwk: JWK): JWK {
  const { kty, crv, x, y, n, e, kid, alg } = jwk;
  const members = Object.fromEntries(Object.entries({ kty, crv, x, y, n, e, kid, alg }).filter(([, value]) => value !== undefined));
  return { ...members, use: "sig", key_ops: ["verify"] };
}

async function importEntry(jwk: JWK, purpose: "sign" | "verify"): Promise<KeyEntry> {
  const alg = algorithmOf(jwk);
  if (jwk.kty === "oct") {
    if (typeof jwk.k !== "string") throw new Error(`GOTRUE_JWT_KEYS: the oct key ${jwk.kid ?? ""} has no k`);
    return { jwk, alg, key: base64url.decode(jwk.k) };
  }
  const material = purpose === "sign" ? jwk : publicPart(jwk);
  const { key_ops: _ops, use: _use, ...importable } = material;
  return { jwk, alg, key: await importJWK(importable, alg) as CryptoKey };
}

// golang-jwt's wording of why a token was refused, which Auth puts after its own prefix.
function refusalOf(error: unknown): string {
  if (error instanceof AuthError) return error.message;
  if (error instanceof errors.JWTExpired) return "token has invalid claims: token is expired";
  if (error instanceof errors.JWTClaimValidationFailed && error.claim === "nbf") {
    return "token has invalid claims: token is not valid yet";
  }
  if (error instanceof errors.JWSSignatureVerificationFailed) return "token signature is invalid: signature is invalid";
  if (error instanceof errors.JOSEAlgNotAllowed) return `token signature is invalid: ${error.message}`;
  if (error instanceof errors.JWSInvalid || error instanceof errors.JWTInvalid) {
    return "token is malformed: token contains an invalid number of segments";
  }
  return `token is unverifiable: ${error instanceof Error ? error.message : String(error)}`;
}

class KeyLookupError extends Error {}

export async function createKeys(config: AuthConfig["jwt"]): Promise<Keys> {
  const secret = new TextEncoder().encode(config.secret);
  const configured = config.keys.length > 0
    ? config.keys as JWK[]
    : [{ kty: "oct", k: base64url.encode(secret), alg: "HS256", use: "sig", key_ops: ["sign", "verify"], ...(config.keyId ? { kid: config.keyId } : {}) }];
  const signers = configured.filter((jwk) => jwk.key_ops?.includes("sign"));
  if (signers.length === 0) throw new Error("GOTRUE_JWT_KEYS: no signing key detected");
  if (signers.length > 1) throw new Error("GOTRUE_JWT_KEYS: multiple signing keys detected, only 1 signing key is supported");
  const signer = await importEntry(signers[0]!, "sign");
  const byKid = new Map<string, KeyEntry>();
  for (const jwk of configured) {
    if (jwk.kid) byKid.set(jwk.kid, await importEntry(jwk, "verify"));
  }
  const algorithms = config.validMethods ?? [...new Set(configured.map(algorithmOf))];

  const keyFor = (header: ProtectedHeaderParameters): CryptoKey | Uint8Array => {
    if (header.kid !== undefined) {
      if (config.keyId !== null && header.kid === config.keyId) return secret;
      const entry = byKid.get(header.kid);
      if (!entry) throw new KeyLookupError(`token is unverifiable: error while executing keyfunc: invalid kid: ${header.kid}`);
      return entry.key;
    }
    if (header.alg === "HS256") return secret;
    throw new KeyLookupError("token is unverifiable: error while executing keyfunc: missing kid");
  };

  return {
    async sign(claims) {
      const header = { alg: signer.alg, ...(signer.jwk.kid ? { kid: signer.jwk.kid } : {}), typ: "JWT" };
      return await new SignJWT(claims).setProtectedHeader(header).sign(signer.key);
    },
    async verify(token, now) {
      try {
        const { payload } = await jwtVerify(token, (header) => keyFor(header), { algorithms, currentDate: now, clockTolerance: 0 });
        return payload;
      } catch (error) {
        const reason = error instanceof KeyLookupError ? error.message : refusalOf(error);
        throw new AuthError(403, "bad_jwt", `invalid JWT: unable to parse or verify signature, ${reason}`);
      }
    },
    published: configured.filter((jwk) => jwk.kty !== "oct").map(publicPart),
  };
}
