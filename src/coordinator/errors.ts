/**
 * Error groups across the queue (docs/operating.md "Error groups"): `GET /v1/errors` reads each object's groups —
 * the type's own objects first, read directly, then the objects the catalog lists with jobs (of the type) — and
 * merges a type's group found in several; a group's retry or rerun acts on its newest jobs, each in its own object.
 * No SQL here.
 *
 * @module
 */
import { QueueError } from "../errors";
import type { ErrorGroup, ErrorGroupAction, ErrorsResult } from "../job/schemas/errors";
import { directThenCatalog, inParallel } from "./homes";
import type { Jobs } from "./jobs";
import type { QueueContext } from "./queue-context";

/** Objects one call reads at most (each is a request); past it, the answer says it is not complete. */
const HOMES_MAX = 200;
const PARALLEL = 16;
/** The newest jobs a group merged from several objects keeps (what its retry or rerun acts on). */
const RECENT_MERGED_MAX = 100;

export class ErrorGroups {
  constructor(
    private readonly q: QueueContext,
    private readonly jobs: Jobs,
  ) {}

  async list(type: string | undefined, limit: number): Promise<ErrorsResult> {
    const { homes, complete } = await this.homes(type);
    const merged = new Map<string, ErrorGroup>();
    await inParallel(homes, PARALLEL, async (home) => {
      for (const g of (await this.q.scope(home).errorGroups(type ?? null)) as ErrorGroup[]) {
        const key = `${g.type}\u0000${g.fingerprint}`;
        const seen = merged.get(key);
        merged.set(key, seen ? merge(seen, g) : g);
      }
    });
    const items = [...merged.values()].sort((a, b) => b.lastHour - a.lastHour || b.lastDay - a.lastDay || b.lastAt - a.lastAt).slice(0, limit);
    return { items, complete };
  }

  /**
   * act: a group's newest jobs that failed for good, retried or rerun, each as the single call does — never one that
   * went on to complete after its error (a rerun would do its work again), nor one cancelled or still running.
   */
  async act(action: "retry" | "rerun", g: ErrorGroupAction): Promise<{ changed: number; skipped: number }> {
    const group = (await this.list(g.type, 500)).items.find((x) => x.fingerprint === g.fingerprint);
    if (!group) throw new QueueError("not_found", `no error group ${g.fingerprint} of ${g.type}`);
    const total = { changed: 0, skipped: 0 };
    await inParallel(group.recentJobIds, PARALLEL, async (id) => {
      try {
        if ((await this.jobs.get(id)).state !== "failed") {
          total.skipped++;
          return;
        }
        if (action === "retry") await this.jobs.retry(id);
        else await this.jobs.rerun(id, undefined, undefined);
        total.changed++;
      } catch (e) {
        // Not in a state the action takes (running again, retried already), or gone with retention: left as it is.
        if (!(e instanceof QueueError)) throw e;
        total.skipped++;
      }
    });
    return total;
  }

  /** homes: the objects to read — the type's own, then the catalog's — up to HOMES_MAX. */
  private async homes(type: string | undefined): Promise<{ homes: string[]; complete: boolean }> {
    const types = type === undefined ? undefined : [type];
    const direct = type === undefined ? [] : this.q.typeHomes(type);
    const homes: string[] = [];
    for await (const page of directThenCatalog(direct, (after) => this.q.catalog().listHomes({ types }, after, false, HOMES_MAX), HOMES_MAX)) {
      for (const h of page) {
        if (homes.length === HOMES_MAX) return { homes, complete: false };
        homes.push(h);
      }
    }
    return { homes, complete: true };
  }
}

/** merge: one type's group as two objects counted it. */
function merge(a: ErrorGroup, b: ErrorGroup): ErrorGroup {
  const first = a.firstAt <= b.firstAt ? a : b;
  const last = a.lastAt >= b.lastAt ? a : b;
  return {
    ...first,
    firstAt: first.firstAt,
    firstJobId: first.firstJobId,
    lastAt: last.lastAt,
    lastJobId: last.lastJobId,
    total: a.total + b.total,
    lastHour: a.lastHour + b.lastHour,
    lastDay: a.lastDay + b.lastDay,
    // Each list is oldest first; the latest object's last.
    recentJobIds: [...(last === a ? b : a).recentJobIds, ...last.recentJobIds].slice(-RECENT_MERGED_MAX),
  };
}
