/**
 * The earliest expiry of a job never started, kept in memory so that the
 * wake-up reads nothing for it while it stands (expiry.ts runs the pass).
 *
 * @module
 */

/** jobNextExpiry: the earliest expiry of a never-started pending job (job_expiry_idx), or null. */
const JOB_NEXT_EXPIRY = "SELECT min(expires_at) AS at FROM job WHERE state = 'pending' AND started_at IS NULL AND expires_at IS NOT NULL";

/**
 * ExpiryMemo: the earliest expiry, or a time no later than it. Every job gets its expiry at insert (enqueue.ts
 * tells `noted`), and every other write only takes expiries away (a start, a cancel, a retry, the expiry pass), so
 * a kept value stays a safe bound: at worst the alarm wakes early, and the pass it runs reads the true one again.
 * Unknown (a new instance) until the first ask, which reads it.
 */
export class ExpiryMemo {
  /** null: not read yet; Infinity: no job here expires. */
  private at: number | null = null;

  constructor(private readonly sql: SqlStorage) {}

  /** next: the earliest expiry (or an earlier time), null when no job expires. */
  next(): number | null {
    this.at ??= this.sql.exec<{ at: number | null }>(JOB_NEXT_EXPIRY).one().at ?? Infinity;
    return this.at === Infinity ? null : this.at;
  }

  /** noted: a job was inserted with this expiry. */
  noted(at: number): void {
    if (this.at !== null) this.at = Math.min(this.at, at);
  }

  /** due: whether an expiry may have passed by `now` (the pass has something to do). */
  due(now: number): boolean {
    const at = this.next();
    return at !== null && at <= now;
  }

  /** passed: the expiry pass ran; the next ask reads the earliest again. */
  passed(): void {
    this.at = null;
  }
}
