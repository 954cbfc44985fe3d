/**
 * The dispatcher alone, deterministic: an in-memory scope (the ScopePort it
 * is given in production by scope/push/dispatch-port.ts), a handler whose calls
 * the test ends, and fake timers. No object, no SQLite, no sleeping.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { parseConfig } from "../../src/config/load";
import type { AbortNotice, BatchControlApi, DispatchBatch, HandlerEntrypoint, HandlerOutcome } from "../../src/job/handler-contract";
import { WAITS_FOR_RETRY_MS } from "../../src/pool/admit";
import { Dispatcher, INVOCATIONS_PER_EVENT, MAX_CALLS_IN_FLIGHT } from "../../src/dispatch/dispatcher";
import type { PoolApi } from "../../src/pool/permit-plan";
import type { Leased, ScopePort } from "../../src/dispatch/scope-port";

type Settled = { id: string; outcome: HandlerOutcome };

/** FakeScope: jobs in memory, leased and settled the way the port promises. */
class FakeScope implements ScopePort<Settled> {
  jobs: { id: string; type: string; state: "pending" | "running" | "done"; token: string | null; timeoutMs: number | null }[] = [];
  settled: Settled[] = [];
  renewAnswer: ReturnType<ScopePort<Settled>["renew"]> = { ok: true };
  renewed = 0;
  private n = 0;

  add(type: string, count: number, timeoutMs: number | null = null): void {
    for (let i = 0; i < count; i++) this.jobs.push({ id: `${type}-${this.n++}`, type, state: "pending", token: null, timeoutMs });
  }
  dueTypes(): string[] {
    return [...new Set(this.jobs.filter((j) => j.state === "pending").map((j) => j.type))];
  }
  countDue(type: string, _now: number, max: number): number {
    return Math.min(max, this.jobs.filter((j) => j.type === type && j.state === "pending").length);
  }
  gatherUntil(): number | null {
    return null;
  }
  serial(): boolean {
    return false;
  }
  busyHere(): string | null {
    return null;
  }
  claim(type: string, limit: number, _leaseMs: number, now: number): { leased: Leased[]; changed: Settled[] } {
    const leased = this.jobs
      .filter((j) => j.type === type && j.state === "pending")
      .slice(0, limit)
      .map((j) => {
        j.state = "running";
        j.token = `${j.id}:${this.n++}`;
        return {
          id: j.id,
          token: j.token,
          timeoutAt: j.timeoutMs === null ? null : now + j.timeoutMs,
          key: null,
          job: { id: j.id, type, payloadJson: "{}", attempt: 1, maxAttempts: 3, scope: null, runAt: now, scheduledFor: null },
        };
      });
    return { leased, changed: [] };
  }
  // Keyed types' claims are tested against the real object (test/scope/keyed-limits.test.ts).
  keyed(): boolean {
    return false;
  }
  nextDueKey(): string | null {
    return null;
  }
  countDueOfKey(): number {
    return 0;
  }
  settle(items: readonly { id: string; token: string; outcome: HandlerOutcome }[]): Settled[] {
    const out: Settled[] = [];
    for (const { id, token, outcome } of items) {
      const j = this.jobs.find((x) => x.id === id);
      if (!j || j.token !== token || j.state !== "running") continue;
      j.state = "done";
      j.token = null;
      out.push({ id, outcome });
    }
    this.settled.push(...out);
    return out;
  }
  renew() {
    this.renewed++;
    return this.renewAnswer;
  }
  journal() {
    return [];
  }
}

/** FakeHandler: each run() waits until the test ends it (or answers at once when `auto`). */
class FakeHandler implements HandlerEntrypoint {
  calls: { batch: DispatchBatch; control: BatchControlApi; end: (answer?: unknown) => void }[] = [];
  auto = false;

  async run(batch: DispatchBatch, control: BatchControlApi): Promise<never> {
    void control.next(); // as the SDK does first: the call reached the handler
    const answer = await new Promise<unknown>((resolve) => {
      const end = (a?: unknown) => resolve(a ?? batch.jobs.map((j) => ({ id: j.id, kind: "completed" })));
      this.calls.push({ batch, control, end });
      if (this.auto) end();
    });
    return answer as never;
  }
}

const noPools: (name: string) => PoolApi = () => {
  throw new Error("no pools in these tests");
};

function setup(types: Record<string, object>, more: { invocationsPerCall?: number; busyType?: (t: string[]) => Promise<string | null> } = {}) {
  const config = parseConfig({ types: Object.fromEntries(Object.entries(types).map(([t, s]) => [t, { binding: "H", ...s }])) });
  const scope = new FakeScope();
  const handler = new FakeHandler();
  const changed: number[] = [];
  let reaps = 0;
  let now = 1_000_000;
  const dispatcher = new Dispatcher<Settled>({
    jobs: scope,
    config,
    now: () => now,
    home: () => "scope:Test:1",
    handler: () => handler,
    pool: noPools,
    keepAlive: () => {},
    invocationsPerCall: more.invocationsPerCall ?? 1,
    changed: async (rows) => void changed.push(rows.length),
    reapNow: async () => void reaps++,
    busyType: more.busyType ?? (async () => null),
  });
  return { config, scope, handler, dispatcher, advance: (ms: number) => (now += ms), now: () => now, reaps: () => reaps };
}

/** flush: let every settled promise run (the calls' continuations), and the zero-delay timers (faked as 1 ms). */
const flush = async () => {
  for (let i = 0; i < 20; i++) await Promise.resolve();
  await vi.advanceTimersByTimeAsync(1);
};

describe("the dispatcher (in-memory scope, fake timers)", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("a lone due job goes alone; a backlog goes in calls of batchSize (100), the rest in one", async () => {
    const t = setup({ t: {} });
    t.handler.auto = true;
    t.scope.add("t", 1);
    await t.dispatcher.fill(t.dispatcher.newOrigin());
    await flush();
    t.scope.add("t", 250);
    await t.dispatcher.fill(t.dispatcher.newOrigin());
    await flush();
    expect(t.handler.calls.map((c) => c.batch.jobs.length)).toEqual([1, 100, 100, 50]);
    expect(t.scope.settled).toHaveLength(251);
  });

  it(`at most ${MAX_CALLS_IN_FLIGHT} calls in flight; a call that returns makes room for the next`, async () => {
    const t = setup({ t: { batchSize: 1 } });
    t.scope.add("t", 20);
    await t.dispatcher.fill(t.dispatcher.newOrigin());
    expect(t.handler.calls).toHaveLength(MAX_CALLS_IN_FLIGHT);
    // Full: nothing for the alarm to do until a call returns.
    expect(t.dispatcher.wakeAt(t.now())).toBeNull();
    t.handler.calls[0]!.end();
    await flush();
    expect(t.handler.calls).toHaveLength(MAX_CALLS_IN_FLIGHT + 1);
    expect(t.scope.settled.map((s) => s.id)).toEqual([t.handler.calls[0]!.batch.jobs[0]!.id]);
  });

  it(`one event starts calls within its share of ${INVOCATIONS_PER_EVENT} invocations; the next event goes on`, async () => {
    // With an observer, a call may cost its event 4 invocations: 7 calls fit in 30.
    const t = setup({ t: { batchSize: 1 } }, { invocationsPerCall: 4 });
    t.scope.add("t", 12);
    await t.dispatcher.fill(t.dispatcher.newOrigin());
    expect(t.handler.calls).toHaveLength(7);
    // Due work is left: the alarm is asked for now, and its event (a new origin) starts the rest.
    expect(t.dispatcher.wakeAt(t.now())).toBe(t.now());
    await t.dispatcher.fill(t.dispatcher.newOrigin());
    expect(t.handler.calls).toHaveLength(12);
  });

  it("a late outcome is ignored: a job cancelled mid-call is aborted, and what its call says of it later changes nothing", async () => {
    const t = setup({ t: {} });
    t.scope.add("t", 2);
    await t.dispatcher.fill(t.dispatcher.newOrigin());
    const [call] = t.handler.calls;
    const [a, b] = call!.batch.jobs;
    const notice = call!.control.next();
    t.dispatcher.cancelled(a!.id);
    expect(await notice).toEqual<AbortNotice>({ id: a!.id, reason: "cancelled" });
    call!.end([
      { id: a!.id, kind: "completed" },
      { id: b!.id, kind: "completed" },
    ]);
    await flush();
    expect(t.scope.settled.map((s) => s.id)).toEqual([b!.id]);
  });

  it("a job's timeoutMs aborts it in the handler (reason timeout) and asks for a reap; its late answer is ignored", async () => {
    const t = setup({ t: {} });
    t.scope.add("t", 1, 1_000);
    await t.dispatcher.fill(t.dispatcher.newOrigin());
    const [call] = t.handler.calls;
    const notice = call!.control.next();
    await vi.advanceTimersByTimeAsync(1_001);
    expect(await notice).toEqual<AbortNotice>({ id: call!.batch.jobs[0]!.id, reason: "timeout" });
    await flush(); // the reap is asked for once, after every timeout of that moment
    expect(t.reaps()).toBe(1);
    call!.end();
    await flush();
    expect(t.scope.settled).toEqual([]);
  });

  it("leases are renewed every third of the lease while a call runs; one the scope will not renew aborts its job", async () => {
    const t = setup({ t: { leaseMs: 3_000 } });
    t.scope.add("t", 1);
    await t.dispatcher.fill(t.dispatcher.newOrigin());
    const [call] = t.handler.calls;
    await vi.advanceTimersByTimeAsync(1_000);
    expect(t.scope.renewed).toBe(1);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(t.scope.renewed).toBe(2);
    t.scope.renewAnswer = { ok: false, reason: "lease_lost" };
    const notice = call!.control.next();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(await notice).toEqual<AbortNotice>({ id: call!.batch.jobs[0]!.id, reason: "lease_lost" });
  });

  it("waitsFor: a type whose awaited type is busy backs off (the alarm comes back then), and a pool's poke lifts it", async () => {
    let busy: string | null = "other";
    const t = setup({ t: { waitsFor: ["other"] }, other: {} }, { busyType: async () => busy });
    t.scope.add("t", 1);
    await t.dispatcher.fill(t.dispatcher.newOrigin());
    expect(t.handler.calls).toHaveLength(0);
    expect(t.dispatcher.wakeAt(t.now())).toBe(t.now() + WAITS_FOR_RETRY_MS);
    busy = null;
    t.dispatcher.unblock();
    expect(t.dispatcher.wakeAt(t.now())).toBe(t.now());
    await t.dispatcher.fill(t.dispatcher.newOrigin());
    expect(t.handler.calls).toHaveLength(1);
  });
});
