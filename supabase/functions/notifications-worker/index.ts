import { absorbingOrphanedConnectionErrors } from "../../../src/db/connection-loss.ts";
import { databaseConnection } from "../../../src/db/connection.ts";
import { createPool, renewablePool } from "../../../src/db/pool.ts";
import { apiPublicUrl, requireEnv } from "../../../src/env.ts";
import { jsonLogger } from "../../../src/logging/logger.ts";
import { createSendGridAdapter } from "../../../src/notifications/sendgrid.ts";
import { createPushSender, endpointPolicyFromEnv, vapidSettingsFromEnv } from "../../../src/notifications/push.ts";
import { createSmsAdapter } from "../../../src/notifications/sms.ts";
import { defaultWorkerSettings, PROVIDER_TIMEOUT_MS, runWorker, unconfirmedWaitProblem } from "../../../src/notifications/worker.ts";
import { createWorkerHandler } from "../../../src/http/worker-handler.ts";

const optional = (name: string) => Deno.env.get(name) || null;
const numberFromEnv = (name: string, fallback: number) => Number(Deno.env.get(name) ?? fallback);
const now = () => Date.now();

// DATABASE_URL (the transaction pooler) when set, else the platform's direct
// SUPABASE_DB_URL; src/db/connection.ts says how the pool learns which it is.
const database = databaseConnection((name) => Deno.env.get(name));
const pool = renewablePool(() =>
  createPool(database.url, { applicationName: "pms-notifications-worker", generatedTypes: true, mode: database.mode })
);

// A connection lost under postgres.js's own query, or under a write it deferred, must
// not end the function (src/db/connection-loss.ts says how each happens).
absorbingOrphanedConnectionErrors(globalThis, jsonLogger, pool);

const adapters = {
  email: createSendGridAdapter({
    apiKey: optional("SENDGRID_API_KEY"),
    fromEmail: optional("NOTIFICATIONS_FROM_EMAIL"),
    fromName: optional("NOTIFICATIONS_FROM_NAME"),
    baseUrl: Deno.env.get("SENDGRID_API_URL") ?? "https://api.sendgrid.com",
    timeoutMs: PROVIDER_TIMEOUT_MS,
    now,
  }),
  sms: createSmsAdapter({
    accountSid: optional("SMS_ACCOUNT_SID"),
    authToken: optional("SMS_AUTH_TOKEN"),
    fromNumber: optional("SMS_FROM_NUMBER"),
    baseUrl: Deno.env.get("SMS_API_URL") ?? "https://api.twilio.com",
    // The api function's status callback webhook (src/webhooks/handlers.ts).
    statusCallbackUrl: `${apiPublicUrl((name) => Deno.env.get(name))}/v1/webhooks/sms`,
    timeoutMs: PROVIDER_TIMEOUT_MS,
    fetch,
    now,
  }),
  push: createPushSender({
    vapid: vapidSettingsFromEnv((name) => Deno.env.get(name)),
    ...endpointPolicyFromEnv((name) => Deno.env.get(name)),
    // A check-in alert is news for the shift that sees it: a browser offline for longer
    // than this does not get it later.
    ttlSeconds: 4 * 3600,
    timeoutMs: PROVIDER_TIMEOUT_MS,
    fetch,
    now,
  }),
};

const settings = {
  ...defaultWorkerSettings,
  baseDelaySeconds: numberFromEnv("NOTIFICATIONS_RETRY_BASE_SECONDS", defaultWorkerSettings.baseDelaySeconds),
  maxDelaySeconds: numberFromEnv("NOTIFICATIONS_RETRY_MAX_SECONDS", defaultWorkerSettings.maxDelaySeconds),
  maxAttempts: numberFromEnv("NOTIFICATIONS_MAX_ATTEMPTS", defaultWorkerSettings.maxAttempts),
  // The SMS provider's concurrency limit for the account, or less.
  smsInFlight: numberFromEnv("NOTIFICATIONS_SMS_IN_FLIGHT", defaultWorkerSettings.smsInFlight),
  // How long a send whose answer was lost waits for its provider's report before it goes again.
  unconfirmedWaitSeconds: numberFromEnv("NOTIFICATIONS_UNCONFIRMED_WAIT_SECONDS", defaultWorkerSettings.unconfirmedWaitSeconds),
  unconfirmedRecheckSeconds: numberFromEnv(
    "NOTIFICATIONS_UNCONFIRMED_RECHECK_SECONDS",
    defaultWorkerSettings.unconfirmedRecheckSeconds,
  ),
};

// A misconfigured wait would send again what is still under way: the function does not start.
const misconfigured = unconfirmedWaitProblem(settings);
if (misconfigured) throw new Error(misconfigured);

// What it runs with, once per start; the secrets' presence at most, never their values.
jsonLogger.info("the notifications worker is serving", {
  email: adapters.email.disabledReason ?? "enabled",
  sms: adapters.sms.disabledReason ?? "enabled",
  push: adapters.push.disabledReason ?? "enabled",
  maxAttempts: settings.maxAttempts,
  smsInFlight: settings.smsInFlight,
  retryBaseSeconds: settings.baseDelaySeconds,
  retryMaxSeconds: settings.maxDelaySeconds,
  unconfirmedWaitSeconds: settings.unconfirmedWaitSeconds,
});

Deno.serve(createWorkerHandler({
  serviceKey: requireEnv("SUPABASE_SERVICE_ROLE_KEY"),
  pool,
  run: (sql, mode) => runWorker({ sql, adapters, settings, random: Math.random, now, logger: jsonLogger }, mode),
}));
