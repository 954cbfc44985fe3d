/**
 * pull-worker/slots.ts: places taken and given back, a completion's slot handed back
 * early while its attempt is still unanswered, and the loop's wait for a place.
 */
import { describe, expect, it } from "vitest";
import { Slots } from "../../../src/pull-worker/slots";

const attempt = (id: string) => ({ job: { id } });

describe("Slots", () => {
  it("counts free places; a handed-off attempt frees its place but stays unanswered until it ends", () => {
    const slots = new Slots<ReturnType<typeof attempt>>(3);
    const [a, b] = [attempt("a"), attempt("b")];
    slots.take(a);
    slots.take(b);
    expect(slots.free).toBe(1);
    slots.handOff(a);
    expect(slots.free).toBe(2);
    expect(slots.holding()).toEqual([b]);
    expect(slots.unanswered()).toEqual([b, a]);
    slots.end(a);
    expect(slots.unanswered()).toEqual([b]);
  });

  it("an old attempt ending never frees the place a newer lease of the same job holds", () => {
    const slots = new Slots<ReturnType<typeof attempt>>(2);
    const [old, newer] = [attempt("j"), attempt("j")];
    slots.take(old);
    slots.take(newer);
    slots.end(old);
    expect(slots.holding()).toEqual([newer]);
    expect(slots.free).toBe(1);
  });

  it("untilFree resolves when a place goes back, or on wake(); waiting says whether someone waits", async () => {
    const slots = new Slots<ReturnType<typeof attempt>>(1);
    const a = attempt("a");
    slots.take(a);
    expect(slots.waiting).toBe(false);
    let freed = false;
    const waited = slots.untilFree().then(() => (freed = true));
    expect(slots.waiting).toBe(true);
    await Promise.resolve();
    expect(freed).toBe(false);
    slots.end(a);
    await waited;
    expect(slots.waiting).toBe(false);

    const woken = slots.untilFree();
    slots.wake();
    await woken;
    expect(slots.waiting).toBe(false);
  });
});
