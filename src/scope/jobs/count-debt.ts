/**
 * Counts owed to `type_count` (docs/design.md "Counts paid at the report"): a
 * move that does not change a type's `pending` count — a job inserted
 * straight into `running`, a completion, a retention delete — of a type that
 * does not run one at a time is counted here, in memory, and written when the
 * counts are next read: before the catalog summary (at most one a second),
 * and before a `waitsFor` check (not at the alarm: its readers pay or add
 * what is owed). A busy type's counts then cost one row per report, not one
 * per move.
 *
 * `pending` is never owed: the claim, the dispatcher's due types and the
 * wake-up read it inside their own statements — except a held retry's moves
 * (held-retries.ts): those readers never see a held row (it has no claim
 * index entry), and the one that counts it, a new job's straight start, adds
 * what is owed (`owedOf`); a type with a maxDepth counts them at once. `running` and the terminal
 * counts are read only by the readers above (and the orphan check, which a
 * count too high only makes read the table), and a one-at-a-time type's
 * `running` is never owed (its claim reads it). The retention sweep's wake-up
 * reads the completed count inside the wake statement, too often to pay
 * first: it adds what is owed to it (`owedTo`; retention/sweep-pass.ts).
 *
 * What is owed rolls back with the transaction that owed it (`mark`,
 * `rollback`: the store's `atomic`), and what a payment wrote with the
 * transaction it ran in. An instance that dies owing loses it: every move that
 * owes also marks the catalog summary stale (`catalog_dirty_since`, written in
 * the same transaction), so an instance that starts with that mark recounts
 * the state counts from the job table (tallies.ts `recount`); the minute's
 * counters of what it owed are lost with it (docs/reliability.md).
 *
 * @module
 */
import type { CounterName } from "../../metrics/counters";
import type { StateColumn } from "./tallies";

export interface Owed {
  readonly type: string;
  /** When the moves happened (their minute is counted in the type's counters). */
  readonly at: number;
  readonly deltas: Partial<Record<StateColumn, number>>;
  readonly counters: Partial<Record<CounterName, number>>;
}

export interface DebtMark {
  readonly owed: Owed[];
  readonly length: number;
}

export class CountDebt {
  private owed: Owed[] = [];

  /** owe: counts to write later (see the module's note). */
  owe(o: Owed): void {
    this.owed.push(o);
  }

  get size(): number {
    return this.owed.length;
  }

  /** owedTo: what is owed to one count column, summed over types (a reader of the table adds it to what it read). */
  owedTo(column: StateColumn): number {
    let n = 0;
    for (const o of this.owed) n += o.deltas[column] ?? 0;
    return n;
  }

  /** owedOf: what is owed to one type's count column (a reader of its row adds it to what it read). */
  owedOf(type: string, column: StateColumn): number {
    let n = 0;
    for (const o of this.owed) if (o.type === type) n += o.deltas[column] ?? 0;
    return n;
  }

  /** mark: where a transaction starts; `rollback` to it forgets what the transaction owed and restores what it paid. */
  mark(): DebtMark {
    return { owed: this.owed, length: this.owed.length };
  }

  rollback(m: DebtMark): void {
    m.owed.length = m.length;
    this.owed = m.owed;
  }

  /**
   * take: what is owed, handed to the payment; forgotten here at once. A payment inside a transaction that rolls
   * back is owed again (`rollback` restores the list it came from).
   */
  take(): readonly Owed[] {
    const out = this.owed;
    this.owed = [];
    return out;
  }
}
