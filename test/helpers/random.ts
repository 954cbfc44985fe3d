import { env } from "cloudflare:workers";

const knob = (name: string): string => String((env as unknown as Record<string, unknown>)[name] ?? "").trim();

/**
 * The seeds a randomized suite runs: its fixed ones, plus CHAOS_SEEDS more
 * (a count: the next seeds after `base`), or exactly the listed ones
 * (CHAOS_SEEDS=7,42 replays a failure).
 */
export function chaosSeeds(fixed: number[], base: number): number[] {
  const v = knob("CHAOS_SEEDS");
  if (!v) return fixed;
  if (v.includes(",")) return v.split(",").map(Number).filter(Number.isFinite);
  const extra = Number(v);
  return Number.isInteger(extra) && extra > 0 ? [...fixed, ...Array.from({ length: extra }, (_, i) => base + i)] : fixed;
}

/** fast-check runs and seed for the fuzz suite (FUZZ_RUNS, FUZZ_SEED), or its defaults. */
export function fuzzSettings(runs: number, seed: number): { runs: number; seed: number } {
  const r = Number(knob("FUZZ_RUNS"));
  const s = Number(knob("FUZZ_SEED"));
  return { runs: Number.isInteger(r) && r > 0 ? r : runs, seed: knob("FUZZ_SEED") && Number.isInteger(s) ? s : seed };
}

/** A small seeded PRNG (mulberry32), so a failing randomized run can be replayed from its seed. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function pick<T>(rand: () => number, items: readonly T[]): T | undefined {
  return items.length ? items[Math.floor(rand() * items.length)] : undefined;
}

export function int(rand: () => number, lo: number, hi: number): number {
  return lo + Math.floor(rand() * (hi - lo + 1));
}
