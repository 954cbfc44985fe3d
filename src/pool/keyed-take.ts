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

/** Key values looked at for one batch, at most (each one index seek). */
export const KEYS_SCANNED = 256;
/** Key values asked of their pools at once. */
const KEYS_IN_PARALLEL = 16;

export interface KeyedTakeDeps {
  turns: KeyTurns;
  type: string;
  now: number;
  /** Up to `max` key values with due jobs, in key order after `after`, then from the start round to it. */
  dueKeys(after: string | null, max: number): string[];
  /** Due jobs of one key value, counted up to `max`. */
  countDue(key: string, max: number): number;
  /** Every permit of the key value's plan for up to `want` jobs (pool/permit-plan.ts takePermits). */
  take(key: string, want: number): Promise<Taken>;
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
  for (const key of d.dueKeys(d.turns.lastServed(d.type), KEYS_SCANNED)) {
    if (asked >= want) break;
    const until = d.turns.blockedUntil(d.type, key, d.now);
    if (until !== null) {
      soonest = Math.min(soonest ?? until, until);
      continue;
    }
    const n = d.countDue(key, want - asked);
    if (n === 0) continue;
    candidates.push({ key, want: n });
    asked += n;
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
  const last = candidates.at(-1);
  if (last) d.turns.served(d.type, last.key);
  if (keys.size > 0) return { ok: true, count: [...keys.values()].reduce((a, b) => a + b, 0), keys, held };
  const t = typeRefusal as { retryAfterMs: number; why: string } | null;
  if (t) return { ok: false, ...t, keyed: false };
  const k = keyRefusal as { retryAfterMs: number; why: string } | null;
  if (k) return { ok: false, ...k, keyed: true };
  // Every due key value is waiting for its pool: ask again when the first one may be.
  return { ok: false, retryAfterMs: soonest === null ? 1_000 : Math.max(soonest - d.now, 1), why: "every key value with due jobs is at its limit", keyed: true };
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
