/**
 * Live subscriptions (docs/http-api.md "Live subscriptions"): a backend mints a short-lived signed URL for one job,
 * key or scope, and a page opens it without the queue's token. Opening it (`GET /v1/subscriptions/{token}`, a
 * WebSocket upgrade or an event stream) is no JSON call, so it is served beside the declared operations
 * (coordinator/subscribe-route.ts) and described in the OpenAPI document by hand (coordinator/openapi.ts). The rule
 * and fields of a declaration: api/operation.ts.
 *
 * @module
 */
import { CreateHomeSubscriptionsSchema, CreateSubscriptionSchema, HomeSubscriptionsSchema, SubscriptionSchema } from "../job/schemas/subscriptions";
import { operation } from "./operation";

export const SUBSCRIPTION_OPERATIONS = {
  createSubscription: operation({
    access: "track",
    method: "post",
    path: "/v1/subscriptions",
    summary: "A signed, short-lived URL that follows one job, a key's jobs or a scope's jobs live (WebSocket or Server-Sent Events), opened without the queue's token",
    body: CreateSubscriptionSchema,
    response: SubscriptionSchema,
    errors: ["not_found", "misconfigured"],
  }),
  createHomeSubscriptions: operation({
    access: "read",
    method: "post",
    path: "/v1/subscriptions/homes",
    summary: "Signed URLs that follow a type's jobs (or every job) live, one per object holding some — a type's whole stream without a subscription per job (the clients' createQueueEvents)",
    body: CreateHomeSubscriptionsSchema,
    response: HomeSubscriptionsSchema,
    errors: ["misconfigured"],
  }),
};
