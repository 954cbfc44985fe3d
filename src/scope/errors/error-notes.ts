/**
 * Failed attempts noted for their error groups, in memory until the errors capability writes them (errors.ts): a
 * burst of failures of one group is one row written, not one per attempt — a job that fails once and then succeeds
 * pays nothing for its group at its failure (docs/design.md "What a job costs"). A note rolls back with the
 * transaction that made it (`mark`, `rollback`: the store's `atomic`). An instance that ends with notes unwritten
 * loses them: the last seconds' counts of a group, never a job (docs/operating.md "Error groups").
 *
 * @module
 */
import type { AttemptError } from "../jobs/home-store";

export interface ErrorNote {
  job: { id: string; type: string };
  error: AttemptError;
  at: number;
}

export class ErrorNotes {
  private notes: ErrorNote[] = [];

  get size(): number {
    return this.notes.length;
  }

  /** The first unwritten note's time (the flush is due a while after it), or null. */
  get since(): number | null {
    return this.notes[0]?.at ?? null;
  }

  add(note: ErrorNote): void {
    this.notes.push(note);
  }

  mark(): number {
    return this.notes.length;
  }

  rollback(mark: number): void {
    this.notes.length = Math.min(this.notes.length, mark);
  }

  /** take: every note, in the order made; none are left. */
  take(): ErrorNote[] {
    const out = this.notes;
    this.notes = [];
    return out;
  }
}
