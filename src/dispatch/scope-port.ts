/**
 * What the dispatcher asks of its scope object's jobs — and all it may ask:
 * it never sees a row or a statement. `scope/push/dispatch-port.ts` implements it
 * over the object's SQLite; the dispatcher's tests implement it in memory.
 *
 * `R` is whatever the scope wants back in `changed()` after a claim or a
 * settle (its rows, for events and the catalog); the dispatcher only passes
 * it on.
 *
 * @module
 */
import type { AbortReason, DispatchJob, HandlerOutcome, JournalAnswer, JournalWrite } from "../job/handler-contract";

/** One job leased to a handler call. */
export interface Leased {
  id: string;
  /** The lease token: every write for this attempt is fenced by it. */
  token: string;
  /** When the job's timeoutMs ends this attempt (epoch ms), or null. */
  timeoutAt: number | null;
  /** The key value a keyed type's job counts under (its permits are that key's), or null. */
  key: string | null;
  /** What the handler is sent (its journal included). */
  job: DispatchJob;
}

export interface ScopePort<R> {
  /** Push types with a due job here; a serialized type whose scope has a job running is left out. */
  dueTypes(now: number): string[];
  /** Due jobs of the type, counted up to `max`. */
  countDue(type: string, now: number, max: number): number;
  /** When the type's gathering for a fuller batch ends (scope/jobs/gathering.ts), or null when its jobs may go now. */
  gatherUntil(type: string, now: number): number | null;
  /** The type is serialized per scope here: one job, one call at a time. */
  serial(type: string): boolean;
  /** The first of these types with due or running work here, or null (waitsFor's exact, local half). */
  busyHere(types: readonly string[], now: number): string | null;
  /** Lease up to `limit` due jobs of the type, best first, in one transaction; a keyed type's only of the key values in `keys`, each up to its count. */
  claim(type: string, limit: number, leaseMs: number, now: number, keys?: ReadonlyMap<string, number>): { leased: Leased[]; changed: R[] };
  /** The type is under a keyed limit: its jobs are claimed per key value (docs/guards.md "Keyed limits"). */
  keyed(type: string): boolean;
  /** The first key value of a keyed type after `after` (null: from the start) with due jobs; null: none. */
  nextDueKey(type: string, now: number, after: string | null): string | null;
  /** Due jobs of one key value, counted up to `max` (one at a time rules included). */
  countDueOfKey(type: string, key: string, now: number, max: number): number;
  /**
   * What a job's handler is sent, made ready off the object's transaction (its sealed values opened: sealing/lens.ts);
   * a job whose values cannot be made ready throws, and fails alone. Absent: the job as claimed.
   */
  reveal?(job: DispatchJob): Promise<DispatchJob>;
  /** Outcomes made ready for settle off its transaction (their results sealed natively: sealing/lens.ts). Absent: as they are. */
  prepare?(outcomes: readonly HandlerOutcome[]): Promise<void>;
  /** Settle outcomes, each under its lease, in one transaction; a write that matches no live lease changes nothing. */
  settle(items: readonly { id: string; token: string; outcome: HandlerOutcome }[], now: number): R[];
  /** Extend a lease; `reason` says why it cannot be. */
  renew(id: string, token: string, leaseMs: number, now: number): { ok: true } | { ok: false; reason: AbortReason };
  /** Journal durable steps, each under its lease, in one transaction. */
  /** Async for a wait token's write, which is signed first (job/wait-token.ts); the steps themselves are one transaction. */
  journal(writes: readonly { write: JournalWrite; token: string }[], now: number): JournalAnswer[] | Promise<JournalAnswer[]>;
}
