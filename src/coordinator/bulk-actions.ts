/**
 * Bulk actions by filter (docs/http-api.md "Bulk actions"): `POST /v1/jobs/cancel` and `POST /v1/jobs/retry` act on
 * the jobs a filter matches in every home holding some — a scope's own object when the filter names one, else the
 * type's own shards (read directly, as a listing does, so a job enqueued a moment ago is not missed) and then the
 * homes the catalog lists with jobs of the filter's types in the states the action acts on. Each home acts on a
 * page of its matching jobs (scope/jobs/bulk.ts); a call looks at `limit` jobs and visits HOMES_PER_CALL homes at most,
 * and answers a cursor — `{h, s, c?}` as a listing's — where the next call goes on (the walk: coordinator/home-walk.ts).
 * No SQL here.
 *
 * @module
 */
import { QueueError } from "../errors";
import { BULK_LIMIT_DEFAULT, type BulkCancelRequest, type BulkRerunRequest, type BulkResult, type BulkRetryRequest, type JobFilter } from "../job/schemas";
import type { JobState } from "../job/states";
import { BULK_ACTS_ON, type BulkAction } from "../job/transitions";
import { scopeFilter, walkHomes } from "./home-walk";
import type { QueueContext } from "./queue-context";
import { packJson, readCursor } from "./cursor";

/** Homes one call visits at most (each is a request): a larger filter answers a cursor. */
const HOMES_PER_CALL = 20;
/** Jobs one home acts on per request: each is a transaction, and the object serves others between pages. */
const PAGE = 500;

export class BulkActions {
  constructor(private readonly q: QueueContext) {}

  async run(action: BulkAction, req: BulkCancelRequest | BulkRetryRequest | BulkRerunRequest): Promise<BulkResult> {
    if (action === "rerun") return this.rerun(req);
    return this.walk(action, req, req.cursor);
  }

  /**
   * rerun: a bulk rerun's walk, bounded by creation time — the first call's, carried in the cursor (`{t, k}`: the
   * time, and the walk's own cursor) — so the reruns it makes, and any job made after it started, never match.
   */
  private async rerun(req: BulkRerunRequest): Promise<BulkResult> {
    const at = req.cursor === undefined ? { t: Date.now(), k: undefined } : readCursor(req.cursor, ({ t, k }) => (typeof t === "number" && typeof k === "string" ? { t, k } : null));
    const createdBefore = Math.min(req.filter.createdBefore ?? Infinity, at.t);
    const out = await this.walk("rerun", { ...req, filter: { ...req.filter, createdBefore } }, at.k);
    return { ...out, nextCursor: out.nextCursor === null ? null : packJson({ t: at.t, k: out.nextCursor }) };
  }

  private async walk(action: BulkAction, req: BulkCancelRequest | BulkRetryRequest | BulkRerunRequest, cursor: string | undefined): Promise<BulkResult> {
    const f = req.filter;
    const states = statesFor(action, f);
    const filter = scopeFilter(f, states);
    const reason = "reason" in req ? (req.reason ?? null) : null;
    const fromStep = "fromStep" in req ? (req.fromStep ?? null) : null;
    const limit = req.limit ?? BULK_LIMIT_DEFAULT;
    const total = { changed: 0, skipped: 0 };
    const walk = { scopeType: f.scopeType, scopeId: f.scopeId, types: f.type, states, cursor, maxHomes: HOMES_PER_CALL };
    // Each home: its matching jobs from where the cursor left it, page by page, until the limit stops the call there.
    const nextCursor = await walkHomes(this.q, walk, async (home, from) => {
      for (let after = from; ; ) {
        const left = limit - total.changed - total.skipped;
        if (left <= 0) return after;
        const page = await this.q.scope(home).bulk(action, filter, after, Math.min(left, PAGE), reason, req.dryRun ?? false, fromStep);
        total.changed += page.changed;
        total.skipped += page.skipped;
        if (page.next === null) return null;
        after = page.next;
      }
    });
    return { ...total, nextCursor };
  }
}

/**
 * statesFor: the filter's states that the action acts on (all of them when the filter names none) — a failure kind
 * narrows them to `failed` —, or a 400 naming the field when none is left.
 */
function statesFor(action: BulkAction, f: JobFilter): JobState[] {
  const acts: readonly JobState[] = BULK_ACTS_ON[action];
  let states = (f.state ?? acts).filter((s) => acts.includes(s));
  if (f.failureKind !== undefined) states = states.filter((s) => s === "failed");
  if (states.length > 0) return states;
  const field = f.failureKind !== undefined && (f.state === undefined || f.state.some((s) => acts.includes(s))) ? "filter.failureKind" : "filter.state";
  const message =
    field === "filter.failureKind"
      ? `a failure kind matches failed jobs only, which ${action === "cancel" ? "cannot be cancelled" : "the filter's states leave out"}`
      : `${action} acts on ${acts.join(", ")} jobs; the filter names none of them`;
  throw new QueueError("invalid_request", `${field}: ${message}`, [{ path: field, message }]);
}
