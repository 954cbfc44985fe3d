/**
 * Live subscriptions, the coordinator's side (docs/http-api.md "Live subscriptions"): `mint` signs a URL for one
 * job, a key's jobs or a scope's jobs in the object that holds them (job/subscription.ts); `open` checks a URL's
 * signature and expiry — 401 before any upgrade, and before any object hears of it — and hands the request to
 * that object, which holds the connection (scope/watching/watchers.ts).
 *
 * @module
 */
import { QueueError } from "../errors";
import { homeFor, scopeHome } from "../job/home";
import type { CreateHomeSubscriptions, CreateSubscription, HomeSubscriptionsAnswer, SubscriptionAnswer } from "../job/schemas/subscriptions";
import { packJson, readCursor } from "./cursor";
import { directThenCatalog } from "./homes";
import { signSubscription, verifySubscription, type Follows, type Subscription } from "../job/subscription";
import { SUBSCRIPTION_PARTS_DEFAULT, SUBSCRIPTION_PATH } from "../job/schemas/subscriptions";
import type { QueueContext } from "./queue-context";

/** The header a scope object reads the checked subscription from (only the coordinator reaches the object). */
export const SUBSCRIPTION_HEADER = "edgequeue-subscription";
/** The header a scope object reads a reconnect's cursor from (scope/watching/watchers.ts). */
export const SUBSCRIPTION_AFTER_HEADER = "edgequeue-subscription-after";

export class Subscriptions {
  constructor(
    private readonly q: QueueContext,
    /** The origin the request came to (HTTP), for the URL when no publicUrl is configured; null over RPC. */
    private readonly origin: string | null,
  ) {}

  async mint(req: CreateSubscription, now: number): Promise<SubscriptionAnswer> {
    const { home, follows } = this.target(req);
    const expiresAt = now + req.ttlMs;
    const inc = [...(req.include ?? SUBSCRIPTION_PARTS_DEFAULT)];
    return { ...(await this.signed({ ...follows, home, exp: expiresAt, inc })), expiresAt, include: inc };
  }

  /** signed: a subscription's URL and path, on the queue's publicUrl when configured, else the request's origin. */
  private async signed(sub: Subscription): Promise<{ url: string; path: string }> {
    const queueToken = this.q.env.QUEUE_TOKEN;
    if (!queueToken) throw new QueueError("misconfigured", "a subscription URL is signed with the queue's QUEUE_TOKEN, and none is set (wrangler secret put QUEUE_TOKEN)");
    const path = `${SUBSCRIPTION_PATH}/${await signSubscription(queueToken, sub)}`;
    const base = this.q.config.publicUrl ?? this.origin;
    return { url: base === null ? path : `${base}${path}`, path };
  }

  private target(req: CreateSubscription): { home: string; follows: Follows } {
    if (req.jobId !== undefined) return { home: this.q.homeOf(req.jobId), follows: { kind: "job", id: req.jobId } };
    if (req.type !== undefined && req.dedupeKey !== undefined) {
      const home = homeFor({ type: req.type, scope: req.scope ?? null, dedupeKey: req.dedupeKey, localId: "" }, this.q.config.typeSettings(req.type).shards).name;
      return { home, follows: { kind: "key", type: req.type, key: req.dedupeKey } };
    }
    if (req.type !== undefined) return { home: scopeHome(req.scope!).name, follows: { kind: "type", type: req.type } };
    return { home: scopeHome(req.scope!).name, follows: { kind: "scope" } };
  }

  /**
   * mintHomes: a URL per object holding jobs (of a type) — the type's own objects first, read directly, then the
   * scopes the catalog lists (about a second behind), a page at a time — each following the type's jobs there (or
   * every job). Minting asks no scope object.
   */
  async mintHomes(req: CreateHomeSubscriptions, now: number): Promise<HomeSubscriptionsAnswer> {
    const types = req.type === undefined ? undefined : [req.type];
    const direct = req.type === undefined ? [] : this.q.typeHomes(req.type);
    const from = req.cursor === undefined ? "" : readCursor(req.cursor, ({ h }) => (typeof h === "string" ? h : null));
    const homes: string[] = [];
    let more = false;
    for await (const page of directThenCatalog(direct, (after, first) => this.q.catalog().listHomes({ types }, after, first && from !== "", req.limit), req.limit, from)) {
      for (const h of page) if (h !== from && homes.length < req.limit) homes.push(h);
      if (homes.length >= req.limit) {
        more = true;
        break;
      }
    }
    const exp = now + req.ttlMs;
    const inc = [...(req.include ?? SUBSCRIPTION_PARTS_DEFAULT)];
    const follows: Follows = req.type === undefined ? { kind: "scope" } : { kind: "type", type: req.type };
    const since = req.since === undefined ? {} : { since: req.since };
    const items = await Promise.all(homes.map(async (home) => ({ home, ...(await this.signed({ ...follows, home, exp, inc, ...since })) })));
    return { items, expiresAt: exp, include: inc, nextCursor: more ? packJson({ h: homes.at(-1)! }) : null };
  }

  /** open: the URL's request, handed to the object it names once its signature and expiry are checked. */
  async open(token: string, request: Request, now: number): Promise<Response> {
    const queueToken = this.q.env.QUEUE_TOKEN;
    const verified = queueToken ? await verifySubscription(queueToken, token, now) : { ok: false as const, why: "this queue has no QUEUE_TOKEN to check subscription URLs with" };
    if (!verified.ok) throw new QueueError("unauthorized", verified.why);
    const headers = new Headers(request.headers);
    headers.set(SUBSCRIPTION_HEADER, JSON.stringify(verified.sub));
    // A reconnect's cursor (docs/http-api.md "Reconnecting"): `?after=` on the URL.
    const after = cursorOf(new URL(request.url).searchParams.get("after"));
    headers.delete(SUBSCRIPTION_AFTER_HEADER);
    if (after !== null) headers.set(SUBSCRIPTION_AFTER_HEADER, String(after));
    return this.q.env.SCOPE.getByName(verified.sub.home).fetch(new Request("https://scope/subscribe", { headers }));
  }
}

/** cursorOf: a reconnect's cursor — a time in epoch ms the subscription's messages carried — or a 400 naming `after`. */
function cursorOf(text: string | null): number | null {
  if (text === null || text === "") return null;
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < 0) {
    throw new QueueError("invalid_request", "after: give the cursor a subscription's messages carried (epoch ms, an integer)", [{ path: "after", message: "an integer of epoch ms" }]);
  }
  return n;
}
