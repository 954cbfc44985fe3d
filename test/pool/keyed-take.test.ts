/**
 * Taking a keyed type's permits value by value (src/pool/keyed-take.ts): each value is asked for no more jobs than
 * its keyed concurrency lets run at once (`perKey`), so a batch's ask reaches as many values as it needs; values
 * this object keeps permits of are asked even while their pool refuses others; a batch type takes one value.
 */
import { describe, expect, it } from "vitest";
import { KeyTurns } from "../../src/pool/key-turns";
import { takeKeyed, type KeyedTakeDeps } from "../../src/pool/keyed-take";

const KEYS = Array.from({ length: 60 }, (_, i) => `k${String(i).padStart(2, "0")}`);

function deps(over: Partial<KeyedTakeDeps> = {}): KeyedTakeDeps & { asked: [string, number][] } {
  const asked: [string, number][] = [];
  return {
    asked,
    turns: new KeyTurns(),
    type: "t",
    now: 1000,
    nextDueKey: (after) => KEYS.find((k) => after === null || k > after) ?? null,
    countDue: (_key, max) => Math.min(10, max),
    take: async (key, want) => {
      asked.push([key, want]);
      return { ok: true, held: [{ pool: `pool:type:t#${key}`, ids: Array.from({ length: Math.min(want, 2) }, (_, i) => `${key}-${i}`) }], count: Math.min(want, 2) };
    },
    ...over,
  };
}

describe("takeKeyed", () => {
  it("asks each value for at most perKey jobs: a batch of 100 under a limit of 2 reaches 50 values", async () => {
    const d = deps({ perKey: 2 });
    const taken = await takeKeyed(d, 100);
    expect(taken).toMatchObject({ ok: true, count: 100 });
    expect(d.asked).toHaveLength(50);
    expect(d.asked.every(([, n]) => n === 2)).toBe(true);
    // Without it, each value is asked for all it has due: ten values fill the ask, and get 2 each.
    const loose = deps();
    expect(await takeKeyed(loose, 100)).toMatchObject({ ok: true, count: 20 });
    expect(loose.asked).toHaveLength(10);
  });

  it("asks a value it keeps permits of even while its pool refuses; a batch type takes one value", async () => {
    const d = deps({ perKey: 2, kept: ["k07"] });
    d.turns.block("t", "k07", 5000, "pool:type:t#k07");
    await takeKeyed(d, 4);
    expect(d.asked[0]).toEqual(["k07", 2]);
    const one = deps({ perKey: 2, oneValue: true });
    expect(await takeKeyed(one, 100)).toMatchObject({ ok: true, count: 2 });
    expect(one.asked).toEqual([["k00", 2]]);
  });
});
