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
import type { JobRow } from "../jobs/job-row";
import type { HomeStore } from "../jobs/home-store";

/** Rows a pass reads at most before it stops and comes back. */
export const WALK_READS = 20_000;
const WALK_PAGE = 500;

/** jobWalk: the table in seq order from a position (primary key). */
const JOB_WALK = "SELECT seq, state, created_at, finished_at FROM job WHERE seq > ?1 ORDER BY seq LIMIT ?2";
/** jobDeleteBySeq: the walk's finds, the same answer as the indexed deletes (sweep-pass.ts). */
export const JOB_DELETE_BY_SEQ = `
DELETE FROM job WHERE seq IN (SELECT value FROM json_each(?1)) AND state = 'completed' RETURNING id, own_id, type, state, failure_kind`;

type WalkState = {
  due: number | null | undefined;
  carry: number | null;
  low: number;
  cycleLow: number;
  walkAt: number | null;
  pruneAt: number;
  knownAt: number;
};
type WalkRow = { seq: number; state: string; created_at: number; finished_at: number | null };

export class CompletedSweep {
  /** When the first completed job known here passes its retention; undefined: not known yet (a fresh instance). */
  private due: number | null | undefined = undefined;
  /**
   * What a walk cycle carries until it ends: the due times of what its passes (and the completions noted meanwhile)
   * left behind the cursor, and the lowest seq that may still hold an unswept completed job — where the next
   * cycle starts, so the jobs before it (live ones, failed ones kept longer) are not read again and again. A
   * completion noted later lowers it; an instance starts from the table's start.
   */
  private carry: number | null = null;
  private low = 0;
  private cycleLow = Infinity;
  /** Where the sweep's walk goes on (null: a new cycle, from `low`), and a prune's by hand. */
  private walkAt: number | null = null;
  private pruneAt = 0;
  /** When this instance last knew of every completed job (its first look, or a cycle's end). */
  private knownAt = 0;

  /** note: rows a write ended — each completed one passes its retention `keepMs` after it finished. */
  note(rows: readonly JobRow[], keepMs: number | null): void {
    if (keepMs === null) return;
    for (const r of rows) {
      if (r.state !== "completed" || r.finished_at === null) continue;
      const at = r.finished_at + keepMs;
      this.low = Math.min(this.low, r.seq - 1);
      this.cycleLow = Math.min(this.cycleLow, r.seq - 1);
      this.carry = this.carry === null ? at : Math.min(this.carry, at);
      if (this.due === undefined) continue; // not known yet: the first sweep walks anyway
      this.due = this.due === null ? at : Math.min(this.due, at);
    }
  }

  /**
   * dueAt: when the sweep of completed jobs is next due, or null while none is kept; `kept` the completed jobs
   * here (their count rows). A completion this instance did not note (none should escape the commit path, but a
   * write run on its own has none) finished after `knownAt`, when the instance last knew of every completed job.
   */
  dueAt(kept: number, now: number, keepMs: number): number | null {
    if (this.due === undefined) {
      this.due = kept > 0 ? now : null;
      this.knownAt = now;
    }
    if (this.due === null && kept > 0) this.due = this.knownAt + keepMs;
    return this.due;
  }

  /**
   * walk: the seqs of up to `limit` completed jobs that finished before `before`, found in seq order. For the
   * sweep (retention `keepMs`, the cutoff `before` = now − keepMs + 1) it sets when the next walk is due; a prune
   * by hand (`keepMs` null) walks on its own, from the start. `more`: it stopped early and goes on from there.
   */
  walk(sql: SqlStorage, before: number, keepMs: number | null, limit: number): { seqs: number[]; more: boolean } {
    const sweep = keepMs !== null;
    const seqs: number[] = [];
    if (sweep && this.walkAt === null) {
      this.walkAt = this.low;
      this.cycleLow = Infinity;
      this.carry = null;
    }
    const later = (at: number, seq: number) => {
      if (!sweep) return;
      this.carry = this.carry === null ? at : Math.min(this.carry, at);
      this.cycleLow = Math.min(this.cycleLow, seq - 1);
    };
    const end = (walkAt: number | null) => {
      const more = walkAt !== null;
      if (!sweep) this.pruneAt = walkAt ?? 0;
      else {
        this.walkAt = walkAt;
        // Stopped early: the next pass is due at once (the caller's `more`). A cycle that ended leaves the earliest it
        // saw, and starts the next one at the lowest completed job it left.
        this.due = more ? 0 : this.carry;
        if (!more) {
          this.low = Number.isFinite(this.cycleLow) ? this.cycleLow : this.lastSeq(sql);
          this.knownAt = before + keepMs - 1;
        }
      }
      return { seqs, more };
    };
    let at = sweep ? this.walkAt! : this.pruneAt;
    let read = 0;
    for (;;) {
      const page = sql.exec<WalkRow>(JOB_WALK, at, WALK_PAGE).toArray();
      for (const r of page) {
        // Created at or after the cutoff: it and every later job finished no earlier.
        if (r.created_at >= before) {
          later(r.created_at + (keepMs ?? 0), r.seq);
          return end(null);
        }
        at = r.seq;
        read++;
        if (r.state !== "completed" || r.finished_at === null) continue;
        if (r.finished_at >= before) later(r.finished_at + (keepMs ?? 0), r.seq);
        else if (seqs.push(r.seq) === limit) return end(at);
      }
      if (page.length < WALK_PAGE) return end(null);
      if (read >= WALK_READS) return end(at);
    }
  }

  /** snapshot / restore: the walk's state, put back when the transaction it ran in rolls back (sweep-pass.ts). */
  snapshot(): WalkState {
    const { due, carry, low, cycleLow, walkAt, pruneAt, knownAt } = this;
    return { due, carry, low, cycleLow, walkAt, pruneAt, knownAt };
  }

  restore(saved: WalkState): void {
    Object.assign(this, saved);
  }

  /** lastSeq: where a cycle that left nothing starts the next: after the table's last job (a later completion lowers it). */
  private readonly lastSeq = (sql: SqlStorage): number => sql.exec<{ seq: number }>("SELECT coalesce(max(seq), 0) AS seq FROM job").one().seq;
}
