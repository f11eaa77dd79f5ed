import { pageOnly } from "../db/pagination.ts";
import type { Endpoint } from "../http/endpoint.ts";
import { json } from "../http/json.ts";
import { HttpError } from "../http/problem.ts";
import { createdResponses, resourceEndpoints } from "../http/resource-endpoints.ts";
import { locationOf, written } from "../http/respond.ts";
import { sessionEndpoint, tenantEndpoint } from "../http/session-endpoints.ts";
import type { RequestScope } from "../http/request-scope.ts";
import { deletePushSubscription, findPushSubscription, listPushSubscriptions, registerPushSubscription } from "./queries.ts";
import { endpointRefusal, pushPublicKey, pushSubscription, pushSubscriptionBody, userAgentOf } from "./schema.ts";
import type { PushSettings } from "./settings.ts";

const tag = "Push";

// A member's browsers that receive the tenant's push notifications (the Push API's
// PushSubscription), and the key a browser subscribes with. Each member registers,
// lists and removes only their own; the worker sends to them.
// `settings` is read by the handlers only: the OpenAPI document is built without it.
export function pushEndpoints(scope: RequestScope, settings: PushSettings): Endpoint[] {
  const subscriptions = resourceEndpoints(scope, {
    tag, collection: "push/subscriptions", schema: pushSubscription,
    name: { one: "PushSubscription", many: "PushSubscriptions" },
    noun: { one: "push subscription", many: "push subscriptions" },
  });
  return [
    sessionEndpoint(scope, {
      method: "GET", path: "/v1/push/public-key", operationId: "getPushPublicKey", tag, problems: ["push-not-configured"],
      summary: "The VAPID public key a browser subscribes with (pushManager.subscribe's applicationServerKey).",
      description: "The same for every tenant. A deployment without a VAPID key sends no Web Push and answers 404 " +
        "`urn:pms:problem:push-not-configured`: a client then offers no push notifications (the inbox still works).",
      errorDescriptions: {
        404: "`urn:pms:problem:push-not-configured`: this deployment sends no Web Push (no VAPID key is set). Not " +
          "transient: do not offer push notifications.",
      },
      success: [{ status: 200, description: "The key.", schema: pushPublicKey }],
    }, () => {
      const publicKey = settings.vapidPublicKey;
      if (publicKey === null) {
        throw new HttpError("push-not-configured", "This deployment sends no push notifications: it has no VAPID key.");
      }
      return Promise.resolve(json(200, { publicKey }));
    }),

    subscriptions.list({
      access: "member", query: pageOnly,
      summary: "The caller's own browsers subscribed in the tenant, newest first.",
    }, listPushSubscriptions),

    tenantEndpoint(scope, {
      method: "POST", path: "/v1/push/subscriptions", operationId: "registerPushSubscription", tag, access: "member",
      body: pushSubscriptionBody, prefer: true, problems: ["unprocessable"],
      summary: "Register the caller's browser for the tenant's push notifications: send its PushSubscription.toJSON() as it is.",
      description: "An endpoint is one browser profile. Registering one already registered in the tenant, by the caller " +
        "or by whoever used the browser before, refreshes its keys, expiry and user agent and makes it the caller's (its " +
        "id stays); that answers 204, or 200 under Prefer: return=representation, where a new one answers 201. The User-Agent " +
        "header is kept with it.",
      headers: [{
        name: "User-Agent", required: false, schema: { type: "string" },
        description: "Kept with the subscription (its first 500 characters, without control characters), to tell a member's browsers apart.",
      }],
      errorDescriptions: {
        422: "`urn:pms:problem:unprocessable`: the endpoint is not one a push may go to (not https, an IP address, a " +
          "user name or password, this machine), or keys.p256dh is not a point on the P-256 curve; `errors` names the field.",
      },
      success: [
        ...createdResponses(pushSubscription, "Registered a new subscription."),
        { status: 204, description: "The endpoint was registered already: refreshed, and now the caller's. The body is empty; Location names the subscription.", headers: ["Location", "ETag"] },
        {
          status: 200, description: "The endpoint was registered already: refreshed, and now the caller's (Prefer: return=representation).",
          schema: pushSubscription, headers: ["Location", "ETag"],
        },
      ],
    }, async ({ db, body, request }) => {
      const refused = endpointRefusal(body.endpoint, settings.allowLoopbackPushEndpoints);
      if (refused) throw new HttpError("unprocessable", refused, { errors: [{ path: "endpoint", message: refused }] });
      const { subscription, created } = await registerPushSubscription(db, body, userAgentOf(request));
      const location = locationOf(request, `push/subscriptions/${subscription.id}`);
      return written(request, subscription, created ? { created: { location } } : { location });
    }),

    subscriptions.get({
      access: "member", summary: "Read one of the caller's push subscriptions; another member's answers as an unknown one.",
    }, findPushSubscription),

    subscriptions.remove({
      access: "member", summary: "Unsubscribe one of the caller's browsers; another member's answers as an unknown one.",
    }, deletePushSubscription),
  ];
}
