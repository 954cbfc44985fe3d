/**
 * Operations that fan out over homes: listing jobs across every object holding some, bulk retry,
 * prune, cancel by dedupe keys. The catalog says which homes hold the jobs asked for
 * (docs/design.md "The catalog at scale"); each home is then asked in turn or in parallel
 * (coordinator/homes.ts). A Worker invocation's subrequest limit bounds one call
 * (docs/design.md "Known limits"). No SQL here.
 *
 * @module
 */
import { requireDeclared } from "../config/known-types";
import { groupByHome, homeFor, scopeHome } from "../job/home";
import type { CancelKeysRequest, Job, ListQuery, ListResult, PruneRequest, RetryFailedRequest } from "../job/schemas";
import { TERMINAL_STATES } from "../job/states";
import type { FailedCursor } from "../scope/api";
import { packJson, readCursor } from "./cursor";
import { scopeFilter, walkHomes } from "./home-walk";
import { catalogPages, directThenCatalog, inParallel } from "./homes";
import type { Overview } from "./overview";
import type { QueueContext } from "./queue-context";

/** Homes one listing page may visit before it returns a cursor. */
const LIST_HOMES_PER_PAGE = 20;
/** Homes pruned (and retried) in parallel, and asked of the catalog per page. */
const PRUNE_PARALLEL = 16;
const PRUNE_PAGE = 64;
/** Homes one cancel by keys writes to in parallel. */
const CANCEL_PARALLEL = 32;

type Counts = { retried: number; skipped: number };

export class FanOut {
  constructor(
    private readonly q: QueueContext,
    private readonly overview: Overview,
  ) {}

  /** list: a page of the jobs the query matches, across the homes holding some (coordinator/home-walk.ts). */
  async list(q: ListQuery): Promise<ListResult> {
    const filter = scopeFilter(q, q.state);
    // A failure-kind filter only finds failed jobs: only homes holding some are visited.
    const states = q.failureKind ? (q.state ?? ["failed"]).filter((s) => s === "failed") : q.state;
    const walk = { scopeType: q.scopeType, scopeId: q.scopeId, types: q.type, states, cursor: q.cursor, maxHomes: LIST_HOMES_PER_PAGE };
    const items: Job[] = [];
    const nextCursor = await walkHomes(this.q, walk, async (home, from) => {
      const page = await this.q.scope(home).list(filter, from, q.limit - items.length);
      items.push(...page.jobs);
      return page.next ?? (items.length === q.limit ? "full" : null);
    });
    return { items, nextCursor };
  }

  /** retryFailed: every failed job of a scope, or of every home holding failed jobs (of `type`), back to pending. */
  async retryFailed(req: RetryFailedRequest): Promise<Counts & { nextCursor: string | null }> {
    if (req.type !== undefined) await this.overview.requireKnownType(req.type, "type");
    if (req.limit !== undefined || req.cursor !== undefined) return this.retryFailedPage(req, req.limit ?? 1000);
    const total = { retried: 0, skipped: 0, nextCursor: null };
    const type = req.type ?? null;
    // Page by page within a home: each call is bounded, and the object serves others in between.
    const drain = async (home: string) => {
      for (let after: FailedCursor | null = null; ; ) {
        const page: Counts & { next: FailedCursor | null } = await this.q.scope(home).retryFailed(type, after);
        total.retried += page.retried;
        total.skipped += page.skipped;
        if (!page.next) return;
        after = page.next;
      }
    };
    for await (const homes of this.failedHomes(req)) await inParallel(homes, PRUNE_PARALLEL, drain);
    return total;
  }

  /**
   * retryFailedPage: bulk retry that looks at `limit` failed jobs at most, home by home in name order and
   * within a home by finish time, and says where the next call goes on: `{h: home, f: finishedAt, s: seq}`.
   */
  private async retryFailedPage(req: RetryFailedRequest, limit: number): Promise<Counts & { nextCursor: string | null }> {
    const type = req.type ?? null;
    const total = { retried: 0, skipped: 0 };
    const left = () => limit - total.retried - total.skipped;
    const at = req.cursor === undefined ? null : readRetryCursor(req.cursor);
    let inHome: FailedCursor | null = at ? { finishedAt: at.f, seq: at.s } : null;
    const stopAt = (home: string, c: FailedCursor | null) => ({ ...total, nextCursor: packJson({ h: home, f: c?.finishedAt ?? -1, s: c?.seq ?? -1 }) });
    for await (const homes of this.failedHomes(req, at?.h ?? "")) {
      for (const home of homes) {
        for (;;) {
          if (left() <= 0) return stopAt(home, inHome);
          const page = await this.q.scope(home).retryFailed(type, inHome, Math.min(left(), 200));
          total.retried += page.retried;
          total.skipped += page.skipped;
          inHome = page.next;
          if (!page.next) break;
        }
        // This home is done: a call that stops now goes on after it (past every finish time here), the next home from its start.
        if (left() <= 0) return stopAt(home, { finishedAt: Number.MAX_SAFE_INTEGER, seq: Number.MAX_SAFE_INTEGER });
        inHome = null;
      }
    }
    return { ...total, nextCursor: null };
  }

  /**
   * failedHomes: the homes a bulk retry visits, from `from` on (a cursor's home comes again: it may be
   * half done) — the scope's own, or the type's own shards and, page by page, every home the catalog lists with
   * failed jobs (of the type).
   */
  private failedHomes(req: RetryFailedRequest, from = ""): AsyncIterable<string[]> {
    if (req.scopeType !== undefined && req.scopeId !== undefined) {
      const home = scopeHome({ type: req.scopeType, id: req.scopeId }).name;
      return (async function* () {
        yield from === "" || from === home ? [home] : [];
      })();
    }
    const types = req.type === undefined ? undefined : [req.type];
    const direct = req.type === undefined ? [] : this.q.typeHomes(req.type);
    return directThenCatalog(direct, (after, first) => this.q.catalog().listHomes({ types, states: ["failed"] }, after, first && from !== "", PRUNE_PAGE), PRUNE_PAGE, from);
  }

  /** prune visits every home the catalog knows to hold terminal jobs of the given states. */
  async prune(req: PruneRequest): Promise<number> {
    const states = req.states ?? [...TERMINAL_STATES];
    let deleted = 0;
    for await (const homes of catalogPages((after) => this.q.catalog().homesWithTerminal(states, after, PRUNE_PAGE), PRUNE_PAGE)) {
      await inParallel(homes, PRUNE_PARALLEL, async (home) => {
        const n = await this.q.scope(home).prune(req.olderThan, states); // not `deleted += await …`: that reads `deleted` before the await
        deleted += n;
      });
    }
    return deleted;
  }

  /** cancelKeys: each key's object (its scope's, or the type shard its key hashes to) cancels the type's live jobs under it. */
  async cancelKeys(req: CancelKeysRequest): Promise<number> {
    requireDeclared(this.q.config, [req.type], () => "type");
    const shards = this.q.config.typeSettings(req.type).shards;
    const byHome = groupByHome(new Set(req.dedupeKeys), (key) => homeFor({ type: req.type, scope: req.scope ?? null, dedupeKey: key, localId: "" }, shards).name);
    let cancelled = 0;
    await inParallel([...byHome], CANCEL_PARALLEL, async ([home, keys]) => {
      const n = await this.q.scope(home).cancelKeys(req.type, keys, req.reason ?? null);
      cancelled += n;
    });
    return cancelled;
  }
}

/** readRetryCursor: a bulk retry's `nextCursor` (`{h, f, s}`). */
function readRetryCursor(text: string): { h: string; f: number; s: number } {
  return readCursor(text, ({ h, f, s }) => (typeof h === "string" && Number.isSafeInteger(f) && Number.isSafeInteger(s) ? { h, f: f as number, s: s as number } : null));
}
