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

/**
 * Notes kept unwritten at most (each a few hundred bytes: its message cut to what a group keeps); past it a failure
 * storm's further notes are dropped, counted, until the next write — the groups' counts then read low, never a job.
 */
export const NOTES_MAX = 10_000;
/** What a note keeps of a message: a group keeps its first 500 characters at most (error-groups.ts `sample`). */
const NOTE_MESSAGE_MAX = 500;

export class ErrorNotes {
  private notes: ErrorNote[] = [];
  /** Notes dropped past NOTES_MAX since the last write (logged by it). */
  dropped = 0;

  get size(): number {
    return this.notes.length;
  }

  /** The first unwritten note's time (the flush is due a while after it), or null. */
  get since(): number | null {
    return this.notes[0]?.at ?? null;
  }

  add(note: ErrorNote): void {
    if (this.notes.length >= NOTES_MAX) {
      this.dropped++;
      return;
    }
    const message = note.error.message;
    this.notes.push(message.length <= NOTE_MESSAGE_MAX ? note : { ...note, error: { ...note.error, message: message.slice(0, NOTE_MESSAGE_MAX) } });
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
