/**
 * TypeBackoff alone (src/dispatch/backoff.ts): a push type refused by a guard
 * waits until the pool's hint, an unblock forgets every back-off, a refusal
 * asked before an unblock does not back the type off again, and a run of
 * refusals logs `job:starving` at STARVING_AFTER, then every STARVING_EVERY.
 */
import { afterEach, beforeEach, describe, expect, it, vi, type MockInstance } from "vitest";
import { STARVING_AFTER, STARVING_EVERY, TypeBackoff } from "../../src/dispatch/backoff";

const T0 = Date.UTC(2030, 0, 1);

function backoff() {
  const clock = { now: T0 };
  const b = new TypeBackoff(() => clock.now, () => "scope:Tenant:a");
  return { b, clock };
}

describe("TypeBackoff: the back-off", () => {
  it("a refusal backs the type off until now + retryAfterMs; at that moment it may be asked again", () => {
    const { b, clock } = backoff();
    expect(b.blockedUntil("t")).toBeUndefined();
    expect(b.isBlocked("t", T0)).toBe(false);
    clock.now = T0 + 5;
    b.blocked("t", 1_000, "pool p is full", b.epoch);
    expect(b.blockedUntil("t")).toBe(T0 + 1_005);
    expect(b.isBlocked("t", T0 + 1_004)).toBe(true);
    expect(b.isBlocked("t", T0 + 1_005)).toBe(false);
  });

  it("types are backed off one by one", () => {
    const { b } = backoff();
    b.blocked("a", 1_000, "full", b.epoch);
    expect(b.isBlocked("a", T0)).toBe(true);
    expect(b.isBlocked("b", T0)).toBe(false);
    expect(b.blockedUntil("b")).toBeUndefined();
  });

  it("the latest refusal's hint wins, shorter or longer", () => {
    const { b } = backoff();
    b.blocked("t", 5_000, "full", b.epoch);
    b.blocked("t", 100, "full", b.epoch);
    expect(b.blockedUntil("t")).toBe(T0 + 100);
    b.blocked("t", 2_000, "full", b.epoch);
    expect(b.blockedUntil("t")).toBe(T0 + 2_000);
  });

  it("unblock forgets every type's back-off and moves the epoch on", () => {
    const { b } = backoff();
    const epoch = b.epoch;
    b.blocked("a", 1_000, "full", epoch);
    b.blocked("b", 1_000, "full", epoch);
    b.unblock();
    expect(b.epoch).toBe(epoch + 1);
    expect(b.blockedUntil("a")).toBeUndefined();
    expect(b.isBlocked("a", T0)).toBe(false);
    expect(b.isBlocked("b", T0)).toBe(false);
  });

  it("a refusal asked before an unblock arrived does not back the type off again; one asked after it does", () => {
    const { b } = backoff();
    const asked = b.epoch; // the pool call leaves…
    b.unblock(); // …a poke arrives while it is on its way…
    b.blocked("t", 5_000, "full", asked); // …and then the refusal lands
    expect(b.isBlocked("t", T0)).toBe(false);
    b.blocked("t", 5_000, "full", b.epoch);
    expect(b.isBlocked("t", T0)).toBe(true);
  });
});

describe("TypeBackoff: starvation warnings", () => {
  let warn: MockInstance<(...args: unknown[]) => void>;
  beforeEach(() => {
    warn = vi.spyOn(console, "warn").mockImplementation(() => undefined);
  });
  afterEach(() => warn.mockRestore());
  const starving = () => warn.mock.calls.map((c) => JSON.parse(String(c[0]))).filter((l) => l.event === "job:starving");

  it(`warns at the ${STARVING_AFTER}th refusal in a row, then at every ${STARVING_EVERY} more, naming the type, home and blocker`, () => {
    const { b } = backoff();
    for (let i = 1; i < STARVING_AFTER; i++) b.blocked("t", 0, "pool p is full", b.epoch);
    expect(starving()).toHaveLength(0);
    b.blocked("t", 0, "pool p is full", b.epoch);
    expect(starving()).toEqual([{ event: "job:starving", type: "t", home: "scope:Tenant:a", blockedTimes: STARVING_AFTER, blockedBy: "pool p is full" }]);
    for (let i = 0; i < STARVING_EVERY - 1; i++) b.blocked("t", 0, "pool p is full", b.epoch);
    expect(starving()).toHaveLength(1);
    b.blocked("t", 0, "the concurrency of t is full", b.epoch);
    expect(starving()).toHaveLength(2);
    expect(starving()[1]).toMatchObject({ blockedTimes: STARVING_AFTER + STARVING_EVERY, blockedBy: "the concurrency of t is full" });
    for (let i = 0; i < STARVING_EVERY; i++) b.blocked("t", 0, "full", b.epoch);
    expect(starving().map((l) => l.blockedTimes)).toEqual([STARVING_AFTER, STARVING_AFTER + STARVING_EVERY, STARVING_AFTER + 2 * STARVING_EVERY]);
  });

  it("refusals count per type, and those asked before an unblock count too (the type is still not getting a batch)", () => {
    const { b } = backoff();
    for (let i = 0; i < STARVING_AFTER - 1; i++) b.blocked("a", 0, "full", b.epoch);
    b.blocked("b", 0, "full", b.epoch);
    expect(starving()).toHaveLength(0);
    const asked = b.epoch;
    b.unblock();
    b.blocked("a", 0, "full", asked);
    expect(starving()).toEqual([expect.objectContaining({ type: "a", blockedTimes: STARVING_AFTER })]);
  });

  it("a batch served ends the run: the count starts again from one", () => {
    const { b } = backoff();
    for (let i = 0; i < STARVING_AFTER - 1; i++) b.blocked("t", 0, "full", b.epoch);
    b.served("t");
    for (let i = 0; i < STARVING_AFTER - 1; i++) b.blocked("t", 0, "full", b.epoch);
    expect(starving()).toHaveLength(0);
    b.blocked("t", 0, "full", b.epoch);
    expect(starving()).toEqual([expect.objectContaining({ blockedTimes: STARVING_AFTER })]);
  });
});
