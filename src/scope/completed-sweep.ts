/**
 * The retention sweep of completed jobs, without an index. A completed job is
 * the common end, and an entry in job_finished_idx was one row written per job
 * (Cloudflare's billed unit) for a question the sweep can answer from the
 * table: a job is created before it finishes, and seq follows creation, so the
 * jobs that may have passed their retention are all at the start of the table
 * — walked in seq order, up to the first job created after the cutoff
 * (docs/design.md "What a job costs"). Failed, cancelled and superseded jobs
 * keep their index entries (retrying failed jobs pages them in finish order).
 *
 * The walk reads, besides what it deletes, the older jobs that are still live
 * or kept longer (failed ones, by default 7 days to the completed ones' 1):
 * reads cost a thousandth of a write. It goes on from where it stopped when a
 * pass fills its batch or reads WALK_READS rows, so a long run of such jobs
 * never starves the ones behind it.
 *
 * When: an instance notes each completion it makes (`note`, from the commit
 * path: follow-ups.ts), so the sweep is due at the first noted finish plus
 * the retention, exactly as the index said. An instance that starts with
 * completed jobs it never saw finish sweeps at once, and a walk leaves the
 * next time as the earliest it can tell: a completed job it passed, or the
 * first job past the cutoff (created then, so finished no earlier).
 *
 * @module
 */
import type { JobRow } from "./job-row";
import type { HomeStore } from "./home-store";

/** Rows a pass reads at most before it stops and comes back. */
export const WALK_READS = 20_000;
const WALK_PAGE = 500;

/** jobWalk: the table in seq order from a position (primary key). */
const JOB_WALK = "SELECT seq, state, created_at, finished_at FROM job WHERE seq > ?1 ORDER BY seq LIMIT ?2";
const ANY_COMPLETED = "SELECT coalesce(sum(completed), 0) AS n FROM type_count";
/** jobDeleteBySeq: the walk's finds, the same answer as the indexed deletes (sweep-pass.ts). */
export const JOB_DELETE_BY_SEQ = `
DELETE FROM job WHERE seq IN (SELECT value FROM json_each(?1)) AND state = 'completed' RETURNING id, own_id, type, state, failure_kind`;

type WalkRow = { seq: number; state: string; created_at: number; finished_at: number | null };

export class CompletedSweep {
  /** When the first completed job known here passes its retention; undefined: not known yet (a fresh instance). */
  private due: number | null | undefined = undefined;
  /** Where the sweep's walk goes on (0: from the start), and a prune's by hand. */
  private walkAt = 0;
  private pruneAt = 0;

  /** note: rows a write ended — each completed one passes its retention `keepMs` after it finished. */
  note(rows: readonly JobRow[], keepMs: number | null): void {
    if (keepMs === null) return;
    for (const r of rows) {
      if (r.state !== "completed" || r.finished_at === null) continue;
      const at = r.finished_at + keepMs;
      if (this.due === undefined) continue; // not known yet: the first sweep walks anyway
      this.due = this.due === null ? at : Math.min(this.due, at);
    }
  }

  /** dueAt: when the sweep of completed jobs is next due, or null while none is kept. */
  dueAt(sql: SqlStorage, now: number): number | null {
    if (this.due === undefined) this.due = sql.exec<{ n: number }>(ANY_COMPLETED).one().n > 0 ? now : null;
    return this.due;
  }

  /**
   * walk: the seqs of up to `limit` completed jobs that finished before `before`, found in seq order. For the
   * sweep (retention `keepMs`, the cutoff `before` = now − keepMs + 1) it sets when the next walk is due; a prune
   * by hand (`keepMs` null) walks on its own. `more`: it stopped early and goes on from there.
   */
  walk(sql: SqlStorage, before: number, keepMs: number | null, limit: number): { seqs: number[]; more: boolean } {
    const seqs: number[] = [];
    let next: number | null = null;
    const later = (at: number) => (next = keepMs === null ? null : next === null ? at : Math.min(next, at));
    const end = (walkAt: number, more: boolean) => {
      if (keepMs === null) this.pruneAt = walkAt;
      else {
        this.walkAt = walkAt;
        // Stopped early: what lies past the stop is not known, so the next pass is due at once (the caller's `more`).
        this.due = more ? 0 : next;
      }
      return { seqs, more };
    };
    let at = keepMs === null ? this.pruneAt : this.walkAt;
    let read = 0;
    for (;;) {
      const page = sql.exec<WalkRow>(JOB_WALK, at, WALK_PAGE).toArray();
      for (const r of page) {
        // Created at or after the cutoff: it and every later job finished no earlier.
        if (r.created_at >= before) {
          later(r.created_at + (keepMs ?? 0));
          return end(0, false);
        }
        at = r.seq;
        read++;
        if (r.state !== "completed" || r.finished_at === null) continue;
        if (r.finished_at >= before) later(r.finished_at + (keepMs ?? 0));
        else if (seqs.push(r.seq) === limit) return end(at, true);
      }
      if (page.length < WALK_PAGE) return end(0, false);
      if (read >= WALK_READS) return end(at, true);
    }
  }
}
