/**
 * Live subscriptions, the coordinator's side (docs/http-api.md "Live subscriptions"): `mint` signs a URL for one
 * job, a key's jobs or a scope's jobs in the object that holds them (job/subscription.ts); `open` checks a URL's
 * signature and expiry — 401 before any upgrade, and before any object hears of it — and hands the request to
 * that object, which holds the connection (scope/watchers.ts).
 *
 * @module
 */
import { QueueError } from "../errors";
import { homeFor, scopeHome } from "../job/home";
import type { CreateSubscription, SubscriptionAnswer } from "../job/schemas/subscriptions";
import { signSubscription, verifySubscription, type Follows } from "../job/subscription";
import { SUBSCRIPTION_PARTS_DEFAULT, SUBSCRIPTION_PATH } from "../job/schemas/subscriptions";
import type { QueueContext } from "./queue-context";

/** The header a scope object reads the checked subscription from (only the coordinator reaches the object). */
export const SUBSCRIPTION_HEADER = "edgequeue-subscription";

export class Subscriptions {
  constructor(
    private readonly q: QueueContext,
    /** The origin the request came to (HTTP), for the URL when no publicUrl is configured; null over RPC. */
    private readonly origin: string | null,
  ) {}

  async mint(req: CreateSubscription, now: number): Promise<SubscriptionAnswer> {
    const queueToken = this.q.env.QUEUE_TOKEN;
    if (!queueToken) throw new QueueError("misconfigured", "a subscription URL is signed with the queue's QUEUE_TOKEN, and none is set (wrangler secret put QUEUE_TOKEN)");
    const { home, follows } = this.target(req);
    const expiresAt = now + req.ttlMs;
    const inc = [...(req.include ?? SUBSCRIPTION_PARTS_DEFAULT)];
    const path = `${SUBSCRIPTION_PATH}/${await signSubscription(queueToken, { ...follows, home, exp: expiresAt, inc })}`;
    const base = this.q.config.publicUrl ?? this.origin;
    return { url: base === null ? path : `${base}${path}`, path, expiresAt, include: inc };
  }

  private target(req: CreateSubscription): { home: string; follows: Follows } {
    if (req.jobId !== undefined) return { home: this.q.homeOf(req.jobId), follows: { kind: "job", id: req.jobId } };
    if (req.type !== undefined && req.dedupeKey !== undefined) {
      const home = homeFor({ type: req.type, scope: req.scope ?? null, dedupeKey: req.dedupeKey, localId: "" }, this.q.config.typeSettings(req.type).shards).name;
      return { home, follows: { kind: "key", type: req.type, key: req.dedupeKey } };
    }
    return { home: scopeHome(req.scope!).name, follows: { kind: "scope" } };
  }

  /** open: the URL's request, handed to the object it names once its signature and expiry are checked. */
  async open(token: string, request: Request, now: number): Promise<Response> {
    const queueToken = this.q.env.QUEUE_TOKEN;
    const verified = queueToken ? await verifySubscription(queueToken, token, now) : { ok: false as const, why: "this queue has no QUEUE_TOKEN to check subscription URLs with" };
    if (!verified.ok) throw new QueueError("unauthorized", verified.why);
    const headers = new Headers(request.headers);
    headers.set(SUBSCRIPTION_HEADER, JSON.stringify(verified.sub));
    return this.q.env.SCOPE.getByName(verified.sub.home).fetch(new Request("https://scope/subscribe", { headers }));
  }
}
