import type { Endpoint } from "../http/endpoint.ts";
import { json, jsonText } from "../http/json.ts";
import { resourceEndpoints } from "../http/resource-endpoints.ts";
import { conditionalUpdate, listResponse, locationOf, pageFor, representation } from "../http/respond.ts";
import { idParams, listOf } from "../http/schemas.ts";
import { tenantEndpoint } from "../http/session-endpoints.ts";
import type { RequestScope } from "../http/request-scope.ts";
import type { WebhookEndpointPolicy } from "../webhook-delivery/endpoint.ts";
import { checkOutboundUrl, type OutboundUrlSettings, outboundUrlSettings } from "../webhook-delivery/url-settings.ts";
import {
  deleteWebhookSubscription,
  findWebhookDelivery,
  findWebhookSubscription,
  insertWebhookSubscription,
  listWebhookDeliveries,
  listWebhookSubscriptions,
  lockWebhookSubscription,
  redeliverWebhook,
  rotateWebhookSecret,
  sendWebhookTest,
  updateWebhookSubscription,
  webhookSecretOf,
} from "./queries.ts";
import {
  createWebhookSubscriptionBody,
  listWebhookDeliveriesQuery,
  listWebhookSubscriptionsQuery,
  queuedDelivery,
  rotateSecretBody,
  updateWebhookSubscriptionBody,
  webhookDelivery,
  webhookDeliveryWithAttempts,
  webhookSubscription,
  webhookSubscriptionWithSecret,
} from "./schema.ts";

const tag = "Webhooks";

// Whether a URL may receive webhooks at all (src/webhook-delivery/url-settings.ts).
export type WebhookRouteSettings = OutboundUrlSettings;

export function webhookRouteSettings(policy: WebhookEndpointPolicy): WebhookRouteSettings {
  return outboundUrlSettings(policy, "The URL cannot receive webhooks");
}

const noStore = { "cache-control": "no-store" };

// Owners and admins subscribe endpoints to the tenant's events and follow every delivery.
// The signing secret is shown when a subscription is created and when its secret is
// rotated, and nowhere else.
export function webhookSubscriptionEndpoints(scope: RequestScope, settings: WebhookRouteSettings): Endpoint[] {
  const subscriptions = resourceEndpoints(scope, {
    tag, collection: "webhook-subscriptions", schema: webhookSubscription,
    name: { one: "WebhookSubscription", many: "WebhookSubscriptions" },
    noun: { one: "webhook subscription", many: "webhook subscriptions" },
  });
  const resource = "webhook subscription";
  const withSecret = async (db: Parameters<typeof webhookSecretOf>[0], id: string, status: number, request: Request) => {
    const found = await findWebhookSubscription(db, id);
    const secret = await webhookSecretOf(db, id);
    // No ETag: a validator of a body holding the secret would be derived from it.
    return jsonText(status, JSON.stringify({ ...found, secret }), {
      ...noStore, ...(status === 201 ? { location: locationOf(request, `webhook-subscriptions/${id}`) } : {}),
    });
  };

  return [
    subscriptions.list({
      access: "manager", query: listWebhookSubscriptionsQuery,
      summary: "The tenant's webhook subscriptions, newest first, without their secrets.",
    }, listWebhookSubscriptions),

    tenantEndpoint(scope, {
      method: "POST", path: "/v1/webhook-subscriptions", operationId: "createWebhookSubscription", tag, access: "manager",
      summary: "Subscribe an endpoint to the tenant's events; the response is the only time the secret is shown besides a rotation.",
      description: "Events are posted as docs/webhooks.md describes, signed with the secret (Standard Webhooks). A URL " +
        "that is not https, names a user or password, or is or resolves to a private, loopback or link-local address is " +
        "refused here, and checked again at every delivery.",
      body: createWebhookSubscriptionBody, problems: ["unknown-reference", "unprocessable"],
      errorDescriptions: {
        422: "`urn:pms:problem:unprocessable`: the URL may not receive webhooks; `urn:pms:problem:unknown-reference`: a " +
          "property in propertyIds is not the tenant's. `errors` names the field.",
      },
      success: [{ status: 201, description: "Subscribed; keep the secret now.", schema: webhookSubscriptionWithSecret, headers: ["Location"] }],
    }, async ({ db, body, request }) => {
      checkOutboundUrl(settings, body.url);
      const created = await insertWebhookSubscription(db, body);
      return withSecret(db, created.id, 201, request);
    }),

    subscriptions.get({ access: "manager", summary: "Read a webhook subscription, without its secret." }, findWebhookSubscription),

    tenantEndpoint(scope, {
      method: "PATCH", path: "/v1/webhook-subscriptions/{id}", operationId: "updateWebhookSubscription", tag,
      access: "manager", params: idParams, resource, prefer: true, conditional: true,
      body: updateWebhookSubscriptionBody, problems: ["unknown-reference", "unprocessable"],
      summary: "Change a subscription's URL, description, event types or properties, or disable or enable it.",
      description: "Disabling stops its deliveries: those pending are cancelled when their turn comes. Enabling it again " +
        "clears why it was disabled; events from while it was disabled are not sent.",
      success: [
        { status: 204, description: "Updated.", headers: ["ETag"] },
        { status: 200, description: "Updated (Prefer: return=representation).", schema: webhookSubscription, headers: ["ETag"] },
      ],
    }, ({ db, params, body, request, missing }) => {
      checkOutboundUrl(settings, body.url);
      return conditionalUpdate(request, {
        lock: () => lockWebhookSubscription(db, params.id),
        update: () => updateWebhookSubscription(db, params.id, body),
        notFound: missing,
      });
    }),

    subscriptions.remove({
      access: "manager",
      summary: "Delete a subscription, with its deliveries and their attempts; nothing more is posted to it.",
    }, deleteWebhookSubscription),

    tenantEndpoint(scope, {
      method: "POST", path: "/v1/webhook-subscriptions/{id}/rotate-secret", operationId: "rotateWebhookSecret", tag,
      access: "manager", params: idParams, resource, body: rotateSecretBody, problems: ["unprocessable"],
      summary: "Replace the signing secret; the old one keeps signing beside it for overlapHours (default 24).",
      description: "During the overlap every request carries two signatures in webhook-signature, one per secret, so a " +
        "receiver verifies with either while it switches. The response is the only time the new secret is shown.",
      success: [{ status: 200, description: "Rotated; keep the new secret now.", schema: webhookSubscriptionWithSecret }],
    }, async ({ db, params, body, request, missing }) => {
      const rotated = await rotateWebhookSecret(db, params.id, body.overlapHours ?? 24);
      if (rotated === null) throw missing();
      return withSecret(db, params.id, 200, request);
    }),

    tenantEndpoint(scope, {
      method: "POST", path: "/v1/webhook-subscriptions/{id}/test", operationId: "testWebhookSubscription", tag,
      access: "manager", params: idParams, resource,
      summary: "Post a webhook.test event to this subscription only, enabled or not.",
      description: "Delivered like any event, by the worker, within seconds; follow it with the delivery's id.",
      success: [{ status: 202, description: "Queued.", schema: queuedDelivery, headers: ["Location"] }],
    }, async ({ db, params, request, missing }) => {
      const deliveryId = await sendWebhookTest(db, params.id);
      if (deliveryId === null) throw missing();
      return json(202, { deliveryId }, { location: locationOf(request, `webhook-deliveries/${deliveryId}`) });
    }),

    tenantEndpoint(scope, {
      method: "GET", path: "/v1/webhook-subscriptions/{id}/deliveries", operationId: "listWebhookDeliveries", tag,
      access: "manager", params: idParams, resource, query: listWebhookDeliveriesQuery, countable: true,
      summary: "A subscription's deliveries, newest first.",
      success: [{ status: 200, description: "A page of deliveries.", schema: listOf(webhookDelivery) }],
    }, async ({ db, params, query, request, tenantId, missing }) => {
      if (await findWebhookSubscription(db, params.id) === undefined) throw missing();
      const page = pageFor(request, query, { reader: "member", tenantId });
      return listResponse(page, await listWebhookDeliveries(db, params.id, query, page));
    }),

    tenantEndpoint(scope, {
      method: "GET", path: "/v1/webhook-deliveries/{id}", operationId: "getWebhookDelivery", tag,
      access: "manager", params: idParams, resource: "webhook delivery",
      summary: "One delivery: the body it posts and every attempt, with status, latency, the response's start and the next retry.",
      success: [{ status: 200, description: "The delivery.", schema: webhookDeliveryWithAttempts, headers: ["ETag"] }],
    }, async ({ db, params, missing }) => {
      const found = await findWebhookDelivery(db, params.id);
      if (found === undefined) throw missing();
      return representation(found);
    }),

    tenantEndpoint(scope, {
      method: "POST", path: "/v1/webhook-deliveries/{id}/redeliver", operationId: "redeliverWebhook", tag,
      access: "manager", params: idParams, resource: "webhook delivery",
      summary: "Post a delivery that ended (succeeded, failed or cancelled) again, under the same webhook-id.",
      description: "A delivery still pending is left to its schedule. The subscription must be enabled for it to go.",
      success: [{ status: 202, description: "Queued.", schema: queuedDelivery, headers: ["Location"] }],
    }, async ({ db, params, request, missing }) => {
      const deliveryId = await redeliverWebhook(db, params.id);
      if (deliveryId === null) throw missing();
      return json(202, { deliveryId }, { location: locationOf(request, `webhook-deliveries/${deliveryId}`) });
    }),
  ];
}
