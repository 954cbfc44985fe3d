/**
 * pull-worker/attempt.ts on vitest's fake clock, with a stand-in `Call`: one job's
 * handler run, what each outcome writes (its lines first), the journal's
 * answers, and the fence — once the lease is lost or the job given back,
 * nothing more is written for it.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { JobContext, WorkerHandlers } from "../../../src/runtime/context";
import { JobAbortedError, NondeterminismError, RetryableJobError, SnoozeJobError, TerminalJobError } from "../../../src/runtime/errors";
import { codeVersion } from "../../../src/runtime/code-version";
import { Attempt, type AttemptDeps } from "../../../src/pull-worker/attempt";
import { fakeCall, leasedJob, refusal, type CallMade } from "./fake-queue-api";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

function start(handler: WorkerHandlers[string], answer: (c: CallMade) => unknown = () => ({}), more: Partial<AttemptDeps> = {}) {
  const { call, calls } = fakeCall(answer);
  const said: string[] = [];
  const lines: Record<string, unknown>[] = [];
  const deps: AttemptDeps = {
    call,
    handlers: { t: handler },
    env: undefined,
    leaseMs: 6_000,
    renewEveryMs: 2_000,
    log: (l) => lines.push(l),
    complete: async (a, result, logs) => void said.push(`complete ${a.job.id} ${JSON.stringify(result)} ${JSON.stringify(logs ?? null)}`),
    ended: (a) => void said.push(`ended ${a.job.id}`),
    ...more,
  };
  const a = new Attempt(leasedJob("j", "t", Date.now(), 6_000), Date.now(), deps);
  const writes = () => calls.filter((c) => !c.path.endsWith("/heartbeat")).map((c) => `${c.path.replace("/v1/jobs/j/", "")} ${JSON.stringify({ ...c.body, leaseToken: undefined })}`);
  return { a, calls, said, lines, writes };
}

describe("Attempt: outcomes", () => {
  it("a result goes to complete() with the attempt's lines; then the attempt has ended", async () => {
    const { a, said, writes } = start(async (_p, ctx) => (ctx.log("hi"), { ok: true }));
    await a.done;
    expect(said).toEqual([`complete j {"ok":true} [{"at":${Date.now()},"attempt":1,"message":"hi","fields":{}}]`, "ended j"]);
    expect(writes()).toEqual([]);
  });

  it.each([
    ["an error: a retry", () => new Error("boom"), [`fail {"error":"boom"}`], "retry"],
    ["RetryableJobError with retryAfterMs", () => new RetryableJobError("later", { retryAfterMs: 5_000 }), [`fail {"error":"later","retryAfterMs":5000}`], "retry"],
    ["TerminalJobError: failed for good", () => new TerminalJobError("no"), [`fail {"error":"no","fatal":true}`], "failed"],
    ["SnoozeJobError: again later, the attempt not counted", () => new SnoozeJobError(7_000), [`fail {"error":"snoozed","retryAfterMs":7000,"consumesAttempt":false,"snooze":true}`], null],
  ])("%s: its lines go first, then the fail; onError hears errors", async (_name, error, expected, kind) => {
    const heard: string[] = [];
    const { a, writes } = start(
      async (_p, ctx) => {
        ctx.log("trying");
        throw error();
      },
      () => ({}),
      { onError: (e, job, k) => heard.push(`${k} ${job.id} ${e}`) },
    );
    await a.done;
    // A thrown error's fail carries its stack's first frame (its error group: docs/operating.md "Error groups").
    const frameless = writes().map((w) => w.replace(/,"frame":"at [^"]*attempt\.test\.ts\)"/, ""));
    expect(frameless).toEqual([`logs {"items":[{"at":${Date.now()},"attempt":1,"message":"trying","fields":{}}]}`, ...expected]);
    expect(writes().at(-1)!.includes('"frame":"at ')).toBe(kind !== null);
    expect(heard).toEqual(kind ? [`${kind} j ${(error() as Error).message}`] : []);
  });

  it("an onError that throws is logged, and the fail is still written", async () => {
    const { a, writes, lines } = start(
      async () => {
        throw new Error("boom");
      },
      () => ({}),
      { onError: () => { throw new Error("metrics down"); } },
    );
    await a.done;
    expect(writes().map((w) => w.replace(/,"frame":"[^"]*"/, ""))).toEqual([`fail {"error":"boom"}`]);
    expect(lines).toContainEqual({ event: "worker:on_error_threw", id: "j", error: "Error: metrics down" });
  });
});

describe("Attempt: the code version and nondeterminism (docs/deploy.md \"Code that changes under running jobs\")", () => {
  it("the worker's version rides on the write that ends each attempt; a NondeterminismError fails it as its own kind", async () => {
    const { a, writes } = start(
      async () => {
        throw new NondeterminismError("step 1 is step \"b\" in the journal");
      },
      () => ({}),
      { version: "v7" },
    );
    await a.done;
    expect(writes().map((w) => w.replace(/,"frame":"[^"]*"/, ""))).toEqual([`fail {"error":"NondeterminismError: step 1 is step \\"b\\" in the journal","fatal":true,"nondeterminism":true,"version":"v7"}`]);
  });

  it("a queue older than `version` and `nondeterminism` gets the fail without them, still fatal", async () => {
    const { a, calls } = start(
      async () => {
        throw new NondeterminismError("changed");
      },
      (c) => {
        const body = c.body as Record<string, unknown>;
        if (c.path.endsWith("/fail") && body.version !== undefined) throw refusal("invalid_request", "version: Unrecognized key", 400);
        return {};
      },
      { version: "v7" },
    );
    await a.done;
    const fails = calls.filter((c) => c.path.endsWith("/fail")).map((c) => c.body as Record<string, unknown>);
    expect(fails).toHaveLength(2);
    expect(fails[1]).toMatchObject({ fatal: true });
    expect(Object.keys(fails[1]!).sort()).toEqual(["error", "fatal", "leaseToken"]);
  });

  it("codeVersion: the bound version metadata (its tag with its id), else the configured version, else none", () => {
    const meta = { id: "a1b2c3d4-0000-4000-8000-000000000000", tag: "", timestamp: "2026-12-07T00:00:00Z" };
    expect(codeVersion({ CF_VERSION_METADATA: meta }, "1.2.3")).toBe(meta.id);
    expect(codeVersion({ CF_VERSION_METADATA: { ...meta, tag: "release-9" } }, undefined)).toBe(`release-9 (${meta.id})`);
    expect(codeVersion({}, "1.2.3")).toBe("1.2.3");
    expect(codeVersion(undefined, undefined)).toBeUndefined();
  });
});

describe("Attempt: the lease", () => {
  it("renews every renewEveryMs while the handler runs, and no more once it returned", async () => {
    const { a, calls } = start(async () => (await new Promise((r) => setTimeout(r, 5_000)), { ok: true }), () => ({ leaseExpiresAt: Date.now() + 6_000 }));
    await vi.advanceTimersByTimeAsync(20_000);
    await a.done;
    expect(calls.map((c) => c.path)).toEqual(["/v1/jobs/j/heartbeat", "/v1/jobs/j/heartbeat"]);
    expect(calls[0]!.body).toEqual({ leaseToken: "token-j" });
  });

  it("a heartbeat answered lease_lost aborts the handler (lease_lost) and nothing more is written, whatever it returns", async () => {
    let reason: unknown = null;
    const { a, said, writes } = start(
      async (_p, ctx: JobContext) => {
        await new Promise((r) => ctx.signal.addEventListener("abort", r));
        reason = (ctx.signal.reason as JobAbortedError).reason;
        throw new Error("aborted");
      },
      (c) => {
        if (c.path.endsWith("/heartbeat")) throw refusal("lease_lost");
        return {};
      },
    );
    await vi.advanceTimersByTimeAsync(2_000);
    await a.done;
    expect(reason).toBe("lease_lost");
    expect(a.live).toBe(false);
    expect(writes()).toEqual([]);
    expect(said).toEqual(["ended j"]);
  });

  it("a heartbeat that fails otherwise is logged; the lease lapses at its deadline (worker:lease_lapsed) unless one is confirmed", async () => {
    const { a, lines } = start(
      async (_p, ctx) => (await new Promise((r) => ctx.signal.addEventListener("abort", r)), { late: true }),
      (c) => {
        if (c.path.endsWith("/heartbeat")) throw refusal("internal", "boom", 500);
        return {};
      },
    );
    await vi.advanceTimersByTimeAsync(5_399);
    expect(a.live).toBe(true);
    await vi.advanceTimersByTimeAsync(1);
    await a.done;
    expect(lines.map((l) => l.event)).toEqual(["worker:write_failed", "worker:write_failed", "worker:lease_lapsed"]);
  });

  it("silence(): the handler is told shutdown, nothing more is written; it says whether the lease was held", async () => {
    let reason: unknown = null;
    const { a, writes, said } = start(async (_p, ctx) => {
      await new Promise((r) => ctx.signal.addEventListener("abort", r));
      reason = (ctx.signal.reason as JobAbortedError).reason;
      return { late: true };
    });
    expect(a.silence()).toBe(true);
    expect(a.silence()).toBe(false);
    await a.done;
    expect(reason).toBe("shutdown");
    expect(writes()).toEqual([]);
    expect(said).toEqual(["ended j"]);
  });
});

describe("Attempt: durable steps", () => {
  it("a step's writes go to POST /v1/jobs/{id}/steps under the lease", async () => {
    const { a, calls } = start(async (_p, ctx) => ({ v: await ctx.step("one", () => 41 + 1) }));
    await a.done;
    const steps = calls.filter((c) => c.path === "/v1/jobs/j/steps");
    expect(steps.map((c) => c.body!.op)).toEqual(["commit"]);
    expect(steps[0]!.body).toMatchObject({ leaseToken: "token-j", seq: 0, name: "one", result: 42 });
  });

  it.each([
    ["nondeterminism", "NondeterminismError", () => refusal("conflict", "changed", 409, { reason: "nondeterminism" }), true],
    ["journal_too_large", "TerminalJobError", () => refusal("conflict", "too big", 409, { reason: "journal_too_large" }), true],
    ["lease_lost: deposed", "JobAbortedError", () => refusal("lease_lost", "gone"), false],
    ["a 5xx: this step fails, the attempt is not deposed", "JobAbortedError", () => refusal("internal", "boom", 500), true],
    ["the queue out of reach", "JobAbortedError", () => new TypeError("fetch failed"), true],
  ])("a step refused (%s): the handler sees %s", async (_name, thrown, refused, live) => {
    let seen = "";
    const { a } = start(
      async (_p, ctx) => {
        try {
          await ctx.step("one", () => 1);
        } catch (e) {
          seen = (e as Error).name;
          throw e;
        }
        return {};
      },
      (c) => {
        if (c.path.endsWith("/steps")) throw refused();
        return {};
      },
    );
    await a.done;
    expect(seen).toBe(thrown);
    expect(a.live).toBe(live);
  });
});

describe("Attempt: ctx.sleep", () => {
  it("sends how long it sleeps (the queue reckons the wake time on its clock); a queue older than durationMs gets until alone", async () => {
    const handler: WorkerHandlers[string] = async (_p, ctx: JobContext) => void (await ctx.sleep("nap", 60_000));
    const first = start(handler);
    await first.a.done;
    const sent = first.calls.find((c) => c.path.endsWith("/sleep"))!.body as Record<string, unknown>;
    expect(sent).toMatchObject({ name: "nap", seq: 0, durationMs: 60_000, until: Date.now() + 60_000 });
    const older = start(handler, (c) => {
      if (c.path.endsWith("/sleep") && (c.body as Record<string, unknown>).durationMs !== undefined) throw refusal("invalid_request", "durationMs: Unrecognized key", 400);
      return {};
    });
    await older.a.done;
    const sleeps = older.calls.filter((c) => c.path.endsWith("/sleep")).map((c) => (c.body as Record<string, unknown>).durationMs);
    expect(sleeps).toEqual([60_000, undefined]);
  });
});

describe("Attempt: an error's frame", () => {
  it("a queue older than the fail's frame gets the error without it, and the fail lands", async () => {
    const older = start(
      async () => {
        throw new Error("boom");
      },
      (c) => {
        if (c.path.endsWith("/fail") && (c.body as Record<string, unknown>).frame !== undefined) throw refusal("invalid_request", "body: Unrecognized key: \"frame\"", 400);
        return {};
      },
    );
    await older.a.done;
    const fails = older.calls.filter((c) => c.path.endsWith("/fail")).map((c) => c.body as Record<string, unknown>);
    expect(fails.map((b) => [b.error, typeof b.frame])).toEqual([
      ["boom", "string"],
      ["boom", "undefined"],
    ]);
  });
});
