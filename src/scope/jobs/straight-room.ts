/**
 * Which of an enqueue's new jobs go straight to a handler call (docs/design.md "Straight to a handler"): the room the
 * capabilities' `startable` hook gives, shared among the enqueue's types (jobs/enqueue.ts asks it per job).
 *
 * @module
 */
import type { HomeStore } from "./home-store";
import type { NewJob } from "./enqueue";

/**
 * Room: which of this enqueue's new jobs go straight to a handler call. The hooks say, once per type, whether the
 * type may and how many calls the dispatcher can start now (the push capability answers: scope/push/straight.ts);
 * the calls are shared by every type of the enqueue, each carrying up to its type's batch size. Only a job due now,
 * not debounced, and not expired by now goes straight.
 */
export class Room {
  /** Calls left to start, shared by the types; undefined until a type may. */
  private calls: number | undefined;
  /** Per type: whether it may, and how many more jobs its open call takes. */
  private readonly types = new Map<string, { may: boolean; open: number }>();

  constructor(
    private readonly store: HomeStore,
    private readonly now: number,
  ) {}

  /** take: whether `job` (its `shape`: jobShape) goes straight, counting it against its call and the calls left. */
  take(job: NewJob, shape: readonly unknown[]): boolean {
    const runAt = shape[4] as number;
    const expiresAt = shape[11] as number | null;
    if (runAt > this.now || job.keyMode === "debounce" || (expiresAt !== null && expiresAt <= this.now)) return false;
    let t = this.types.get(job.type);
    if (t === undefined) {
      const calls = this.store.hooks.startable(this.store, job.type, this.now);
      t = { may: calls > 0, open: 0 };
      if (t.may) this.calls = Math.min(this.calls ?? calls, calls);
      this.types.set(job.type, t);
    }
    if (!t.may) return false;
    if (t.open > 0) {
      t.open--;
      return true;
    }
    if ((this.calls ?? 0) <= 0) return false;
    this.calls!--;
    t.open = this.store.config.typeSettings(job.type).batchSize - 1;
    return true;
  }
}
