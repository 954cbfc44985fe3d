/**
 * Push dispatch end to end: the real coordinator, its Durable Objects, and
 * handler Workers (the example handler and a test handler) over real service
 * bindings. Handlers run in real time, so tests wait on job state.
 */
import { abortAllDurableObjects } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { homeOfJobId } from "../../src/job/home";
import { api, isTerminal, uniqueScope, waitForJob } from "../helpers/api";
import { maxOverlap, probe } from "../helpers/probe";
import { env } from "../helpers/scope";

async function enqueue(type: string, payload: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) {
  const r = await api("POST", "/v1/jobs", { type, payload, ...extra });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.job;
}

describe("the example handler: every way an attempt ends", () => {
  it("demo.echo completes at once with the payload as result", async () => {
    const job = await enqueue("demo.echo", { hello: "world" });
    const done = await waitForJob(job.id, isTerminal);
    expect(done).toMatchObject({ state: "completed", result: { hello: "world" }, attempts: 1 });
  });

  it("demo.noop completes", async () => {
    const done = await waitForJob((await enqueue("demo.noop")).id, isTerminal);
    expect(done.state).toBe("completed");
    expect(done.result.startedAt).toBeGreaterThanOrEqual(done.createdAt);
  });

  it("demo.fail is retried with backoff, then fails with retries_exhausted", async () => {
    const done = await waitForJob((await enqueue("demo.fail")).id, isTerminal);
    expect(done).toMatchObject({ state: "failed", failureKind: "retries_exhausted", attempts: 3, lastError: "demo failure" });
  });

  it("demo.fatal fails at once", async () => {
    const done = await waitForJob((await enqueue("demo.fatal")).id, isTerminal);
    expect(done).toMatchObject({ state: "failed", failureKind: "fatal", attempts: 1 });
    expect(done.lastError).toMatch(/demo fatal failure/);
  });

  it("demo.flaky fails twice, then succeeds", async () => {
    const done = await waitForJob((await enqueue("demo.flaky", { failTimes: 2 })).id, isTerminal);
    expect(done).toMatchObject({ state: "completed", attempts: 3, result: { succeededOnAttempt: 3 } });
  });

  it("demo.sleep completes after sleeping", async () => {
    const done = await waitForJob((await enqueue("demo.sleep", { ms: 50 })).id, isTerminal);
    expect(done).toMatchObject({ state: "completed", result: { sleptMs: 50 } });
  });
});

describe("outcomes through the handler SDK", () => {
  it("RetryableJobError honours retryAfterMs as a floor", async () => {
    const job = await enqueue("test.outcome", { do: "retry", message: "slow down", retryAfterMs: 60_000 });
    const retried = await waitForJob(job.id, (j) => j.state === "pending" && j.attempts === 1);
    expect(retried.lastError).toBe("slow down");
    expect(retried.runAt).toBeGreaterThanOrEqual(retried.updatedAt + 60_000);
    await api("POST", `/v1/jobs/${job.id}/cancel`);
  });

  it("consumesAttempt:false retries without spending an attempt", async () => {
    const job = await enqueue("test.outcome", { do: "retry", message: "not ready", consumesAttempt: false, retryAfterMs: 60_000 });
    const retried = await waitForJob(job.id, (j) => j.state === "pending" && j.lastError === "not ready");
    expect(retried.attempts).toBe(0);
    await api("POST", `/v1/jobs/${job.id}/cancel`);
  });

  it("snooze puts the job back without spending the attempt", async () => {
    const done = await waitForJob((await enqueue("test.outcome", { do: "snooze", delayMs: 30 })).id, isTerminal);
    expect(done).toMatchObject({ state: "completed", attempts: 1, result: { snoozedOnce: true, attempt: 1 } });
  });

  it("retry then success", async () => {
    const done = await waitForJob((await enqueue("test.outcome", { do: "succeedOnAttempt", attempt: 3 })).id, isTerminal);
    expect(done).toMatchObject({ state: "completed", attempts: 3, result: { attempt: 3 } });
  });

  it("a result goes through JSON: undefined fields dropped, a Date as its string", async () => {
    const done = await waitForJob((await enqueue("test.outcome", { do: "weird" })).id, isTerminal);
    expect(done).toMatchObject({ state: "completed", result: { when: "1970-01-01T00:00:00.000Z", n: 1 } });
    expect(Object.keys(done.result)).toEqual(["when", "n"]);
  });

  it("a snooze of 0 ms is stretched to the minimum, so it cannot spin", async () => {
    const done = await waitForJob((await enqueue("test.outcome", { do: "snooze", delayMs: 0 })).id, isTerminal);
    expect(done.state).toBe("completed");
    expect(done.finishedAt - done.createdAt).toBeGreaterThanOrEqual(250);
  });

  it("fractional durations from a handler are rounded, not refused", async () => {
    const job = await enqueue("test.outcome", { do: "retry", message: "later", retryAfterMs: 60_000.6, consumesAttempt: false });
    const retried = await waitForJob(job.id, (j) => j.state === "pending" && j.lastError === "later");
    expect(retried.attempts).toBe(0);
    expect(retried.runAt - retried.updatedAt).toBe(60_001);
    await api("POST", `/v1/jobs/${job.id}/cancel`);
  });

  it("a result that is not an object is kept as { value }", async () => {
    const done = await waitForJob((await enqueue("test.outcome", { do: "complete", result: 42 })).id, isTerminal);
    expect(done.result).toEqual({ value: 42 });
  });

  it("a thrown error is a retry; TerminalJobError is fatal", async () => {
    const thrown = await waitForJob((await enqueue("test.outcome", { do: "throw", message: "boom" }, { maxAttempts: 1 })).id, isTerminal);
    expect(thrown).toMatchObject({ state: "failed", failureKind: "retries_exhausted", lastError: "boom" });
    const fatal = await waitForJob((await enqueue("test.outcome", { do: "fatal", message: "no such user" })).id, isTerminal);
    expect(fatal).toMatchObject({ state: "failed", failureKind: "fatal", attempts: 1 });
  });
});

describe("a handler that answers badly", () => {
  it.each([
    ["throw", "retries_exhausted", /handler call failed: .*raw handler exploded/],
    ["not-array", "retries_exhausted", /malformed answer/],
    ["bad-kind", "retries_exhausted", /no valid outcome/],
    ["missing", "retries_exhausted", /no valid outcome/],
    ["bad-result", "fatal", /not a JSON object/],
  ])("%s → failed/%s", async (mode, kind, error) => {
    const done = await waitForJob((await enqueue("test.raw", { mode })).id, isTerminal);
    expect(done).toMatchObject({ state: "failed", failureKind: kind, attempts: 1 });
    expect(done.lastError).toMatch(error);
  });
});

describe("a handler Worker that cannot be reached", () => {
  it("its jobs wait without spending attempts, backing off, and the outage is logged once per binding", async () => {
    const errors = vi.spyOn(console, "error");
    const scope = uniqueScope("down");
    const jobs = [await enqueue("test.down", { n: 1 }, { scope }), await enqueue("test.down", { n: 2 }, { scope })];
    const stub = env.SCOPE.getByName(homeOfJobId(jobs[0].id)!.name);
    // Three failed calls each (the wait is as long as the outage so far: 1 s, 1 s, then 2 s), so the once-per-binding log is tested across calls.
    const waited = await Promise.all(jobs.map((j) => waitForJob(j.id, (x) => x.state === "pending" && x.runAt - x.updatedAt >= 2_000, 15_000)));
    for (const w of waited) {
      expect(w.attempts).toBe(0); // maxAttempts is 2: two spent attempts would have failed it
      expect(w.lastError).toMatch(/^handler unreachable: /);
    }
    await stub.drain();
    const lines = errors.mock.calls.map((c) => String(c[0])).filter((l) => l.includes("dispatch:handler_unreachable"));
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ binding: "DOWN" });
    errors.mockRestore();
    await api("POST", `/v1/scopes/${scope.type}/${scope.id}/cancel`, {});
  });

  it("a handler that fails before it says anything to the queue is treated the same (it may not have run)", async () => {
    const job = await enqueue("test.raw", { mode: "throw-at-once" });
    const waited = await waitForJob(job.id, (x) => x.state === "pending" && x.lastError !== null);
    expect(waited).toMatchObject({ attempts: 0 });
    expect(waited.lastError).toMatch(/handler unreachable: .*failed before it started/);
    await api("POST", `/v1/jobs/${job.id}/cancel`);
  });
});

describe("a handler that answers twice", () => {
  it("the first outcome for a job counts; a second one and one for a job it was not sent change nothing", async () => {
    const job = await enqueue("test.raw", { mode: "twice-and-stranger" });
    const done = await waitForJob(job.id, isTerminal);
    expect(done).toMatchObject({ state: "completed", attempts: 1, result: { first: true } });
    await env.SCOPE.getByName(homeOfJobId(job.id)!.name).drain();
    const events = await probe.events(job.id);
    expect(events.filter((e) => e.event === "job:completed")).toHaveLength(1);
    expect(events.filter((e) => e.event === "job:failed")).toHaveLength(0);
    expect((await api("GET", `/v1/jobs/${job.id}x`)).status).toBe(404);
  });
});

describe("time limits, cancellation and leases", () => {
  it("timeoutMs aborts the handler's signal and ends the attempt: retried, then failed as timeout", async () => {
    const key = crypto.randomUUID();
    const job = await enqueue("test.timeout", { ms: 10_000, key });
    const done = await waitForJob(job.id, isTerminal, 15_000);
    expect(done).toMatchObject({ state: "failed", failureKind: "timeout", attempts: 2 });
    const spans = await probe.spans(key);
    expect(spans).toHaveLength(2);
    for (const s of spans) expect(s.aborted).toMatch(/timeout/);
  }, 20_000);

  it("cancel while running aborts the signal with reason cancelled", async () => {
    const key = crypto.randomUUID();
    const job = await enqueue("test.span", { ms: 10_000, key });
    await waitForJob(job.id, (j) => j.state === "running");
    const r = await api("POST", `/v1/jobs/${job.id}/cancel`, { reason: "user asked" });
    expect(r.body.job.state).toBe("cancelled");
    const { vi } = await import("vitest");
    const [span] = await vi.waitFor(async () => {
      const s = await probe.spans(key);
      if (!s[0]?.aborted) throw new Error("not aborted yet");
      return s;
    });
    expect(span!.aborted).toMatch(/cancelled/);
  });

  it("a cancelled job stays cancelled: the handler's late result is ignored", async () => {
    const job = await enqueue("test.deaf", { ms: 300 });
    await waitForJob(job.id, (j) => j.state === "running");
    await api("POST", `/v1/jobs/${job.id}/cancel`);
    // The deaf handler answers { late: true } ~300 ms later; drain waits until that answer is settled.
    await env.SCOPE.getByName(homeOfJobId(job.id)!.name).drain();
    const after = (await api("GET", `/v1/jobs/${job.id}`)).body.job;
    expect(after).toMatchObject({ state: "cancelled", attempts: 1, result: null });
  });

  it("a cancelled job keeps its concurrency slot until its handler actually returns", async () => {
    const key = crypto.randomUUID();
    const a = await enqueue("test.deaf.limited", { ms: 500, key });
    await waitForJob(a.id, (j) => j.state === "running");
    await api("POST", `/v1/jobs/${a.id}/cancel`);
    const b = await enqueue("test.deaf.limited", { ms: 10, key });
    await waitForJob(b.id, isTerminal);
    const spans = await probe.spans(key);
    const spanA = spans.find((s) => s.id === a.id)!;
    const spanB = spans.find((s) => s.id === b.id)!;
    // The deaf handler ignored the cancel; with concurrency 1, b could start only once a's call was over.
    expect(spanB.startedAt).toBeGreaterThanOrEqual(spanA.finishedAt);
  }, 20_000);

  it("each job of a batch settles when it finishes, not when the slowest does", async () => {
    const key = crypto.randomUUID();
    const scope = uniqueScope("batch");
    const r = await api("POST", "/v1/jobs/batch", {
      jobs: [
        { type: "test.span", payload: { ms: 20, key }, scope },
        { type: "test.span", payload: { ms: 2_000, key }, scope },
      ],
    });
    const [quick, slow] = r.body.results.map((x: any) => x.id);
    await waitForJob(quick, (j) => j.state === "completed");
    expect((await api("GET", `/v1/jobs/${slow}`)).body.job.state).toBe("running");
    await waitForJob(slow, isTerminal);
  }, 20_000);

  it("a handler running for 3× its lease runs once: the lease is renewed while the call is in flight", async () => {
    const key = crypto.randomUUID();
    const job = await enqueue("test.long", { ms: 3_000, key });
    const done = await waitForJob(job.id, isTerminal, 10_000);
    expect(done).toMatchObject({ state: "completed", attempts: 1 });
    expect(await probe.invocations(job.id)).toBe(1);
    expect(await probe.spans(key)).toHaveLength(1);
  }, 20_000);

  it("an object reset mid-call gives the job back at once, its attempt not counted, without waiting out its lease", async () => {
    const key = crypto.randomUUID();
    const scope = uniqueScope("evict");
    // test.span keeps the default 30 s lease: a recovery by lease expiry could not finish within this test's 10 s.
    const job = await enqueue("test.span", { ms: 300, key }, { scope });
    await waitForJob(job.id, (j) => j.state === "running");
    // A hard reset, as when the runtime restarts or a deploy lands: in-memory dispatch state and timers are gone.
    await abortAllDurableObjects();
    const done = await waitForJob(job.id, (j) => j.state === "completed", 10_000);
    expect(done.attempts).toBe(1);
    const timeline = (await api("GET", `/v1/jobs/${job.id}/timeline`)).body.steps as { state: string; note: string | null }[];
    expect(timeline.some((s) => s.state === "pending" && s.note === "released: its object restarted while the handler call was in flight")).toBe(true);
  }, 20_000);
});

describe("concurrency and dispatch bounds", () => {
  it("a type with concurrency 3 never runs more than 3 at once across 10 scopes, and does reach 3", async () => {
    const key = crypto.randomUUID();
    const jobs = Array.from({ length: 100 }, (_, i) => ({ type: "test.limited", payload: { ms: 30, key }, scope: { type: "Tenant", id: `${key}-${i % 10}` } }));
    const r = await api("POST", "/v1/jobs/batch", { jobs });
    expect(r.status).toBe(200);
    for (const res of r.body.results) await waitForJob(res.id, isTerminal, 30_000);
    const spans = await probe.spans(key);
    expect(spans).toHaveLength(100);
    expect(maxOverlap(spans)).toBe(3);
  }, 60_000);

  it("a burst larger than one event's call budget is dispatched entirely, continuing in later events", async () => {
    const key = crypto.randomUUID();
    const scope = uniqueScope("burst");
    const jobs = Array.from({ length: 120 }, () => ({ type: "test.span", payload: { ms: 5, key }, scope }));
    const r = await api("POST", "/v1/jobs/batch", { jobs });
    for (const res of r.body.results) await waitForJob(res.id, (j) => j.state === "completed", 30_000);
    expect(await probe.spans(key)).toHaveLength(120);
  }, 60_000);
});

describe("batch size follows the load", () => {
  it("a lone job goes alone; a backlog goes in bigger calls, never over 100 (the default batchSize)", async () => {
    const key = crypto.randomUUID();
    const scope = uniqueScope("sizes");
    const one = await api("POST", "/v1/jobs", { type: "test.raw", payload: { mode: "record", key }, scope });
    await waitForJob(one.body.job.id, isTerminal);
    expect(await probe.batchSizes(key)).toEqual([1]);
    const many = await api("POST", "/v1/jobs/batch", { jobs: Array.from({ length: 1000 }, () => ({ type: "test.raw", payload: { mode: "record", key }, scope })) });
    for (const res of many.body.results) await waitForJob(res.id, isTerminal, 30_000);
    const sizes = (await probe.batchSizes(key)).slice(1);
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(1000);
    // 1,000 due at once: full calls of 100.
    expect(sizes[0]).toBe(100);
    expect(Math.max(...sizes)).toBe(100);
  }, 60_000);
});

describe("lifecycle events and pull", () => {
  it("the observer binding receives started and completed", async () => {
    const job = await enqueue("demo.echo", { a: 1 });
    await waitForJob(job.id, isTerminal);
    const { vi } = await import("vitest");
    const events = await vi.waitFor(async () => {
      const e = await probe.events(job.id);
      if (e.length < 2) throw new Error("events not in yet");
      return e;
    });
    expect(events.map((e) => e.event)).toEqual(["job:started", "job:completed"]);
  });

  it("push types cannot be pulled", async () => {
    const r = await api("POST", "/v1/claim", { worker: "w", types: ["demo.echo"] });
    expect(r.status).toBe(400);
    expect(r.body.error.details[0].path).toBe("types[0]");
  });
});
