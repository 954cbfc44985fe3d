/**
 * Taking one type's next batch for a handler call (docs/design.md "Push dispatch"): the type is let past its guards
 * as a pull claim lets it (pool/admit.ts: the gathering hold, waitsFor, every permit it needs, outside any
 * transaction), then the claim, in one transaction; what no leased job took goes back refunded. A refusal backs the
 * type off (backoff.ts), and a gathering batch type waits for its call.
 *
 * @module
 */
import type { QueueConfig } from "../config/schema";
import { admit, claimGranted } from "../pool/admit";
import type { KeyTurns } from "../pool/key-turns";
import { permitsOf } from "../pool/keyed-take";
import { keyedBases, PERMIT_TTL_FACTOR } from "../pool/permit-plan";
import type { TypeBackoff } from "./backoff";
import type { Permit, PermitLedger } from "./permit-ledger";
import type { Leased, ScopePort } from "./scope-port";

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
  const serial = jobs.serial(type);
  const ask = { holder: d.home(), ttlMs: settings.leaseMs * PERMIT_TTL_FACTOR, epoch: d.epoch };
  // A call carries every due job up to batchSize (batchFor); a serialized type one at a time. Due jobs are
  // counted only to ask a guard for no more permits than they need: the claim itself takes what is due.
  const admitted = await admit(
    {
      config: d.config,
      now: () => d.now(),
      turns: d.turns,
      countDue: (t, now, max) => jobs.countDue(t, now, max),
      gatherUntil: (t, now) => jobs.gatherUntil(t, now),
      busyHere: (types, now) => jobs.busyHere(types, now),
      busyType: (types) => d.busyType(types),
      keyed: (t) => jobs.keyed(t),
      nextDueKey: (t, now, after) => jobs.nextDueKey(t, now, after),
      countDueOfKey: (t, key, now, max) => jobs.countDueOfKey(t, key, now, max),
      // Values whose slots this object still holds from ended attempts go first: no round trip to their pools.
      kept: (t) => keyedBases(d.config, t).flatMap((base) => d.permits.keptKeys(base)),
      take: (plan, want) => d.permits.take(plan, { ...ask, want }),
    },
    { type, limit: serial ? 1 : settings.batchSize, count: serial ? "never" : "for-permits", oneValue: settings.batch !== null },
  );
  if (!admitted.ok) {
    // A batch type gathering for a fuller call waits until then, or until more of it comes due (the dispatcher's `fresh` ends the hold: backoff.ts).
    if ("gatherUntil" in admitted) d.backoff.gather(type, admitted.gatherUntil);
    else if ("retryAfterMs" in admitted) d.backoff.blocked(type, admitted.retryAfterMs, admitted.why, epoch);
    return null;
  }
  const { want, keys, held } = admitted;
  const now = d.now();
  let changed: R[] = [];
  // An unkeyed type's permits are all under "": every leased job takes the next of them.
  const keyOf = (l: Leased) => (keys ? (l.key ?? "") : "");
  const leased = claimGranted(
    new Map([[type, held]]),
    () => {
      const claimed = jobs.claim(type, want, settings.leaseMs, now, keys);
      changed = claimed.changed;
      return claimed.leased;
    },
    (l) => ({ type, key: keyOf(l) }),
    (pool, ids) => d.permits.release(pool, ids, true),
  );
  if (leased.length === 0) return null;
  d.backoff.served(type);
  return { type, leased, changed, permits: permitsOf(held, leased.map(keyOf)), leaseMs: settings.leaseMs, binding: settings.binding!, now };
}
