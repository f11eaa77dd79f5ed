import {
  type CompactJWSHeaderParameters,
  createLocalJWKSet,
  createRemoteJWKSet,
  type CryptoKey,
  customFetch,
  errors,
  type ExportedJWKSCache,
  type FlattenedJWSInput,
  jwksCache,
  type JWKSCacheInput,
  type JWTPayload,
  jwtVerify,
} from "jose";
import { HttpError, unauthorized } from "../http/problem.ts";
import type { AccessClaims } from "../http/request-scope.ts";
import type { Logger } from "../logging/logger.ts";

export type AccessTokenVerifier = (token: string) => Promise<AccessClaims>;

export type AccessTokenVerifierDeps = {
  // Auth's published signing keys, <auth url>/.well-known/jwks.json.
  jwksUrl?: string | URL;
  // The legacy JWT secret, for projects whose Auth still signs with HS256.
  jwtSecret?: string;
  // When given, every token's `iss` must be this (Auth's own URL on a hosted project).
  issuer?: string;
  // The clock for `exp` and `nbf`. The key set's cache ages by the system clock: jose keeps it.
  now: () => number;
  fetch?: typeof fetch;
  // How long fetched keys are used before the set is fetched again; Auth serves the set
  // with max-age=600, so 10 minutes by default.
  jwksCacheMaxAgeMs?: number;
  // How long after a fetch a token naming an unknown key may cause another (30 s by default),
  // so a stream of tokens with made-up key ids cannot make the API hammer Auth. Also how
  // long after a failed fetch the last good set is used without asking Auth again.
  jwksCooldownMs?: number;
  // How long after its last good fetch the key set still verifies tokens while it cannot
  // be fetched again (stale-if-error): 24 hours by default; 0 answers 503 as soon as the
  // set has aged and Auth is out of reach.
  jwksStaleIfErrorMs?: number;
  // How long one fetch of the key set may take (5 s by default).
  jwksTimeoutMs?: number;
  // Told when the key set cannot be fetched: the request is verified with the last good set,
  // or answers 503, which the router does not log.
  logger?: Pick<Logger, "warn">;
  // How many verified tokens are remembered (10,000 by default; 0 remembers none).
  verifiedTokenCacheSize?: number;
};

// The asymmetric algorithms Supabase Auth signs with; their keys come only from the
// published set. HS256 is checked only against the secret. Pinning each algorithm to
// one source of keys means an HS256 token can never be checked against a public key's
// bytes (algorithm confusion), and jose refuses a key whose type does not match the
// token's algorithm as well.
const PUBLISHED_KEY_ALGORITHMS: readonly string[] = ["ES256", "RS256"];
const SECRET_ALGORITHM = "HS256";
// Supabase Auth's access tokens carry aud "authenticated"; the anon and service_role
// API keys carry none.
const SESSION_AUDIENCE = "authenticated";

const MALFORMED = "The access token is malformed.";
const UNSUPPORTED_ALGORITHM = "The access token is not signed with a supported algorithm.";

function hasAudience(aud: unknown, audience: string): boolean {
  return aud === audience || (Array.isArray(aud) && aud.includes(audience));
}

function isSessionClaims(payload: JWTPayload): payload is AccessClaims {
  return typeof payload.sub === "string" && typeof payload.session_id === "string" &&
    typeof payload.role === "string" && typeof payload.exp === "number" && hasAudience(payload.aud, SESSION_AUDIENCE);
}

function keySetUnavailable(): HttpError {
  return new HttpError("service-unavailable", "Authentication is not available right now.", {
    headers: { "retry-after": "5" },
  });
}

// jose's errors as the API's problems, by class. What is not a refusal of the token
// (a fault of ours) goes on to the router, which logs it and answers 500.
function refusal(error: unknown): unknown {
  if (error instanceof HttpError) return error;
  if (error instanceof errors.JWSSignatureVerificationFailed) return unauthorized("The access token's signature is invalid.");
  if (error instanceof errors.JWTExpired) return unauthorized("The access token has expired.");
  if (error instanceof errors.JOSEAlgNotAllowed) return unauthorized(UNSUPPORTED_ALGORITHM);
  if (error instanceof errors.JWKSNoMatchingKey || error instanceof errors.JWKSMultipleMatchingKeys) {
    return unauthorized("The access token's signature is not by a key Supabase Auth publishes.");
  }
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === "nbf") return unauthorized("The access token is not valid yet.");
    return unauthorized("The access token's claims are invalid.");
  }
  if (error instanceof errors.JWSInvalid || error instanceof errors.JWTInvalid) return unauthorized(MALFORMED);
  // An extension the token marks critical (`crit`) that jose does not know.
  if (error instanceof errors.JOSENotSupported) return unauthorized("The access token uses a header the API does not support.");
  return error;
}

// Verifies a Supabase Auth access token: signature, expiry, issuer when given, and
// that it is a session's token. Whether the session still exists is checked in the database.
export function createAccessTokenVerifier(deps: AccessTokenVerifierDeps): AccessTokenVerifier {
  if (deps.jwksUrl === undefined && deps.jwtSecret === undefined) {
    throw new Error("createAccessTokenVerifier needs jwksUrl, jwtSecret or both");
  }
  if (deps.jwtSecret === "") throw new Error("createAccessTokenVerifier: jwtSecret is empty");

  // Imported once: given bytes, jose would import them as a key again for every token.
  const secretKey: Promise<CryptoKey> | undefined = deps.jwtSecret === undefined ? undefined : crypto.subtle.importKey(
    "raw",
    new TextEncoder().encode(deps.jwtSecret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["verify"],
  );

  const jwksUrl = deps.jwksUrl === undefined ? undefined : new URL(deps.jwksUrl);
  const cooldownMs = deps.jwksCooldownMs ?? 30_000;
  const staleIfErrorMs = deps.jwksStaleIfErrorMs ?? 86_400_000;
  // jose writes every set it fetches here, with when it fetched it (`uat`, by the system
  // clock, as jose ages its cache): the last good set, for when a refetch fails.
  const lastGood: Partial<ExportedJWKSCache> = {};
  const publishedKeys = jwksUrl && createRemoteJWKSet(jwksUrl, {
    cacheMaxAge: deps.jwksCacheMaxAgeMs ?? 600_000,
    cooldownDuration: cooldownMs,
    timeoutDuration: deps.jwksTimeoutMs ?? 5_000,
    [jwksCache]: lastGood as JWKSCacheInput,
    ...(deps.fetch ? { [customFetch]: deps.fetch } : {}),
  });

  // Stale-if-error. jose fetches the set again once it has aged (or for a key it lacks),
  // and when that fetch fails it fails the token, though the set it had is still there:
  // with Auth down for longer than the max age, every request would answer 503. Instead
  // the last good set keeps verifying, for up to `staleIfErrorMs` after it was fetched.
  // It vouches only for the keys it holds: a token by a key it lacks still gets 503 (Auth
  // may publish that key now and cannot be asked), and a token whose signature does not
  // verify gets 401 as ever. After a failed fetch Auth is asked again at most once per
  // cooldown; meanwhile the last good set answers at once, so an outage costs one failed
  // fetch per cooldown, not one per request.
  let failedAt = -Infinity;
  let stale: { uat: number; keys: ReturnType<typeof createLocalJWKSet> } | undefined;
  const lastGoodKeys = () => {
    const { jwks, uat } = lastGood;
    if (jwks === undefined || uat === undefined || Date.now() - uat > staleIfErrorMs) return undefined;
    if (stale?.uat !== uat) stale = { uat, keys: createLocalJWKSet(jwks) };
    return stale.keys;
  };

  const algorithms = [
    ...(publishedKeys ? PUBLISHED_KEY_ALGORITHMS : []),
    ...(secretKey ? [SECRET_ALGORITHM] : []),
  ];

  // What one verification learnt about the key it was given.
  type Verification = { byLastGoodSet: boolean };

  const fromLastGoodSet = async (
    keys: ReturnType<typeof createLocalJWKSet>,
    header: CompactJWSHeaderParameters,
    token: FlattenedJWSInput,
    verification: Verification,
  ): Promise<CryptoKey> => {
    verification.byLastGoodSet = true;
    try {
      return await keys(header, token);
    } catch (error) {
      if (error instanceof errors.JWKSMultipleMatchingKeys) throw error;
      throw keySetUnavailable();
    }
  };

  // A token naming a key the set lacks (after the one refetch the cooldown allows) is
  // refused as the token's fault; anything else means the set could not be fetched or a
  // key in it could not be used, which no token can fix.
  const publishedKeyFor = async (
    keys: NonNullable<typeof publishedKeys>,
    header: CompactJWSHeaderParameters,
    token: FlattenedJWSInput,
    verification: Verification,
  ): Promise<CryptoKey> => {
    if (Date.now() - failedAt < cooldownMs) {
      const lastKeys = lastGoodKeys();
      if (lastKeys) return await fromLastGoodSet(lastKeys, header, token, verification);
    }
    try {
      return await keys(header, token);
    } catch (error) {
      if (error instanceof errors.JWKSNoMatchingKey || error instanceof errors.JWKSMultipleMatchingKeys) throw error;
      failedAt = Date.now();
      const lastKeys = lastGoodKeys();
      deps.logger?.warn("the JWKS of Supabase Auth could not be fetched or used", {
        url: jwksUrl?.href,
        error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
        lastGoodSetAgeSeconds: lastKeys && lastGood.uat !== undefined ? Math.round((Date.now() - lastGood.uat) / 1000) : null,
      });
      if (lastKeys) return await fromLastGoodSet(lastKeys, header, token, verification);
      throw keySetUnavailable();
    }
  };

  // jose has already refused an algorithm outside `algorithms` when it asks for the key.
  const keyFor = (verification: Verification) => (header: CompactJWSHeaderParameters, token: FlattenedJWSInput): Promise<CryptoKey> => {
    if (header.alg === SECRET_ALGORITHM && secretKey) return secretKey;
    if (PUBLISHED_KEY_ALGORITHMS.includes(header.alg) && publishedKeys) return publishedKeyFor(publishedKeys, header, token, verification);
    throw new errors.JOSEAlgNotAllowed(UNSUPPORTED_ALGORITHM);
  };

  const verifyToken = async (token: string): Promise<{ claims: AccessClaims } & Verification> => {
    const verification: Verification = { byLastGoodSet: false };
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, keyFor(verification), { algorithms, currentDate: new Date(deps.now()) }));
    } catch (error) {
      throw refusal(error);
    }
    // The anon and service_role keys are signed by the same Auth but name no session;
    // they are told so whatever else they lack.
    if (!isSessionClaims(payload)) throw unauthorized("The access token is not a session token.");
    if (deps.issuer !== undefined && payload.iss !== deps.issuer) {
      throw unauthorized("The access token was not issued by this project's Supabase Auth.");
    }
    return { claims: payload, ...verification };
  };

  // A client sends the same access token with every request for up to an hour, and an
  // ES256 verification costs about half a millisecond of CPU. The same bytes verify the
  // same way, so a verified token is remembered: until it expires, and no longer than the
  // key set is kept (a removed key's tokens stop working as soon as they would without
  // this). A token verified by the last good set while Auth is out of reach is not
  // remembered: it is verified again, and by a fresh set as soon as one can be fetched.
  // Whether the session still exists is checked in the database on every request.
  const cacheSize = deps.verifiedTokenCacheSize ?? 10_000;
  const keptForMs = deps.jwksCacheMaxAgeMs ?? 600_000;
  const verified = new Map<string, { claims: AccessClaims; until: number }>();

  return async (token) => {
    const now = deps.now();
    const known = verified.get(token);
    if (known && now < known.until) return known.claims;
    if (known) verified.delete(token);
    const { claims, byLastGoodSet } = await verifyToken(token);
    if (cacheSize > 0 && !byLastGoodSet) {
      // The oldest entry goes first: a Map iterates in insertion order.
      if (verified.size >= cacheSize) verified.delete(verified.keys().next().value!);
      verified.set(token, { claims, until: Math.min(claims.exp * 1000, now + keptForMs) });
    }
    return claims;
  };
}

export function bearerToken(request: Request): string {
  const header = request.headers.get("authorization");
  if (!header) throw unauthorized("Send Authorization: Bearer <access token>.");
  const match = /^Bearer\s+(\S+)$/i.exec(header);
  if (!match) throw unauthorized("The Authorization header must be Bearer <access token>.");
  return match[1]!;
}
