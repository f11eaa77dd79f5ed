// The access token verifier on its own, without the stack: tokens are signed here with
// jose and the key set is answered from this process through the fetch the verifier is
// given, so every refusal and every fetch of the key set can be seen. Fetching Auth's
// real key set over HTTP, and the refusals through the gateway, are access-token.test.ts's.
import assert from "node:assert/strict";
import { base64url, CompactSign, exportJWK, exportSPKI, generateKeyPair, type JWK, SignJWT } from "jose";
import { type AccessTokenVerifierDeps, createAccessTokenVerifier } from "../../src/auth/access-token.ts";
import { HttpError } from "../../src/http/problem.ts";

const JWT_SECRET = "a-legacy-jwt-secret-of-at-least-thirty-two-characters";
const HOUR = 3600;

const nowSeconds = () => Math.floor(Date.now() / 1000);

function sessionClaims(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    sub: crypto.randomUUID(),
    session_id: crypto.randomUUID(),
    role: "authenticated",
    aud: "authenticated",
    email: "guest@example.com",
    iat: nowSeconds(),
    exp: nowSeconds() + HOUR,
    ...overrides,
  };
}

type SigningKey = { kid: string; privateKey: CryptoKey; publicJwk: JWK; spkiPem: string };

async function signingKey(kid: string): Promise<SigningKey> {
  const { publicKey, privateKey } = await generateKeyPair("ES256", { extractable: true });
  // The members Supabase Auth publishes for an ES256 key.
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: "ES256", use: "sig", key_ops: ["verify"] };
  return { kid, privateKey, publicJwk, spkiPem: await exportSPKI(publicKey) };
}

async function signEs256(claims: Record<string, unknown>, key: SigningKey, kid = key.kid): Promise<string> {
  return await new SignJWT(claims).setProtectedHeader({ alg: "ES256", typ: "JWT", kid }).sign(key.privateKey);
}

async function signHs256(claims: Record<string, unknown>, secret: string | Uint8Array): Promise<string> {
  const key = typeof secret === "string" ? new TextEncoder().encode(secret) : secret;
  return await new SignJWT(claims).setProtectedHeader({ alg: "HS256", typ: "JWT" }).sign(key);
}

function encodeSegment(value: unknown): string {
  return base64url.encode(JSON.stringify(value));
}

// The key sets this file serves, by URL. The verifiers below fetch through `loopback`,
// which answers from here as Auth would and fails, as a closed port does, for any other
// URL: no socket is opened, so the file needs no network access.
const served = new Map<string, () => Response>();
let nextPort = 40000;

const loopback: typeof fetch = (input) => {
  const url = input instanceof Request ? input.url : String(input);
  const answer = served.get(url);
  return answer ? Promise.resolve().then(answer) : Promise.reject(connectionRefused(url));
};

function connectionRefused(url: string): TypeError {
  return new TypeError(`error sending request for url (${url}): Connection refused`);
}

function nextUrl(): URL {
  return new URL(`http://127.0.0.1:${nextPort++}/auth/v1/.well-known/jwks.json`);
}

// A key set served the way Auth serves it, whose keys a test changes as it goes; while
// `down`, a fetch fails as at a closed port (and is counted among `fetches` all the same).
type KeySetServer = { url: URL; keys: JWK[]; fetches: number; down: boolean; close(): Promise<void> };

function serveKeySet(keys: JWK[]): KeySetServer {
  const url = nextUrl();
  const keySet: KeySetServer = {
    url,
    keys,
    fetches: 0,
    down: false,
    close: () => {
      served.delete(url.href);
      return Promise.resolve();
    },
  };
  served.set(url.href, () => {
    keySet.fetches += 1;
    if (keySet.down) throw connectionRefused(url.href);
    return Response.json({ keys: keySet.keys }, { headers: { "cache-control": "public, max-age=600" } });
  });
  return keySet;
}

// A URL nothing answers at.
function closedPortUrl(): URL {
  return nextUrl();
}

type Warnings = { message: string; fields: Record<string, unknown> | undefined }[];

function verifier(deps: Partial<AccessTokenVerifierDeps>, warnings: Warnings = []) {
  return createAccessTokenVerifier({
    now: () => Date.now(),
    fetch: loopback,
    logger: { warn: (message, fields) => warnings.push({ message, fields }) },
    ...deps,
  });
}

async function refusal(verification: Promise<unknown>): Promise<HttpError> {
  const error = await verification.then(
    () => assert.fail("the token was accepted"),
    (error: unknown) => error,
  );
  assert.ok(error instanceof HttpError, `expected an HttpError, got ${error}`);
  return error;
}

async function assertUnauthorized(verification: Promise<unknown>, detail: RegExp): Promise<void> {
  const error = await refusal(verification);
  assert.equal(error.status, 401);
  assert.equal(error.kind, "unauthorized");
  assert.match(error.extra.headers?.["www-authenticate"] ?? "", /^Bearer/);
  assert.match(error.detail, detail);
}

Deno.test("a verifier needs the key set's URL, the secret or both", () => {
  assert.throws(() => createAccessTokenVerifier({ now: () => Date.now() }), /jwksUrl, jwtSecret or both/);
  assert.throws(() => createAccessTokenVerifier({ jwtSecret: "", now: () => Date.now() }), /empty/);
});

Deno.test("ES256: a valid token is accepted, the key set fetched once and then kept", async () => {
  const key = await signingKey("key-1");
  const keySet = serveKeySet([key.publicJwk]);
  try {
    const verify = verifier({ jwksUrl: keySet.url });
    assert.equal(keySet.fetches, 0, "nothing is fetched before a token asks");
    const claims = sessionClaims();
    const verified = await verify(await signEs256(claims, key));
    assert.equal(verified.sub, claims.sub);
    assert.equal(verified.session_id, claims.session_id);
    assert.equal(verified.email, "guest@example.com");
    await verify(await signEs256(sessionClaims(), key));
    assert.equal(keySet.fetches, 1);
  } finally {
    await keySet.close();
  }
});

Deno.test("ES256: a tampered payload, an expired token and a token by another key are refused", async () => {
  const key = await signingKey("key-1");
  const impostor = await signingKey("key-1");
  const keySet = serveKeySet([key.publicJwk]);
  try {
    const verify = verifier({ jwksUrl: keySet.url });

    const [header, , signature] = (await signEs256(sessionClaims(), key)).split(".");
    const forged = encodeSegment(sessionClaims({ role: "service_role" }));
    await assertUnauthorized(verify(`${header}.${forged}.${signature}`), /signature/);

    const expired = await signEs256(sessionClaims({ iat: nowSeconds() - 2 * HOUR, exp: nowSeconds() - HOUR }), key);
    await assertUnauthorized(verify(expired), /expired/);

    // The same kid as a published key, signed by a key nobody published.
    await assertUnauthorized(verify(await signEs256(sessionClaims(), impostor)), /signature/);
  } finally {
    await keySet.close();
  }
});

Deno.test("expiry is judged by the clock the verifier is given", async () => {
  const key = await signingKey("key-1");
  const keySet = serveKeySet([key.publicJwk]);
  try {
    const token = await signEs256(sessionClaims(), key);
    await verifier({ jwksUrl: keySet.url })(token);
    const twoHoursLater = verifier({ jwksUrl: keySet.url, now: () => Date.now() + 2 * HOUR * 1000 });
    await assertUnauthorized(twoHoursLater(token), /expired/);
  } finally {
    await keySet.close();
  }
});

Deno.test("an unknown kid refetches the set once; after rotation the new key's tokens are accepted", async () => {
  const oldKey = await signingKey("key-old");
  const newKey = await signingKey("key-new");
  const keySet = serveKeySet([oldKey.publicJwk]);
  try {
    const verify = verifier({ jwksUrl: keySet.url, jwksCooldownMs: 0 });
    await verify(await signEs256(sessionClaims(), oldKey));
    assert.equal(keySet.fetches, 1);

    // Auth does not publish the new key yet: one refetch, then the token is refused.
    const byNewKey = await signEs256(sessionClaims(), newKey);
    await assertUnauthorized(verify(byNewKey), /key Supabase Auth publishes/);
    assert.equal(keySet.fetches, 2, "exactly one refetch for the unknown kid");

    keySet.keys = [oldKey.publicJwk, newKey.publicJwk];
    await verify(byNewKey);
    assert.equal(keySet.fetches, 3);
    await verify(await signEs256(sessionClaims(), newKey));
    await verify(await signEs256(sessionClaims(), oldKey));
    assert.equal(keySet.fetches, 3, "both keys are now cached");
  } finally {
    await keySet.close();
  }
});

Deno.test("within the cooldown an unknown kid is refused without fetching the set again", async () => {
  const key = await signingKey("key-1");
  const keySet = serveKeySet([key.publicJwk]);
  try {
    const verify = verifier({ jwksUrl: keySet.url, jwksCooldownMs: 60_000 });
    await verify(await signEs256(sessionClaims(), key));
    for (let attempt = 0; attempt < 3; attempt += 1) {
      await assertUnauthorized(verify(await signEs256(sessionClaims(), key, `made-up-${attempt}`)), /key Supabase Auth publishes/);
    }
    assert.equal(keySet.fetches, 1);
  } finally {
    await keySet.close();
  }
});

Deno.test("once the cache has aged, a key removed from the set no longer verifies", async () => {
  const oldKey = await signingKey("key-old");
  const newKey = await signingKey("key-new");
  const keySet = serveKeySet([oldKey.publicJwk, newKey.publicJwk]);
  try {
    const verify = verifier({ jwksUrl: keySet.url, jwksCacheMaxAgeMs: 50 });
    await verify(await signEs256(sessionClaims(), oldKey));
    keySet.keys = [newKey.publicJwk];
    await new Promise((resolve) => setTimeout(resolve, 80));
    await assertUnauthorized(verify(await signEs256(sessionClaims(), oldKey)), /key Supabase Auth publishes/);
    assert.equal(keySet.fetches, 2, "the aged set is fetched again, and the cooldown allows no more");
    await verify(await signEs256(sessionClaims(), newKey));
  } finally {
    await keySet.close();
  }
});

Deno.test("HS256 is accepted with the legacy secret, and never asks the key set", async () => {
  const key = await signingKey("key-1");
  const keySet = serveKeySet([key.publicJwk]);
  try {
    const verify = verifier({ jwksUrl: keySet.url, jwtSecret: JWT_SECRET });
    const claims = sessionClaims();
    const verified = await verify(await signHs256(claims, JWT_SECRET));
    assert.equal(verified.sub, claims.sub);
    await assertUnauthorized(verify(await signHs256(sessionClaims(), "another-secret-of-sufficient-length!!")), /signature/);
    await assertUnauthorized(
      verify(await signHs256(sessionClaims({ exp: nowSeconds() - HOUR }), JWT_SECRET)),
      /expired/,
    );
    assert.equal(keySet.fetches, 0);
    // Both kinds side by side.
    await verify(await signEs256(sessionClaims(), key));
  } finally {
    await keySet.close();
  }
});

Deno.test("the secret alone verifies HS256 and refuses ES256 as unsupported", async () => {
  const key = await signingKey("key-1");
  const verify = verifier({ jwtSecret: JWT_SECRET });
  await verify(await signHs256(sessionClaims(), JWT_SECRET));
  await assertUnauthorized(verify(await signEs256(sessionClaims(), key)), /algorithm/);
});

Deno.test("without the secret, HS256 is refused as unsupported", async () => {
  const key = await signingKey("key-1");
  const keySet = serveKeySet([key.publicJwk]);
  try {
    const verify = verifier({ jwksUrl: keySet.url });
    await assertUnauthorized(verify(await signHs256(sessionClaims(), JWT_SECRET)), /algorithm/);
    assert.equal(keySet.fetches, 0);
  } finally {
    await keySet.close();
  }
});

Deno.test("algorithm confusion: HS256 signed with the public key's bytes is refused", async () => {
  const key = await signingKey("key-1");
  const keySet = serveKeySet([key.publicJwk]);
  try {
    const encoder = new TextEncoder();
    const forgeries = await Promise.all([
      signHs256(sessionClaims(), encoder.encode(key.spkiPem)),
      signHs256(sessionClaims(), encoder.encode(JSON.stringify(key.publicJwk))),
      new SignJWT(sessionClaims()).setProtectedHeader({ alg: "HS256", kid: key.kid }).sign(encoder.encode(key.spkiPem)),
    ]);
    const keySetOnly = verifier({ jwksUrl: keySet.url });
    const withSecret = verifier({ jwksUrl: keySet.url, jwtSecret: JWT_SECRET });
    for (const forgery of forgeries) {
      await assertUnauthorized(keySetOnly(forgery), /algorithm/);
      // With a secret, HS256 is checked against the secret and nothing else.
      await assertUnauthorized(withSecret(forgery), /signature/);
    }
    assert.equal(keySet.fetches, 0);
  } finally {
    await keySet.close();
  }
});

Deno.test("alg none and algorithms nobody configured are refused", async () => {
  const key = await signingKey("key-1");
  const keySet = serveKeySet([key.publicJwk]);
  try {
    const verify = verifier({ jwksUrl: keySet.url, jwtSecret: JWT_SECRET });
    const payload = encodeSegment(sessionClaims());
    for (const header of [{ alg: "none" }, { alg: "none", typ: "JWT", kid: key.kid }, { alg: "HS512" }, { alg: "ES384" }]) {
      await assertUnauthorized(verify(`${encodeSegment(header)}.${payload}.`), /algorithm/);
    }
    await assertUnauthorized(verify(`${encodeSegment({ typ: "JWT" })}.${payload}.`), /malformed/);
    assert.equal(keySet.fetches, 0);
  } finally {
    await keySet.close();
  }
});

Deno.test("malformed tokens are refused as malformed", async () => {
  const verify = verifier({ jwtSecret: JWT_SECRET });
  const valid = await signHs256(sessionClaims(), JWT_SECRET);
  const [header, payload] = valid.split(".");
  // Claims that are JSON but not an object, correctly signed.
  const notAnObject = await new CompactSign(new TextEncoder().encode("[1,2]"))
    .setProtectedHeader({ alg: "HS256" })
    .sign(new TextEncoder().encode(JWT_SECRET));
  for (const token of ["not.a-token", "", "a.b.c.d", `${header}.${payload}`, `!!!.${payload}.sig`, `${header}.${payload}.!!!`, notAnObject]) {
    await assertUnauthorized(verify(token), /malformed/);
  }
  // Not signed by the secret: the signature is what fails first.
  await assertUnauthorized(verify(`${header}.${base64url.encode("not json")}.sig`), /signature/);
});

Deno.test("an API key is not a session token, whichever way it is signed", async () => {
  const key = await signingKey("key-1");
  const keySet = serveKeySet([key.publicJwk]);
  try {
    const verify = verifier({ jwksUrl: keySet.url, jwtSecret: JWT_SECRET, issuer: "http://127.0.0.1/auth/v1" });
    // The shape of Supabase's anon key: no sub, no session, no aud, and another issuer.
    const anonKey = { iss: "supabase-demo", role: "anon", iat: nowSeconds(), exp: nowSeconds() + 10 * 365 * 24 * HOUR };
    await assertUnauthorized(verify(await signHs256(anonKey, JWT_SECRET)), /session token/);
    await assertUnauthorized(verify(await signEs256(anonKey, key)), /session token/);
    await assertUnauthorized(
      verify(await signHs256({ ...anonKey, role: "service_role" }, JWT_SECRET)),
      /session token/,
    );
    // A session's claims meant for another audience.
    await assertUnauthorized(verify(await signEs256(sessionClaims({ aud: "other" }), key)), /session token/);
  } finally {
    await keySet.close();
  }
});

Deno.test("the issuer, when given, must match", async () => {
  const key = await signingKey("key-1");
  const keySet = serveKeySet([key.publicJwk]);
  try {
    const issuer = "https://project.example/auth/v1";
    const verify = verifier({ jwksUrl: keySet.url, issuer });
    await verify(await signEs256(sessionClaims({ iss: issuer }), key));
    await assertUnauthorized(verify(await signEs256(sessionClaims({ iss: "https://other.example/auth/v1" }), key)), /issued/);
    await assertUnauthorized(verify(await signEs256(sessionClaims(), key)), /issued/);
  } finally {
    await keySet.close();
  }
});

Deno.test("a key set that cannot be fetched answers 503, and says so in the log", async () => {
  const key = await signingKey("key-1");
  const token = await signEs256(sessionClaims(), key);

  const warnings: Warnings = [];
  const unreachable = verifier({ jwksUrl: closedPortUrl() }, warnings);
  for (let attempt = 0; attempt < 2; attempt += 1) {
    const error = await refusal(unreachable(token));
    assert.equal(error.status, 503);
    assert.equal(error.kind, "service-unavailable");
    assert.ok(error.extra.headers?.["retry-after"]);
  }
  assert.equal(warnings.length, 2, "each failed fetch is logged");

  // Auth answering, but not with a key set: the same.
  const broken = nextUrl();
  served.set(broken.href, () => new Response("no", { status: 502 }));
  try {
    const error = await refusal(verifier({ jwksUrl: broken })(token));
    assert.equal(error.status, 503);
  } finally {
    served.delete(broken.href);
  }

  // The legacy secret still verifies HS256 while the key set is out of reach.
  const withSecret = verifier({ jwksUrl: closedPortUrl(), jwtSecret: JWT_SECRET });
  await withSecret(await signHs256(sessionClaims(), JWT_SECRET));
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

Deno.test("stale-if-error: once the set has aged and Auth is down, the last good set keeps verifying; unknown keys and bad signatures are still refused", async () => {
  const key = await signingKey("key-1");
  const other = await signingKey("key-2");
  const impostor = await signingKey("key-1");
  const keySet = serveKeySet([key.publicJwk]);
  const warnings: Warnings = [];
  const cooldownMs = 600;
  try {
    const verify = verifier({ jwksUrl: keySet.url, jwksCacheMaxAgeMs: 50, jwksCooldownMs: cooldownMs }, warnings);
    const claims = sessionClaims();
    const token = await signEs256(claims, key);
    await verify(token);
    assert.equal(keySet.fetches, 1);

    keySet.down = true;
    await sleep(80);
    // The set has aged: jose fetches it again, the fetch fails, the last good set verifies.
    assert.equal((await verify(token)).sub, claims.sub);
    assert.equal(keySet.fetches, 2, "one attempt to fetch the aged set");
    assert.equal(warnings.length, 1, "the failed fetch is logged");
    assert.equal(warnings[0]!.fields?.lastGoodSetAgeSeconds, 0);

    // Within the cooldown after the failure, Auth is not asked again, whatever comes.
    await verify(await signEs256(sessionClaims(), key));
    await verify(token);
    // A token by a key the last good set lacks is not accepted: 503, since Auth, which
    // may publish that key by now, cannot be asked.
    const byOtherKey = await refusal(verify(await signEs256(sessionClaims(), other)));
    assert.equal(byOtherKey.status, 503);
    assert.ok(byOtherKey.extra.headers?.["retry-after"]);
    // A known kid with a signature its key did not make, and an expired token: 401.
    await assertUnauthorized(verify(await signEs256(sessionClaims(), impostor)), /signature/);
    await assertUnauthorized(verify(await signEs256(sessionClaims({ iat: nowSeconds() - 2 * HOUR, exp: nowSeconds() - HOUR }), key)), /expired/);
    assert.equal(keySet.fetches, 2, "no fetch within the cooldown after the failure");
    assert.equal(warnings.length, 1);

    // Past the cooldown Auth is asked again; still down, the last good set still answers.
    await sleep(cooldownMs + 50);
    await verify(token);
    assert.equal(keySet.fetches, 3);
    assert.equal(warnings.length, 2);

    // Auth is back, without key-1: once the cooldown lets it be asked, the fresh set
    // decides, and the token verified by the last good set was not remembered.
    keySet.down = false;
    keySet.keys = [other.publicJwk];
    await sleep(cooldownMs + 50);
    await assertUnauthorized(verify(token), /key Supabase Auth publishes/);
    assert.equal(keySet.fetches, 4);
    await verify(await signEs256(sessionClaims(), other));
  } finally {
    await keySet.close();
  }
});

Deno.test("stale-if-error has a limit: a set older than jwksStaleIfErrorMs no longer verifies, and 0 turns it off", async () => {
  const key = await signingKey("key-1");
  const keySet = serveKeySet([key.publicJwk]);
  try {
    const verify = verifier({ jwksUrl: keySet.url, jwksCacheMaxAgeMs: 50, jwksCooldownMs: 0, jwksStaleIfErrorMs: 150 });
    const token = await signEs256(sessionClaims(), key);
    await verify(token);
    keySet.down = true;
    await sleep(80);
    await verify(token);
    await sleep(120);
    const error = await refusal(verify(token));
    assert.equal(error.status, 503);
    assert.equal(keySet.fetches, 3, "with no cooldown every request asks Auth again");

    // 0 turns it off: the aged set is not used.
    const keySetToo = serveKeySet([key.publicJwk]);
    try {
      const strict = verifier({ jwksUrl: keySetToo.url, jwksCacheMaxAgeMs: 50, jwksStaleIfErrorMs: 0 });
      await strict(token);
      keySetToo.down = true;
      await sleep(80);
      assert.equal((await refusal(strict(token))).status, 503);
    } finally {
      await keySetToo.close();
    }
  } finally {
    await keySet.close();
  }
});

Deno.test("the set is fetched through the fetch it is given", async () => {
  const key = await signingKey("key-1");
  const requested: string[] = [];
  const fakeFetch: typeof fetch = (input) => {
    requested.push(String(input));
    return Promise.resolve(Response.json({ keys: [key.publicJwk] }));
  };
  const verify = verifier({ jwksUrl: "http://auth.invalid/auth/v1/.well-known/jwks.json", fetch: fakeFetch });
  await verify(await signEs256(sessionClaims(), key));
  assert.deepEqual(requested, ["http://auth.invalid/auth/v1/.well-known/jwks.json"]);
});

Deno.test("a verified token is remembered: the same token again is not verified again, and still expires", async () => {
  const key = await signingKey("key-1");
  const keySet = serveKeySet([key.publicJwk]);
  let clock = Date.now();
  try {
    const verify = verifier({ jwksUrl: keySet.url, now: () => clock });
    const token = await signEs256(sessionClaims({ exp: nowSeconds() + 60 }), key);
    const first = await verify(token);
    // Remembered: the key set is gone and the same token is still accepted, as the same claims.
    keySet.keys = [];
    assert.equal(await verify(token), first);
    // Past its exp, the remembered token is verified again, and refused as expired.
    clock += 61_000;
    await assertUnauthorized(verify(token), /expired/);
  } finally {
    await keySet.close();
  }
});

Deno.test("a remembered token is forgotten when the key set ages: a removed key's token is refused as without the memory", async () => {
  const oldKey = await signingKey("key-old");
  const newKey = await signingKey("key-new");
  const keySet = serveKeySet([oldKey.publicJwk, newKey.publicJwk]);
  try {
    const verify = verifier({ jwksUrl: keySet.url, jwksCacheMaxAgeMs: 50 });
    const token = await signEs256(sessionClaims(), oldKey);
    await verify(token);
    keySet.keys = [newKey.publicJwk];
    await new Promise((resolve) => setTimeout(resolve, 80));
    await assertUnauthorized(verify(token), /key Supabase Auth publishes/);
  } finally {
    await keySet.close();
  }
});

Deno.test("with no memory (verifiedTokenCacheSize 0) every request verifies: a removed key fails at once after the set is fetched again", async () => {
  const key = await signingKey("key-1");
  const keySet = serveKeySet([key.publicJwk]);
  try {
    const verify = verifier({ jwksUrl: keySet.url, jwksCacheMaxAgeMs: 0, jwksCooldownMs: 0, verifiedTokenCacheSize: 0 });
    const token = await signEs256(sessionClaims(), key);
    await verify(token);
    keySet.keys = [];
    await assertUnauthorized(verify(token), /key Supabase Auth publishes/);
  } finally {
    await keySet.close();
  }
});

Deno.test("the memory is bounded: past its size the oldest token is verified again", async () => {
  const key = await signingKey("key-1");
  const keySet = serveKeySet([key.publicJwk]);
  try {
    const verify = verifier({ jwksUrl: keySet.url, verifiedTokenCacheSize: 2 });
    const tokens = [await signEs256(sessionClaims(), key), await signEs256(sessionClaims(), key), await signEs256(sessionClaims(), key)];
    const claims = [];
    for (const token of tokens) claims.push(await verify(token));
    // A remembered token answers the very claims it was verified to; one verified again, equal ones.
    assert.equal(await verify(tokens[1]!), claims[1]);
    assert.equal(await verify(tokens[2]!), claims[2]);
    const again = await verify(tokens[0]!);
    assert.notEqual(again, claims[0]);
    assert.deepEqual(again, claims[0]);
  } finally {
    await keySet.close();
  }
});
