import { absorbingOrphanedConnectionErrors } from "../../../src/db/connection-loss.ts";
import { databaseConnection } from "../../../src/db/connection.ts";
import { createPool, renewablePool } from "../../../src/db/pool.ts";
import { requireEnv } from "../../../src/env.ts";
import { jsonLogger } from "../../../src/logging/logger.ts";
import { createWorkerHandler } from "../../../src/http/worker-handler.ts";
import {
  CALENDAR_IMPORT_USER_AGENT,
  defaultCalendarImportSettings,
  runCalendarImports,
} from "../../../src/calendar-imports/worker.ts";
import {
  connectionsForOneRun,
  getDocument,
  postWebhook,
  resolverForOneRun,
  resolveWithDenoDns,
  webhookEndpointPolicyFromEnv,
} from "../../../src/webhook-delivery/endpoint.ts";
import { signWebhook } from "../../../src/webhook-delivery/signing.ts";
import { defaultWebhookWorkerSettings, runWebhookWorker } from "../../../src/webhook-delivery/worker.ts";

// DATABASE_URL (the transaction pooler) when set, else the platform's direct SUPABASE_DB_URL.
const database = databaseConnection((name) => Deno.env.get(name));
const pool = renewablePool(() =>
  createPool(database.url, { applicationName: "pms-webhooks-worker", generatedTypes: true, mode: database.mode })
);

// A connection lost under postgres.js's own query, or under a write it deferred, must
// not end the function (src/db/connection-loss.ts says how each happens).
absorbingOrphanedConnectionErrors(globalThis, jsonLogger, pool);

// WEBHOOKS_ALLOW_LOOPBACK_HTTP: true only on the local stack, whose receiver is on loopback.
const policy = webhookEndpointPolicyFromEnv((name) => Deno.env.get(name));

jsonLogger.info("the webhooks worker is serving", { loopbackEndpoints: policy.allowLoopbackHttp });

Deno.serve(createWorkerHandler({
  serviceKey: requireEnv("SUPABASE_SERVICE_ROLE_KEY"),
  pool,
  run: async (sql, mode) => {
    const resolve = resolverForOneRun(resolveWithDenoDns);
    // As many kept per endpoint as the run has posts under way at once.
    const { claimSize, claimsInFlight } = defaultWebhookWorkerSettings;
    const connections = connectionsForOneRun({ maxIdlePerKey: claimSize * claimsInFlight });
    try {
      const deliveries = await runWebhookWorker({
        sql,
        post: (request) => postWebhook({ ...request, policy, timeoutMs: 10_000, resolve, connections }),
        sign: signWebhook,
        settings: defaultWebhookWorkerSettings,
        random: Math.random,
        now: () => Date.now(),
        logger: jsonLogger,
      }, mode);
      // The calendars of imports that are due, fetched as safely as webhooks are posted.
      const calendarImports = await runCalendarImports({
        sql,
        fetch: (request) =>
          getDocument({ ...request, userAgent: CALENDAR_IMPORT_USER_AGENT, policy, timeoutMs: 10_000, maxBytes: 1_048_576, resolve }),
        logger: jsonLogger,
        settings: defaultCalendarImportSettings,
      });
      return { ...deliveries, calendarImports };
    } finally {
      connections.closeAll();
    }
  },
}));
