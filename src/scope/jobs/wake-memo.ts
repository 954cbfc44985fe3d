/**
 * What is due and when to wake, read once and kept while it cannot change.
 *
 * After one write a scope object asks "which push types are due" and "when
 * must it wake" several times over: the fill, each re-arm, the fill's end, a
 * report landing. A burst of 32 pushed jobs in an idle scope asked them 9 and
 * 4 times, 13 of its 23 statements (docs/design.md, What a small call costs).
 * Both answers change only when a row is written or when the clock passes the
 * next pending job's `run_at` or the next lease's expiry — and the wake-up's
 * own row holds those two times. So the row and the due types are kept until
 * either happens:
 *
 * - SQLite's `total_changes()` counts every row the object's connection has
 *   written (triggers too, and writes later rolled back), so one trivial read
 *   of it says whether anything was written since;
 * - the clock must stay in [read at, min(next run_at, next lease expiry)):
 *   within it, no job turns due and no lease lapses.
 *
 * Read only outside a transaction: a write rolled back after the read would
 * leave the count where the kept answer saw it.
 *
 * @module
 */

const TOTAL_CHANGES = "SELECT total_changes() AS n";

/** The wake-up's row (wake.ts): `due` and `lease` bound how long it and the due types stand. */
export type WakeRow = Record<string, number | null> & { due: number | null; lease: number | null };

interface Kept {
  changes: number;
  from: number;
  until: number;
  wake: WakeRow;
  due: string[] | null;
}

export class WakeMemo {
  private kept: Kept | null = null;

  constructor(
    private readonly sql: SqlStorage,
    private readonly readWake: (now: number) => WakeRow,
  ) {}

  /** wake: the wake-up's row at `now`. */
  wake(now: number): WakeRow {
    return this.fresh(now).wake;
  }

  /** due: the due types at `now`, `read()` when nothing kept stands. */
  due(now: number, read: () => string[]): string[] {
    const k = this.fresh(now);
    return (k.due ??= read());
  }

  private fresh(now: number): Kept {
    const changes = this.sql.exec<{ n: number }>(TOTAL_CHANGES).one().n;
    const k = this.kept;
    if (k && k.changes === changes && now >= k.from && now < k.until) return k;
    const wake = this.readWake(now);
    this.kept = { changes, from: now, until: Math.min(wake.due ?? Infinity, wake.lease ?? Infinity), wake, due: null };
    return this.kept;
  }
}
