/**
 * Letting a type's jobs past their guards (docs/guards.md), written once for the dispatcher before a handler call
 * (dispatch/batch-take.ts) and a pull claim before it leases (scope/pull/pull-permits.ts). `admit` runs the steps
 * outside any transaction: a batch type's gathering hold, `waitsFor`, then every permit the type's plan needs
 * (permit-plan.ts) — asked for no more jobs than are due, trimmed to the smallest grant; a keyed type's key value by
 * key value (keyed-take.ts). `claimGranted` then runs the claim, in one transaction, and gives back refunded what no
 * claimed job took (no attempt started with it). What differs between the two callers is a parameter: how the due
 * jobs are counted, which permits a take reaches for (a dispatcher's ledger keeps some), and what a refusal does.
 *
 * @module
 */
import type { QueueConfig } from "../config/schema";
import type { KeyTurns } from "./key-turns";
import { takeKeyed, unusedOf } from "./keyed-take";
import { perKeyJobs, permitPlan, type Held, type PermitStep, type Taken } from "./permit-plan";

/** How long a type waiting for another type's work is refused before it asks the catalog again. */
export const WAITS_FOR_RETRY_MS = 1_000;

/** What admission reads of the object holding the jobs, and how it takes permits. */
export interface AdmitDeps {
  config: QueueConfig;
  now(): number;
  turns: KeyTurns;
  /** Due jobs of the type here, counted up to `max`. */
  countDue(type: string, now: number, max: number): number;
  /** When the type's gathering for a fuller batch ends (scope/jobs/gathering.ts), or null when its jobs may go now. */
  gatherUntil(type: string, now: number): number | null;
  /** The first of these types with due or running work here, or null (waitsFor's exact, local half). */
  busyHere(types: readonly string[], now: number): string | null;
  /** The first of these types with due or running work anywhere (the catalog's view), or null. */
  busyType(types: string[]): Promise<string | null>;
  /** The type is under a keyed limit: its jobs are claimed per key value (docs/guards.md "Keyed limits"). */
  keyed(type: string): boolean;
  /** The first key value of a keyed type after `after` (null: from the start) with due jobs; null: none. */
  nextDueKey(type: string, now: number, after: string | null): string | null;
  /** Due jobs of one key value, counted up to `max`. */
  countDueOfKey(type: string, key: string, now: number, max: number): number;
  /** Key values whose permits the asker still holds from ended attempts: asked first (keyed-take.ts `kept`). */
  kept?(type: string): readonly string[];
  /** Every permit of the plan for up to `want` jobs (permit-plan.ts takePermits, or a ledger over it). */
  take(plan: readonly PermitStep[], want: number): Promise<Taken>;
}

export interface AdmitAsk {
  type: string;
  /** The most jobs of the type the claim takes. */
  limit: number;
  /**
   * How the due jobs are counted, so that no more permits are asked for than they need: `first`, before the guards
   * are asked, and none due admits nothing (a pull claim: it asks for types that may have none due here);
   * `for-permits`, only for an unkeyed plan's permits (the dispatcher: it asks for types it saw due); `never`.
   * A keyed take counts each key value's own (keyed-take.ts).
   */
  count: "first" | "for-permits" | "never";
  /** One key value per take: a pushed batch type's call carries the jobs of one value (docs/handlers.md "Batch handlers"). */
  oneValue?: boolean;
}

export type Admission =
  /**
   * Claim up to `want` jobs — a keyed type's only of the key values in `keys`, each up to its count. `held`: the
   * permits granted, per key value ("" for an unkeyed type), one per job in job order; empty when none were needed.
   */
  | { ok: true; want: number; keys?: ReadonlyMap<string, number>; held: ReadonlyMap<string, Held[]> }
  /** A batch type gathering for a fuller call: held until then. */
  | { ok: false; gatherUntil: number }
  /** A guard refused: ask again after `retryAfterMs`. */
  | { ok: false; retryAfterMs: number; why: string }
  /** Nothing of the type is due here (`count: "first"` only). */
  | { ok: false; none: true };

/** admit: whether, and for how many jobs, the type may be claimed now — its permits taken if it is guarded. */
export async function admit(d: AdmitDeps, ask: AdmitAsk): Promise<Admission> {
  const { type } = ask;
  const settings = d.config.typeSettings(type);
  // A batch type gathering for a fuller call (scope/jobs/gathering.ts) is held until then, or until more of it comes due.
  const until = d.gatherUntil(type, d.now());
  if (until !== null) return { ok: false, gatherUntil: until };
  const plan = permitPlan(d.config, type);
  const { waitsFor } = settings;
  // A keyed type's permits are its key values' (and a pushed batch type's calls carry one value each, guarded or not).
  const byKey = d.keyed(type) && (plan.length > 0 || ask.oneValue === true);
  if (plan.length === 0 && waitsFor.length === 0 && !byKey) return { ok: true, want: ask.limit, held: new Map() };
  let want = ask.limit;
  if (ask.count === "first") {
    want = d.countDue(type, d.now(), ask.limit);
    if (want === 0) return { ok: false, none: true };
  }
  if (waitsFor.length > 0) {
    // This object's own work first (exact), then everyone's (the catalog, about a second behind at most).
    const busy = d.busyHere(waitsFor, d.now()) ?? (await d.busyType(waitsFor).catch(() => waitsFor[0]!));
    if (busy !== null) return { ok: false, retryAfterMs: WAITS_FOR_RETRY_MS, why: `waitsFor ${busy}: it has due or running work` };
  }
  if (byKey) {
    // Key value by key value, in turn (keyed-take.ts); a refused value waits for its pool's poke.
    const at = d.now();
    const taken = await takeKeyed(
      {
        turns: d.turns,
        type,
        now: at,
        nextDueKey: (after) => d.nextDueKey(type, at, after),
        countDue: (key, max) => d.countDueOfKey(type, key, at, max),
        take: (key, n) => d.take(permitPlan(d.config, type, key), n),
        ...(d.kept ? { kept: d.kept(type) } : {}),
        oneValue: ask.oneValue === true,
        perKey: perKeyJobs(d.config, type),
      },
      want,
    );
    if (!taken.ok) return { ok: false, retryAfterMs: taken.retryAfterMs, why: taken.why };
    return { ok: true, want: taken.count, keys: taken.keys, held: taken.held };
  }
  if (plan.length === 0) return { ok: true, want, held: new Map() };
  if (ask.count === "for-permits") want = Math.max(1, d.countDue(type, d.now(), want));
  const taken = await d.take(plan, want);
  if (!taken.ok) return { ok: false, retryAfterMs: taken.retryAfterMs, why: taken.why };
  return { ok: true, want: taken.count, held: new Map([["", taken.held]]) };
}

/**
 * claimGranted: the claim the grants were taken for (`claim`, one transaction), then what no claimed job took goes
 * back refunded — all of it when the claim failed. `grants`: per type, per key value ("" for an unkeyed type), as
 * admit answered them; `slot`: the type and key value a claimed job counts under.
 */
export function claimGranted<J>(
  grants: ReadonlyMap<string, ReadonlyMap<string, Held[]>>,
  claim: () => J[],
  slot: (job: J) => { type: string; key: string },
  giveBack: (pool: string, ids: string[]) => void,
): J[] {
  let claimed: J[] = [];
  try {
    claimed = claim();
    return claimed;
  } finally {
    // Fewer due than permits (another claim took some), or the claim failed: the rest never start, so their rate spend is refunded.
    for (const [type, held] of grants) {
      const keys = claimed.map(slot).filter((s) => s.type === type).map((s) => s.key);
      for (const u of unusedOf(held, keys)) giveBack(u.pool, u.ids);
    }
  }
}
