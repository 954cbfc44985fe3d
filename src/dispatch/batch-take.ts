/**
 * Taking one type's next batch for a handler call (docs/design.md "Push dispatch"): its guards first (waitsFor asks
 * the catalog), then every permit the type needs — asked for no more jobs than are due, outside any transaction,
 * trimmed to the smallest grant; a keyed type's key value by key value (pool/keyed-take.ts) — then the claim, in
 * one transaction. What no leased job took goes back refunded. A refusal backs the type off (backoff.ts).
 *
 * @module
 */
import type { QueueConfig } from "../config/schema";
import type { KeyTurns } from "../pool/key-turns";
import { permitsOf, takeKeyed, unusedOf } from "../pool/keyed-take";
import { keyedBases, perKeyJobs, permitPlan, PERMIT_TTL_FACTOR, type Held } from "../pool/permit-plan";
import type { TypeBackoff } from "./backoff";
import type { Permit, PermitLedger } from "./permit-ledger";
import type { Leased, ScopePort } from "./scope-port";

/** How long a type waiting for another type's work backs off before it asks the catalog again. */
export const WAITS_FOR_RETRY_MS = 1_000;

export interface Batch<R> {
  type: string;
  leased: Leased[];
  changed: R[];
  /** Per leased job, in order. */
  permits: Permit[][];
  leaseMs: number;
  binding: string;
  now: number;
}

export interface TakeDeps<R> {
  jobs: ScopePort<R>;
  config: QueueConfig;
  now(): number;
  home(): string;
  /** The first of these types with due or running work anywhere (the catalog's view), or null. */
  busyType(types: string[]): Promise<string | null>;
  permits: PermitLedger;
  backoff: TypeBackoff;
  /** Whose turn it is among keyed types' key values in this object. */
  turns: KeyTurns;
  /** This instance (permits a dead instance took are dropped by the pools it asks: pool/permits.ts). */
  epoch: string;
}

/** takeBatchOf: the type's next batch, or null (nothing due, or a guard refused: the type is backed off). */
export async function takeBatchOf<R>(d: TakeDeps<R>, type: string): Promise<Batch<R> | null> {
  const settings = d.config.typeSettings(type);
  const { jobs } = d;
  const epoch = d.backoff.epoch;
  const blocked = (retryAfterMs: number, why: string): null => {
    d.backoff.blocked(type, retryAfterMs, why, epoch);
    return null;
  };
  if (settings.waitsFor.length > 0) {
    // This object's own work first (exact), then everyone's (the catalog, about a second behind at most).
    const busy = jobs.busyHere(settings.waitsFor, d.now()) ?? (await d.busyType(settings.waitsFor).catch(() => settings.waitsFor[0]!));
    if (busy) return blocked(WAITS_FOR_RETRY_MS, `waitsFor ${busy}: it has due or running work`);
  }
  if (settings.batch !== null && settings.batch.maxWaitMs > 0) {
    // A batch type gathering for a fuller call (scope/jobs/gathering.ts) is held until then, or until more of it comes
    // due (the dispatcher's `fresh` ends the hold: backoff.ts).
    const until = jobs.gatherUntil(type, d.now());
    if (until !== null) {
      d.backoff.gather(type, until);
      return null;
    }
  }
  const ask = { holder: d.home(), ttlMs: settings.leaseMs * PERMIT_TTL_FACTOR, epoch: d.epoch };
  // A call carries every due job up to batchSize (batchFor); a serialized type one at a time. Due jobs are
  // counted only to ask a guard for no more permits than they need: the claim itself takes what is due.
  let want: number;
  let keys: ReadonlyMap<string, number> | undefined;
  let held: ReadonlyMap<string, Held[]>;
  if (jobs.keyed(type)) {
    const at = d.now();
    const taken = await takeKeyed(
      {
        turns: d.turns,
        type,
        now: at,
        nextDueKey: (after) => jobs.nextDueKey(type, at, after),
        countDue: (key, max) => jobs.countDueOfKey(type, key, at, max),
        take: (key, n) => d.permits.take(permitPlan(d.config, type, key), { ...ask, want: n }),
        // Values whose slots this object still holds from ended attempts go first: no round trip to their pools.
        kept: keyedBases(d.config, type).flatMap((base) => d.permits.keptKeys(base)),
        oneValue: settings.batch !== null,
        perKey: perKeyJobs(d.config, type),
      },
      jobs.serial(type) ? 1 : settings.batchSize,
    );
    if (!taken.ok) return blocked(taken.retryAfterMs, taken.why);
    ({ count: want, keys, held } = taken);
  } else {
    const plan = permitPlan(d.config, type);
    want = jobs.serial(type) ? 1 : plan.length === 0 ? settings.batchSize : Math.max(1, jobs.countDue(type, d.now(), settings.batchSize));
    held = new Map();
    if (plan.length > 0) {
      const taken = await d.permits.take(plan, { ...ask, want });
      if (!taken.ok) return blocked(taken.retryAfterMs, taken.why);
      want = taken.count;
      held = new Map([["", taken.held]]);
    }
  }
  const now = d.now();
  let claimed: { leased: Leased[]; changed: R[] } = { leased: [], changed: [] };
  // An unkeyed type's permits are all under "": every leased job takes the next of them.
  const keyOf = (l: Leased) => (keys ? l.key : "");
  try {
    claimed = jobs.claim(type, want, settings.leaseMs, now, keys);
  } finally {
    // Fewer due than permits (another claim took some), or the claim failed: the rest never start, so their rate spend is refunded.
    for (const u of unusedOf(held, claimed.leased.map(keyOf))) d.permits.release(u.pool, u.ids, true);
  }
  const { leased, changed } = claimed;
  if (leased.length === 0) return null;
  d.backoff.served(type);
  return { type, leased, changed, permits: permitsOf(held, leased.map(keyOf)), leaseMs: settings.leaseMs, binding: settings.binding!, now };
}
