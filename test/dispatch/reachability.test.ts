/**
 * Reachability alone (src/dispatch/reachability.ts): a call that never reached
 * the handler's code makes its jobs wait as long as the binding has been
 * unreachable (1 s at least, a minute at most), and the outage is logged once
 * when it begins and once when a call gets through again — per binding, not
 * per job or call.
 */
import { afterEach, beforeEach, describe, expect, it, vi, type MockInstance } from "vitest";
import { Reachability } from "../../src/dispatch/reachability";

const T0 = Date.UTC(2030, 0, 1);

describe("Reachability", () => {
  let error: MockInstance<(...args: unknown[]) => void>;
  let log: MockInstance<(...args: unknown[]) => void>;
  const clock = { now: T0 };
  let r: Reachability;
  beforeEach(() => {
    error = vi.spyOn(console, "error").mockImplementation(() => undefined);
    log = vi.spyOn(console, "log").mockImplementation(() => undefined);
    clock.now = T0;
    r = new Reachability(() => "scope:Tenant:a", () => clock.now);
  });
  afterEach(() => {
    error.mockRestore();
    log.mockRestore();
  });
  const lines = (spy: MockInstance<(...args: unknown[]) => void>, event: string) => spy.mock.calls.map((c) => JSON.parse(String(c[0]))).filter((l) => l.event === event);

  it("the wait grows with the outage: 1 s at first, then as long as it has lasted, never more than a minute", () => {
    expect(r.unreachable("DOWN", "connection refused")).toBe(1_000);
    clock.now = T0 + 400;
    expect(r.unreachable("DOWN", "connection refused")).toBe(1_000);
    clock.now = T0 + 7_500;
    expect(r.unreachable("DOWN", "connection refused")).toBe(7_500);
    clock.now = T0 + 60_000;
    expect(r.unreachable("DOWN", "connection refused")).toBe(60_000);
    clock.now = T0 + 3_600_000;
    expect(r.unreachable("DOWN", "connection refused")).toBe(60_000);
  });

  it("logs the outage once when it begins, naming the binding, home and error; not again for each call", () => {
    r.unreachable("DOWN", "connection refused");
    clock.now = T0 + 2_000;
    r.unreachable("DOWN", "another error");
    r.unreachable("DOWN", "another error");
    expect(lines(error, "dispatch:handler_unreachable")).toEqual([
      { event: "dispatch:handler_unreachable", binding: "DOWN", home: "scope:Tenant:a", error: "connection refused" },
    ]);
  });

  it("a call that gets through ends the outage: said once, with how many calls failed and for how long", () => {
    r.unreachable("DOWN", "x");
    clock.now = T0 + 1_500;
    r.unreachable("DOWN", "x");
    clock.now = T0 + 4_000;
    r.reached("DOWN");
    r.reached("DOWN");
    expect(lines(log, "dispatch:handler_reachable")).toEqual([
      { event: "dispatch:handler_reachable", binding: "DOWN", home: "scope:Tenant:a", failedCalls: 2, outageMs: 4_000 },
    ]);
  });

  it("reaching a binding that was never down says nothing", () => {
    r.reached("UP");
    expect(log).not.toHaveBeenCalled();
    expect(error).not.toHaveBeenCalled();
  });

  it("after an outage ends, the next one starts afresh: logged again, its wait back to 1 s", () => {
    r.unreachable("DOWN", "x");
    clock.now = T0 + 30_000;
    expect(r.unreachable("DOWN", "x")).toBe(30_000);
    r.reached("DOWN");
    clock.now = T0 + 40_000;
    expect(r.unreachable("DOWN", "again")).toBe(1_000);
    expect(lines(error, "dispatch:handler_unreachable").map((l) => l.error)).toEqual(["x", "again"]);
    clock.now = T0 + 41_000;
    r.reached("DOWN");
    expect(lines(log, "dispatch:handler_reachable").at(-1)).toMatchObject({ failedCalls: 1, outageMs: 1_000 });
  });

  it("each binding has its own outage", () => {
    r.unreachable("A", "x");
    clock.now = T0 + 20_000;
    expect(r.unreachable("B", "y")).toBe(1_000);
    expect(r.unreachable("A", "x")).toBe(20_000);
    r.reached("A");
    clock.now = T0 + 25_000;
    expect(r.unreachable("B", "y")).toBe(5_000);
    expect(lines(error, "dispatch:handler_unreachable").map((l) => l.binding)).toEqual(["A", "B"]);
    expect(lines(log, "dispatch:handler_reachable").map((l) => l.binding)).toEqual(["A"]);
  });
});
