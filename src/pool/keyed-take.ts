/**
 * Taking permits for a keyed type (docs/guards.md "Keyed limits"): its due jobs are grouped by the value their
 * keyed limits count them under, each value's permits are asked of that value's pool objects (in parallel: they
 * are different objects), and the claim then takes up to each value's grant. Values are visited in turn from
 * where the last batch left off (key-turns.ts), so a tenant with a deep backlog cannot starve the others; a value
 * a pool refused is skipped until that pool pokes or its hint passes. Used by the dispatcher (pushed) and the pull
 * claim alike.
 *
 * @module
 */
import type { KeyTurns } from "./key-turns";
import { isKeyedPool } from "./pool-name";
import type { Held, Taken } from "./permit-plan";

/**
 * Key values looked at in turn for one batch, at most (each one index seek): a value at its limit is skipped, and the
 * next batch goes on from the last one looked at; the values a pool's poke freed are asked first, found without one.
 */
export const KEYS_SCANNED = 64;
/** How long a scan that found every due value at its limit stands, at most, before the next one looks again. */
const EXHAUSTED_MAX_MS = 1_000;
/** A scan cut short (KEYS_SCANNED values, all at their limit) goes on from where it stopped this much later. */
const RESCAN_MS = 50;
/** Key values asked of their pools at once. */
const KEYS_IN_PARALLEL = 16;

export interface KeyedTakeDeps {
  turns: KeyTurns;
  type: string;
  now: number;
  /** The first key value after `after` (null: from the start) with due jobs; null: none. */
  nextDueKey(after: string | null): string | null;
  /** Due jobs of one key value, counted up to `max`. */
  countDue(key: string, max: number): number;
  /** Key values this object holds permits of already (kept from ended attempts): asked first, as freed ones are. */
  kept?: readonly string[];
  /** Every permit of the key value's plan for up to `want` jobs (pool/permit-plan.ts takePermits). */
  take(key: string, want: number): Promise<Taken>;
  /** One key value per take: a batch type's call carries the jobs of one value (docs/handlers.md "Batch handlers"). */
  oneValue?: boolean;
  /** Jobs one value may run at once under its configured keyed concurrency (permit-plan.ts perKeyJobs), or null. */
  perKey?: number | null;
}

export type KeyedTaken =
  | { ok: true; count: number; keys: Map<string, number>; held: Map<string, Held[]> }
  /** Nothing granted: `keyed` when only key values' pools refused (each is waited on by itself), not the type's. */
  | { ok: false; retryAfterMs: number; why: string; keyed: boolean };

/** takeKeyed: permits for up to `want` due jobs of a keyed type, key value by key value, in turn. */
export async function takeKeyed(d: KeyedTakeDeps, want: number): Promise<KeyedTaken> {
  const candidates: { key: string; want: number }[] = [];
  let asked = 0;
  let soonest: number | null = null;
  let looked: string | null = null;
  /** `kept`: this object holds permits of the value from ended attempts — asked even while its pool refuses others. */
  const consider = (key: string, kept = false) => {
    if (asked >= want || (d.oneValue && candidates.length > 0) || candidates.some((c) => c.key === key)) return;
    const until = kept ? null : d.turns.blockedUntil(d.type, key, d.now);
    if (until !== null) {
      soonest = Math.min(soonest ?? until, until);
      return;
    }
    const n = d.countDue(key, Math.min(want - asked, d.perKey ?? Infinity));
    if (n === 0) return;
    candidates.push({ key, want: n });
    asked += n;
  };
  for (const key of d.kept ?? []) consider(key, true);
  for (const key of d.turns.takeFreed(d.type)) consider(key);
  // Whether a scan went the whole way round: every due value looked at, none left for want of room.
  let sawAll = false;
  if (asked < want && !(d.oneValue && candidates.length > 0) && d.turns.mayScan(d.type, d.now)) {
    const turn = inTurn(d.nextDueKey, d.turns.lastServed(d.type), KEYS_SCANNED);
    for (let next = turn.next(); ; next = turn.next()) {
      if (next.done) {
        sawAll = next.value;
        break;
      }
      looked = next.value;
      consider(next.value);
      if (asked >= want || (d.oneValue && candidates.length > 0)) break;
    }
  }
  const keys = new Map<string, number>();
  const held = new Map<string, Held[]>();
  // The type's own refusal (an unkeyed pool of its plan: the type waits), else the soonest of its key values'.
  let typeRefusal: { retryAfterMs: number; why: string } | null = null;
  let keyRefusal: { retryAfterMs: number; why: string } | null = null;
  for (let i = 0; i < candidates.length; i += KEYS_IN_PARALLEL) {
    const wave = candidates.slice(i, i + KEYS_IN_PARALLEL);
    const taken = await Promise.all(wave.map((c) => d.take(c.key, c.want)));
    taken.forEach((t, k) => {
      const { key } = wave[k]!;
      if (t.ok) {
        keys.set(key, t.count);
        held.set(key, t.held);
        return;
      }
      const refusal = { retryAfterMs: t.retryAfterMs, why: t.why };
      if (!isKeyedPool(t.pool)) typeRefusal ??= refusal;
      else {
        d.turns.block(d.type, key, d.now + t.retryAfterMs, t.pool);
        if (keyRefusal === null || t.retryAfterMs < keyRefusal.retryAfterMs) keyRefusal = refusal;
      }
    });
  }
  // The turn goes on after the last value looked at in order (a freed value asked first does not move it).
  if (looked !== null) d.turns.served(d.type, looked);
  // A scan that found every value at its limit is not repeated for every poke: until the soonest of their hints (at
  // most a second), or new work of the type (turns.fresh), only the values pokes free are asked.
  // A scan cut short goes on from where it stopped soon after (the turn moved there), not at every poke.
  if (keys.size === 0 && typeRefusal === null) d.turns.exhaust(d.type, sawAll ? Math.min(soonest ?? Infinity, d.now + EXHAUSTED_MAX_MS) : d.now + RESCAN_MS);
  if (keys.size > 0) return { ok: true, count: [...keys.values()].reduce((a, b) => a + b, 0), keys, held };
  const t = typeRefusal as { retryAfterMs: number; why: string } | null;
  if (t) return { ok: false, ...t, keyed: false };
  const k = keyRefusal as { retryAfterMs: number; why: string } | null;
  if (k) return { ok: false, ...k, keyed: true };
  // Every due key value is waiting for its pool: ask again when the first one may be.
  return { ok: false, retryAfterMs: soonest === null ? 1_000 : Math.max(soonest - d.now, 1), why: "every key value with due jobs is at its limit", keyed: true };
}

/**
 * inTurn: the due key values one seek at a time, in key order after `start`, then from the first round to it — at
 * most `max`; its return value says whether it went the whole way round.
 */
function* inTurn(next: (after: string | null) => string | null, start: string | null, max: number): Generator<string, boolean> {
  let cursor = start;
  let wrapped = start === null;
  for (let n = 0; n < max; ) {
    const k = next(cursor);
    if (k === null) {
      if (wrapped) return true;
      wrapped = true;
      cursor = null;
      continue;
    }
    if (wrapped && start !== null && k > start) return true;
    yield k;
    n++;
    cursor = k;
    if (wrapped && k === start) return true;
  }
  return false;
}

/** permitsOf: the i-th leased job of each key value takes the i-th permit of each of its value's pools. */
export function permitsOf(held: ReadonlyMap<string, Held[]>, keys: readonly (string | null)[]): { pool: string; id: string }[][] {
  const used = new Map<string, number>();
  return keys.map((k) => {
    const steps = held.get(k ?? "") ?? [];
    const i = used.get(k ?? "") ?? 0;
    used.set(k ?? "", i + 1);
    return steps.map((h) => ({ pool: h.pool, id: h.ids[i]! }));
  });
}

/** unusedOf: what no leased job took, per pool, to give back (refunded: nothing started with it). */
export function unusedOf(held: ReadonlyMap<string, Held[]>, keys: readonly (string | null)[]): { pool: string; ids: string[] }[] {
  const used = new Map<string, number>();
  for (const k of keys) used.set(k ?? "", (used.get(k ?? "") ?? 0) + 1);
  const out: { pool: string; ids: string[] }[] = [];
  for (const [key, steps] of held) for (const h of steps) out.push({ pool: h.pool, ids: h.ids.slice(used.get(key) ?? 0) });
  return out;
}
