/**
 * Bulk actions by filter (docs/http-api.md "Bulk actions"): `POST /v1/jobs/cancel` and `POST /v1/jobs/retry` act on
 * the jobs a filter matches in every home holding some — a scope's own object when the filter names one, else the
 * type's own shards (read directly, as a listing does, so a job enqueued a moment ago is not missed) and then the
 * homes the catalog lists with jobs of the filter's types in the states the action acts on. Each home acts on a
 * page of its matching jobs (scope/jobs/bulk.ts); a call looks at `limit` jobs and visits HOMES_PER_CALL homes at most,
 * and answers a cursor — `{h, s, c?}` as a listing's (coordinator/cursor.ts) — where the next call goes on.
 * No SQL here.
 *
 * @module
 */
import { QueueError } from "../errors";
import { scopeHome } from "../job/home";
import { BULK_LIMIT_DEFAULT, type BulkCancelRequest, type BulkResult, type BulkRetryRequest, type JobFilter } from "../job/schemas";
import type { JobState } from "../job/states";
import { BULK_ACTS_ON, type BulkAction } from "../job/transitions";
import { decodeCursor, encodeCursor, invalidCursor, type Cursor } from "./cursor";
import type { QueueContext } from "./queue-context";

/** Homes one call visits at most (each is a request): a larger filter answers a cursor. */
const HOMES_PER_CALL = 20;
/** Jobs one home acts on per request: each is a transaction, and the object serves others between pages. */
const PAGE = 500;

export class BulkActions {
  constructor(private readonly q: QueueContext) {}

  async run(action: BulkAction, req: BulkCancelRequest | BulkRetryRequest): Promise<BulkResult> {
    const f = req.filter;
    const states = statesFor(action, f);
    const filter = {
      types: f.type,
      states,
      tag: f.tag,
      failureKinds: f.failureKind,
      createdAfter: f.createdAfter,
      createdBefore: f.createdBefore,
      finishedAfter: f.finishedAfter,
      finishedBefore: f.finishedBefore,
    };
    const reason = "reason" in req ? (req.reason ?? null) : null;
    const limit = req.limit ?? BULK_LIMIT_DEFAULT;
    const cursor: Cursor = req.cursor ? decodeCursor(req.cursor) : { h: "", s: -1 };
    const total = { changed: 0, skipped: 0 };
    let visited = 0;

    /** act: the home's matching jobs from where the cursor left it, page by page; the cursor to stop at, or null to go on. */
    const act = async (home: string, fromCatalog: boolean): Promise<string | null> => {
      const c = fromCatalog ? { c: 1 as const } : {};
      let after = home === cursor.h ? Math.max(cursor.s, 0) : 0;
      visited++;
      for (;;) {
        const left = limit - total.changed - total.skipped;
        if (left <= 0) return encodeCursor({ h: home, s: after, ...c });
        const page = await this.q.scope(home).bulk(action, filter, after, Math.min(left, PAGE), reason, req.dryRun ?? false);
        total.changed += page.changed;
        total.skipped += page.skipped;
        if (page.next === null) break;
        after = page.next;
      }
      return visited === HOMES_PER_CALL ? encodeCursor({ h: home, s: -1, ...c }) : null;
    };
    const answer = (nextCursor: string | null): BulkResult => ({ ...total, nextCursor });

    if (f.scopeType !== undefined && f.scopeId !== undefined) {
      const home = scopeHome({ type: f.scopeType, id: f.scopeId }).name;
      if (req.cursor !== undefined && (cursor.h !== home || cursor.s < 0)) throw invalidCursor();
      // One home: a cursor only ever stops inside it, at the limit.
      return answer(await act(home, false));
    }
    // The type's own homes first, read directly; then the catalog's, after them in name order.
    const direct = (f.type ?? []).flatMap((t) => this.q.typeHomes(t));
    const inCatalog = cursor.c === 1 || (cursor.h !== "" && !direct.includes(cursor.h));
    if (!inCatalog) {
      const from = cursor.h === "" ? 0 : direct.indexOf(cursor.h);
      for (const home of direct.slice(from)) {
        if (home === cursor.h && cursor.s < 0) continue;
        const stop = await act(home, false);
        if (stop) return answer(stop);
      }
    }
    const budget = HOMES_PER_CALL - visited;
    const homes = budget <= 0 ? [] : await this.q.catalog().listHomes({ types: f.type, states }, inCatalog ? cursor.h : "", inCatalog && cursor.s >= 0, budget);
    for (const home of homes) {
      if (direct.includes(home)) continue;
      const stop = await act(home, true);
      if (stop) return answer(stop);
    }
    const last = homes[homes.length - 1];
    return answer(homes.length === budget && budget > 0 && last ? encodeCursor({ h: last, s: -1, c: 1 }) : null);
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
