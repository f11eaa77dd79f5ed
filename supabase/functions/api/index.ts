import { createApi } from "../../../src/app.ts";
import { createAccessTokenVerifier } from "../../../src/auth/access-token.ts";
import { createSupabaseAuth } from "../../../src/auth/supabase-auth.ts";
import { absorbingOrphanedConnectionErrors } from "../../../src/db/connection-loss.ts";
import { corsPolicyFromSetting } from "../../../src/http/cors.ts";
import { databaseConnection } from "../../../src/db/connection.ts";
import { createDb } from "../../../src/db/database.ts";
import { createPool, openConnections, renewablePool } from "../../../src/db/pool.ts";
import { apiPublicUrl, requireEnv } from "../../../src/env.ts";
import { jsonLogger } from "../../../src/logging/logger.ts";
import { pushSettingsFrom } from "../../../src/push/settings.ts";
import { webhookEndpointPolicyFromEnv } from "../../../src/webhook-delivery/endpoint.ts";
import { webhookRouteSettings } from "../../../src/webhook-subscriptions/handlers.ts";
import { calendarImportRouteSettings } from "../../../src/calendar-imports/handlers.ts";

const now = () => Date.now();
const supabaseUrl = requireEnv("SUPABASE_URL");
// Hosted functions reach Auth through the project URL; the local stack names it directly.
const authUrl = `${(Deno.env.get("AUTH_URL") ?? `${supabaseUrl}/auth/v1`).replace(/\/$/, "")}/`;

// Auth signs with the asymmetric keys it publishes. A project still on the legacy JWT
// secret signs with HS256, and only then is AUTH_JWT_SECRET set: accepting HS256 is an
// explicit choice. SUPABASE_JWT_SECRET is deliberately not a fallback: it is not among
// the secrets the platform documents for functions, and a secret the operator did not
// set would keep HS256 tokens valid here after the project revoked its legacy key.
const jwtSecret = Deno.env.get("AUTH_JWT_SECRET") || undefined;
// Auth serves its key set with max-age=600.
const jwksCacheSeconds = Number(Deno.env.get("AUTH_JWKS_CACHE_SECONDS") || 600);
if (!Number.isFinite(jwksCacheSeconds) || jwksCacheSeconds < 0) {
  throw new Error("AUTH_JWKS_CACHE_SECONDS must be a number of seconds, 0 or more");
}

// The providers' delivery reports (src/webhooks/handlers.ts): SendGrid's verification key
// for its signed Event Webhook, the SMS account whose auth token signs its callbacks, and
// this function's public URL, which the SMS provider signs.
const webhooks = {
  sendGridVerificationKey: Deno.env.get("SENDGRID_WEBHOOK_VERIFICATION_KEY") || null,
  sendGridToleranceSeconds: Number(Deno.env.get("SENDGRID_WEBHOOK_TOLERANCE_SECONDS") || 300),
  smsAccountSid: Deno.env.get("SMS_ACCOUNT_SID") || null,
  smsAuthToken: Deno.env.get("SMS_AUTH_TOKEN") || null,
  publicUrl: apiPublicUrl((name) => Deno.env.get(name)),
};
if (!Number.isFinite(webhooks.sendGridToleranceSeconds) || webhooks.sendGridToleranceSeconds <= 0) {
  throw new Error("SENDGRID_WEBHOOK_TOLERANCE_SECONDS must be a number of seconds above 0");
}

// Web Push (src/push/handlers.ts): VAPID_PUBLIC_KEY, the key browsers subscribe with (unset:
// GET /v1/push/public-key answers 404 push-not-configured), and PUSH_ALLOW_LOOPBACK_HTTP,
// true only where a local stand-in for a push service runs (the local stack).
const push = pushSettingsFrom((name) => Deno.env.get(name), jsonLogger);

// Outbound webhooks (src/webhook-subscriptions) and calendar imports (src/calendar-imports):
// the URLs a subscription or an import may name. WEBHOOKS_ALLOW_LOOPBACK_HTTP is true only
// where the local receiver runs (the local stack).
const outboundPolicy = webhookEndpointPolicyFromEnv((name) => Deno.env.get(name));
const webhookSubscriptions = webhookRouteSettings(outboundPolicy);
const calendarImports = calendarImportRouteSettings(outboundPolicy);

// Browser apps (src/http/cors.ts): CORS_ALLOWED_ORIGINS, a comma-separated list of origins
// or `*`; unset, no browser origin is granted.
const cors = corsPolicyFromSetting(Deno.env.get("CORS_ALLOWED_ORIGINS"));

// The reference page's renderer: Scalar's browser bundle, a static file deployed with this
// function (supabase/config.toml, static_files); `npm install` puts it there (scripts/reference-renderer.sh).
const referenceRenderer = {
  readScript: () => Deno.readFile(new URL("./static/api-reference.js", import.meta.url)),
};

// DATABASE_URL (the transaction pooler) when set, else the platform's direct
// SUPABASE_DB_URL; src/db/connection.ts says how the pool learns which it is.
const database = databaseConnection((name) => Deno.env.get(name));
const POOL_CONNECTIONS = 10;
const pool = renewablePool(() =>
  createPool(database.url, { applicationName: "pms-api", generatedTypes: true, mode: database.mode, max: POOL_CONNECTIONS })
);

// A connection lost under postgres.js's own query, or under a write it deferred, must
// not end the function (src/db/connection-loss.ts says how each happens).
absorbingOrphanedConnectionErrors(globalThis, jsonLogger, pool);

const api = createApi({
  pool,
  db: createDb(pool),
  identity: createSupabaseAuth({ url: authUrl, apiKey: requireEnv("SUPABASE_ANON_KEY"), fetch, now }),
  verifyAccessToken: createAccessTokenVerifier({
    jwksUrl: new URL(".well-known/jwks.json", authUrl),
    jwtSecret,
    jwksCacheMaxAgeMs: jwksCacheSeconds * 1000,
    now,
    fetch,
    logger: jsonLogger,
  }),
  webhooks,
  push,
  webhookSubscriptions,
  calendarImports,
  cors,
  referenceRenderer,
  now,
  logger: jsonLogger,
});

// What it runs with, once per start; the secrets' presence at most, never their values.
jsonLogger.info("the api function is serving", {
  authUrl, acceptsHs256: jwtSecret !== undefined, jwksCacheSeconds,
  sendGridWebhook: webhooks.sendGridVerificationKey ? "verifies signatures" : "no verification key: refuses every post",
  smsWebhook: webhooks.smsAuthToken && webhooks.smsAccountSid ? "verifies signatures" : "no auth token: refuses every callback",
  publicUrl: webhooks.publicUrl,
  push: push.vapidPublicKey ? "offers its VAPID public key" : "no VAPID public key: push is not offered",
  loopbackPushEndpoints: push.allowLoopbackPushEndpoints,
  browserOrigins: cors.allowedOrigins === "any" ? "*" : [...cors.allowedOrigins],
});

// A worker starts before its requests, or with the first of them: its connections are
// opened now rather than by the first requests that arrive together (src/db/pool.ts).
openConnections(pool.current, POOL_CONNECTIONS).then(
  (opened) => jsonLogger.info("the database pool's connections are open", { opened, of: POOL_CONNECTIONS }),
  () => {},
);

Deno.serve(api);
