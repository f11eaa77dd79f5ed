import type { Kysely } from "kysely";
import { accessCodeEndpoints } from "./access-codes/handlers.ts";
import { apiKeyEndpoints } from "./api-keys/handlers.ts";
import { availabilityEndpoints } from "./availability/handlers.ts";
import { calendarFeedEndpoints } from "./calendar-feeds/handlers.ts";
import { calendarImportEndpoints, type CalendarImportRouteSettings } from "./calendar-imports/handlers.ts";
import type { AccessTokenVerifier } from "./auth/access-token.ts";
import { authEndpoints } from "./auth/handlers.ts";
import type { IdentityProvider } from "./auth/identity-provider.ts";
import type { DB } from "./db/database.ts";
import type { RenewablePool } from "./db/pool.ts";
import { docsEndpoints, type ReferenceRenderer } from "./docs/handlers.ts";
import { externalEndpoints } from "./external/handlers.ts";
import { createIntegrationScope } from "./external/integration-scope.ts";
import { healthEndpoints } from "./health/handlers.ts";
import type { CorsPolicy } from "./http/cors.ts";
import type { Endpoint } from "./http/endpoint.ts";
import { createRouter } from "./http/router.ts";
import type { Logger } from "./logging/logger.ts";
import { guestEndpoints } from "./guests/handlers.ts";
import { inboxEndpoints } from "./inbox/handlers.ts";
import { notificationEndpoints } from "./notifications/handlers.ts";
import { paymentEndpoints } from "./payments/handlers.ts";
import { propertyEndpoints } from "./properties/handlers.ts";
import { pushEndpoints } from "./push/handlers.ts";
import type { PushSettings } from "./push/settings.ts";
import { rateCalendarEndpoints } from "./rate-calendar/handlers.ts";
import { ratePlanEndpoints } from "./rate-plans/handlers.ts";
import { reservationEndpoints } from "./reservations/handlers.ts";
import { roomTypeEndpoints } from "./room-types/handlers.ts";
import { taskEndpoints } from "./tasks/handlers.ts";
import { tenancyEndpoints } from "./tenancy/handlers.ts";
import { createRequestScope } from "./tenancy/request-scope.ts";
import { unitBlockEndpoints } from "./unit-blocks/handlers.ts";
import { unitEndpoints } from "./units/handlers.ts";
import { webhookSubscriptionEndpoints, type WebhookRouteSettings } from "./webhook-subscriptions/handlers.ts";
import { webhookEndpoints, type WebhookSettings } from "./webhooks/handlers.ts";

export type ApiDependencies = {
  // The pool `db` runs on, for the health check's own statement.
  pool: RenewablePool;
  db: Kysely<DB>;
  identity: IdentityProvider;
  verifyAccessToken: AccessTokenVerifier;
  // The providers' delivery reports: their keys and the function's public URL.
  webhooks: WebhookSettings;
  // Web Push: the VAPID public key browsers subscribe with, and whether a subscription may
  // point at this machine (a local stand-in for a push service).
  push: PushSettings;
  // Outbound webhooks: which endpoint URLs a subscription may name.
  webhookSubscriptions: WebhookRouteSettings;
  calendarImports: CalendarImportRouteSettings;
  // The reference page's renderer bundle (GET /v1/docs/api-reference.js).
  referenceRenderer: ReferenceRenderer;
  // The browser origins granted cross-origin access; absent: none.
  cors?: CorsPolicy;
  // Milliseconds.
  now: () => number;
  logger: Logger;
};

function apiEndpoints(deps: ApiDependencies): Endpoint[] {
  const scope = createRequestScope({ db: deps.db, verify: deps.verifyAccessToken });
  return [
    ...healthEndpoints(deps),
    ...authEndpoints({ identity: deps.identity, scope }),
    ...tenancyEndpoints(scope),
    ...propertyEndpoints(scope),
    ...roomTypeEndpoints(scope),
    ...unitEndpoints(scope),
    ...unitBlockEndpoints(scope),
    ...ratePlanEndpoints(scope),
    ...rateCalendarEndpoints(scope),
    ...availabilityEndpoints(scope),
    ...calendarFeedEndpoints(scope, { db: deps.db, publicUrl: () => deps.webhooks.publicUrl }),
    ...calendarImportEndpoints(scope, deps.calendarImports),
    ...guestEndpoints(scope),
    ...reservationEndpoints(scope),
    ...paymentEndpoints(scope),
    ...accessCodeEndpoints(scope),
    ...taskEndpoints(scope),
    ...notificationEndpoints(scope),
    ...inboxEndpoints(scope),
    ...pushEndpoints(scope, deps.push),
    ...apiKeyEndpoints(scope),
    ...webhookSubscriptionEndpoints(scope, deps.webhookSubscriptions),
    ...externalEndpoints(createIntegrationScope({ db: deps.db })),
    ...webhookEndpoints({ db: deps.db, settings: deps.webhooks, now: deps.now, logger: deps.logger }),
  ];
}

// The `api` function: every /v1 route, as one Request -> Response handler.
export function createApi(deps: ApiDependencies): (request: Request) => Promise<Response> {
  const endpoints = apiEndpoints(deps);
  const all = [...endpoints, ...docsEndpoints(endpoints, deps.referenceRenderer)];
  return createRouter({
    functionName: "api",
    logger: deps.logger,
    cors: deps.cors,
    routes: all.map((endpoint) => ({ method: endpoint.method, path: endpoint.path, handler: endpoint.handle })),
  });
}
