/**
 * Flights alone (src/dispatch/flights.ts): one flight per job, holding its
 * lease token for the call running it. A new flight for the job replaces (and
 * returns) the old one, whose timer stops; a timeout fires just after the
 * job's timeoutMs, and only while the flight is still the job's; `heldBy`
 * answers only for the same call and token. Fake timers, no object.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { Flights, type Flight } from "../../src/dispatch/flights";

const T0 = Date.UTC(2030, 0, 1);
type Call = { name: string };
const callA: Call = { name: "a" };
const callB: Call = { name: "b" };

describe("Flights", () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: T0 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("take holds the job for the call under its token; get, heldBy, all and size see it", () => {
    const f = new Flights<Call>();
    expect(f.take("j1", "tok1", callA, null, T0, () => undefined)).toBeUndefined();
    f.take("j2", "tok2", callA, null, T0, () => undefined);
    expect(f.size).toBe(2);
    expect(f.get("j1")).toMatchObject({ id: "j1", token: "tok1", call: callA });
    expect(f.all().map((x) => x.id).sort()).toEqual(["j1", "j2"]);
    expect(f.heldBy("j1", callA, "tok1")).toBe(f.get("j1"));
    expect(f.get("nope")).toBeUndefined();
  });

  it("heldBy answers nothing for another call, another token, or a job it does not hold", () => {
    const f = new Flights<Call>();
    f.take("j1", "tok1", callA, null, T0, () => undefined);
    expect(f.heldBy("j1", callB, "tok1")).toBeUndefined();
    expect(f.heldBy("j1", callA, "tok0")).toBeUndefined();
    expect(f.heldBy("j9", callA, "tok1")).toBeUndefined();
  });

  it("a second flight for the job replaces the first and returns it; the old call no longer holds the job", () => {
    const f = new Flights<Call>();
    f.take("j1", "tok1", callA, null, T0, () => undefined);
    const first = f.get("j1")!;
    const stale = f.take("j1", "tok2", callB, null, T0, () => undefined);
    expect(stale).toBe(first);
    expect(f.size).toBe(1);
    expect(f.heldBy("j1", callA, "tok1")).toBeUndefined();
    expect(f.heldBy("j1", callB, "tok2")).toMatchObject({ token: "tok2" });
  });

  it("dropping a replaced flight leaves the job's live flight in place", () => {
    const f = new Flights<Call>();
    f.take("j1", "tok1", callA, null, T0, () => undefined);
    const stale = f.take("j1", "tok2", callB, null, T0, () => undefined)!;
    f.drop(stale);
    expect(f.get("j1")).toMatchObject({ token: "tok2", call: callB });
    f.drop(f.get("j1")!);
    expect(f.get("j1")).toBeUndefined();
    expect(f.size).toBe(0);
  });

  it("the timeout fires just after timeoutAt (by the clock given), with the flight", () => {
    const f = new Flights<Call>();
    const fired: Flight<Call>[] = [];
    f.take("j1", "tok1", callA, T0 + 1_000, T0, (x) => fired.push(x));
    vi.advanceTimersByTime(1_000);
    expect(fired).toHaveLength(0);
    vi.advanceTimersByTime(1);
    expect(fired).toEqual([f.get("j1")]);
  });

  it("timeoutAt is counted from the `now` given, not from the timer clock", () => {
    const f = new Flights<Call>();
    const fired: string[] = [];
    // The object's clock is 10 s ahead of the timers': 500 ms remain of the job's timeout.
    f.take("j1", "tok1", callA, T0 + 10_500, T0 + 10_000, (x) => fired.push(x.id));
    vi.advanceTimersByTime(500);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(fired).toEqual(["j1"]);
  });

  it("no timer without a timeout", () => {
    const f = new Flights<Call>();
    const onTimeout = vi.fn();
    f.take("j1", "tok1", callA, null, T0, onTimeout);
    expect(f.get("j1")!.timer).toBeNull();
    vi.advanceTimersByTime(24 * 3600_000);
    expect(onTimeout).not.toHaveBeenCalled();
  });

  it("a dropped flight's timeout never fires", () => {
    const f = new Flights<Call>();
    const onTimeout = vi.fn();
    f.take("j1", "tok1", callA, T0 + 1_000, T0, onTimeout);
    f.drop(f.get("j1")!);
    vi.advanceTimersByTime(5_000);
    expect(onTimeout).not.toHaveBeenCalled();
  });

  it("a replaced flight's timeout never fires; the new flight's does, for the new flight", () => {
    const f = new Flights<Call>();
    const fired: string[] = [];
    f.take("j1", "tok1", callA, T0 + 1_000, T0, (x) => fired.push(x.token));
    f.take("j1", "tok2", callB, T0 + 3_000, T0, (x) => fired.push(x.token));
    vi.advanceTimersByTime(2_000);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(1_001);
    expect(fired).toEqual(["tok2"]);
  });
});
