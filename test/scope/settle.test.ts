import { scopeRpc } from "../helpers/scope";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { HandlerOutcome } from "../../src/job/handler-contract";
import { dispatchPort } from "../../src/scope/push/dispatch-port";
import { WakeMemo } from "../../src/scope/jobs/wake-memo";
import { jobLogs, ROW_LOGS_MAX } from "../../src/scope/jobs/job-logs";
import { completeMany } from "../../src/scope/jobs/settle";
import type { ScopeDO } from "../../src/scope/scope-do";
import { alarmAt, freshScope, newJob, row, T0, useClock, put, readWakeRow } from "../helpers/scope";

async function claimedJob(over = {}) {
  const ctx = await freshScope();
  await put(ctx.stub, [newJob(ctx.home, over)]);
  const [job] = await scopeRpc(ctx.stub).claim({ worker: "w", types: null, limit: 1, leaseMs: 30_000 });
  return { ...ctx, job: job! };
}

describe("heartbeat / complete / fail (scope object)", () => {
  it("complete with the lease token stores the result and ends the lease", async () => {
    const { stub, job } = await claimedJob();
    const out = await scopeRpc(stub).complete(job.id, job.leaseToken!, '{"sent":1}');
    expect(out).toMatchObject({ ok: true, job: { state: "completed", result: { sent: 1 }, finishedAt: T0 } });
    expect((await row(stub, job.id)).lease_token).toBeNull();
  });

  it("a stale lease token changes nothing and is answered lease_lost", async () => {
    const { stub, job } = await claimedJob();
    const before = await row(stub, job.id);
    expect(await scopeRpc(stub).complete(job.id, "0".repeat(32), null)).toMatchObject({ ok: false, code: "lease_lost", reason: "stale_token" });
    expect(await scopeRpc(stub).fail(job.id, "nope", { error: "x" })).toMatchObject({ ok: false, code: "lease_lost", reason: "stale_token" });
    expect(await scopeRpc(stub).heartbeat(job.id, "nope", null)).toMatchObject({ ok: false, code: "lease_lost", reason: "stale_token" });
    expect(await row(stub, job.id)).toEqual(before);
  });

  it("an expired lease cannot complete, even before the reap pass ran", async () => {
    const { stub, job, clock } = await claimedJob();
    clock!.advance(30_000);
    expect(await scopeRpc(stub).complete(job.id, job.leaseToken!, null)).toMatchObject({ ok: false, code: "lease_lost", reason: "expired" });
  });

  it("heartbeat extends the lease by the claim's leaseMs, or the one given", async () => {
    const { stub, job, clock } = await claimedJob();
    clock!.advance(10_000);
    expect(await scopeRpc(stub).heartbeat(job.id, job.leaseToken!, null)).toEqual({ ok: true, leaseExpiresAt: T0 + 40_000 });
    expect(await scopeRpc(stub).heartbeat(job.id, job.leaseToken!, 5_000)).toEqual({ ok: true, leaseExpiresAt: T0 + 15_000 });
  });

  it("a heartbeat that shortens the lease brings the alarm forward", async () => {
    const { stub, job } = await claimedJob();
    expect(await alarmAt(stub)).toBe(T0 + 30_000);
    await scopeRpc(stub).heartbeat(job.id, job.leaseToken!, 2_000);
    expect(await alarmAt(stub, { flush: false })).toBe(T0 + 2_000);
  });

  it("a heartbeat on a finished job is already_terminal, as complete and fail answer", async () => {
    const { stub, job } = await claimedJob();
    await scopeRpc(stub).complete(job.id, job.leaseToken!, null);
    expect(await scopeRpc(stub).heartbeat(job.id, job.leaseToken!, null)).toMatchObject({ ok: false, code: "already_terminal", state: "completed" });
  });

  it("heartbeat never extends past the job's timeout; past it the lease is lost with reason timeout", async () => {
    const { stub, job, clock } = await claimedJob({ timeoutMs: 20_000 });
    clock!.advance(10_000);
    expect(await scopeRpc(stub).heartbeat(job.id, job.leaseToken!, 60_000)).toEqual({ ok: true, leaseExpiresAt: T0 + 20_000 });
    clock!.advance(10_000);
    expect(await scopeRpc(stub).heartbeat(job.id, job.leaseToken!, null)).toMatchObject({ ok: false, code: "lease_lost", reason: "timeout" });
  });

  it("a cancelled job's holder is told lease_lost / cancelled", async () => {
    const { stub, job } = await claimedJob();
    expect(await scopeRpc(stub).cancel(job.id, "operator")).toMatchObject({ ok: true, job: { state: "cancelled", cancelReason: "operator" } });
    expect(await scopeRpc(stub).complete(job.id, job.leaseToken!, null)).toMatchObject({ ok: false, code: "lease_lost", reason: "cancelled" });
    expect(await scopeRpc(stub).heartbeat(job.id, job.leaseToken!, null)).toMatchObject({ ok: false, code: "lease_lost", reason: "cancelled" });
  });

  it("completing twice is already_terminal the second time", async () => {
    const { stub, job } = await claimedJob();
    await scopeRpc(stub).complete(job.id, job.leaseToken!, null);
    expect(await scopeRpc(stub).complete(job.id, job.leaseToken!, null)).toMatchObject({ ok: false, code: "already_terminal", state: "completed" });
  });

  it("fail schedules a retry at now + full-jitter backoff, with retryAfterMs as a floor", async () => {
    const { stub, job, clock } = await claimedJob();
    await useClock(stub, clock!, () => 0.5);
    const out = await scopeRpc(stub).fail(job.id, job.leaseToken!, { error: "smtp 451" });
    // attempt 1: ceiling = base 1000 → floor(0.5 * 1001) = 500
    expect(out).toMatchObject({ ok: true, outcome: "retry_scheduled", job: { state: "pending", runAt: T0 + 500, attempts: 1, lastError: "smtp 451" } });
    const [again] = await scopeRpc(stub).claim({ worker: "w", types: null, limit: 1, leaseMs: 30_000 });
    expect(again).toBeUndefined(); // not due yet
  });

  it("retryAfterMs is a floor over the jittered delay", async () => {
    const { stub, job } = await claimedJob();
    const out = await scopeRpc(stub).fail(job.id, job.leaseToken!, { error: "429", retryAfterMs: 60_000 });
    expect(out).toMatchObject({ ok: true, job: { runAt: T0 + 60_000 } });
  });

  it("consumesAttempt:false gives the attempt back", async () => {
    const { stub, job } = await claimedJob({ maxAttempts: 1 });
    const out = await scopeRpc(stub).fail(job.id, job.leaseToken!, { error: "not ready", consumesAttempt: false });
    expect(out).toMatchObject({ ok: true, outcome: "retry_scheduled", job: { state: "pending", attempts: 0 } });
  });

  it("the last attempt fails with retries_exhausted; fatal fails at once", async () => {
    const a = await claimedJob({ maxAttempts: 1 });
    expect(await scopeRpc(a.stub).fail(a.job.id, a.job.leaseToken!, { error: "boom" })).toMatchObject({
      ok: true,
      outcome: "failed",
      job: { state: "failed", failureKind: "retries_exhausted", finishedAt: T0 },
    });
    const b = await claimedJob({ maxAttempts: 5 });
    expect(await scopeRpc(b.stub).fail(b.job.id, b.job.leaseToken!, { error: "bad input", fatal: true })).toMatchObject({
      ok: true,
      outcome: "failed",
      job: { state: "failed", failureKind: "fatal", attempts: 1 },
    });
  });
});

describe("a job's own backoff", () => {
  it("fixed: a retry waits exactly baseMs; exponential with a cap: never past maxMs; without one, the type's", async () => {
    const { home, stub, clock } = await freshScope();
    const backoff = (b: object) => JSON.stringify(b);
    await put(stub, [
      newJob(home, { id: "fixed", backoff: backoff({ kind: "fixed", baseMs: 5_000, maxMs: 5_000 }) }),
      newJob(home, { id: "capped", backoff: backoff({ kind: "exponential", baseMs: 100, maxMs: 100 }) }),
    ]);
    const leased = await scopeRpc(stub).claim({ worker: "w", types: null, limit: 2, leaseMs: 30_000 });
    for (const j of leased) expect((await scopeRpc(stub).fail(j.id, j.leaseToken!, { error: "again" })).ok).toBe(true);
    const now = clock!.now();
    const byId = Object.fromEntries((await Promise.all(leased.map((j) => row(stub, j.id)))).map((r) => [r.id.split(".").pop(), r]));
    expect(byId.fixed!.run_at).toBe(now + 5_000);
    expect(byId.capped!.run_at).toBeGreaterThanOrEqual(now);
    expect(byId.capped!.run_at).toBeLessThanOrEqual(now + 100);
  });
});

describe("a pushed outcome's log lines (dispatch-port.ts)", () => {
  it("are kept only when the outcome lands under its lease: a late answer for a lost lease leaves none", async () => {
    const { home, stub, clock } = await freshScope();
    await put(stub, [newJob(home, { id: "done" }), newJob(home, { id: "again" })]);
    const leased = await scopeRpc(stub).claim({ worker: "push", types: null, limit: 2, leaseMs: 30_000 });
    const line = (message: string) => [{ at: T0, attempt: 1, message, fields: null }];
    const [done, again] = ["done", "again"].map((k) => leased.find((j) => j.id.endsWith(`.${k}`))!);
    const settle = (items: { id: string; token: string; outcome: HandlerOutcome }[]) =>
      runInDurableObject(stub, (o: ScopeDO) => dispatchPort(o.store, o.store.config, () => true, new WakeMemo(o.store.sql, (now) => readWakeRow(o, now))).settle(items, clock!.now()).map((r) => r.id));
    const logs = (id: string) => runInDurableObject(stub, (o: ScopeDO) => o.store.lens.openSync(jobLogs(o.store, id), "reader"));

    // Stale tokens: neither outcome lands, so neither's lines are kept.
    const stale = "0".repeat(32);
    expect(await settle([
      { id: done!.id, token: stale, outcome: { kind: "completed", logs: line("late completion") } },
      { id: again!.id, token: stale, outcome: { kind: "retry", error: "x", logs: line("late retry") } },
    ])).toEqual([]);
    expect(await logs(done!.id)).toEqual([]);
    expect(await logs(again!.id)).toEqual([]);

    // Their own tokens: both land, with their lines.
    expect(await settle([
      { id: done!.id, token: done!.leaseToken!, outcome: { kind: "completed", logs: line("sent") } },
      { id: again!.id, token: again!.leaseToken!, outcome: { kind: "retry", error: "x", logs: line("will retry") } },
    ])).toEqual([again!.id, done!.id]);
    expect((await logs(done!.id))!.map((l) => l.message)).toEqual(["sent"]);
    expect((await logs(again!.id))!.map((l) => l.message)).toEqual(["will retry"]);
  });
  it("a completion's lines ride in its row's own update (no job_log row to write or delete); lines too long for the row go to job_log", async () => {
    const { home, stub, clock } = await freshScope();
    await put(stub, [newJob(home, { id: "small" }), newJob(home, { id: "large" }), newJob(home, { id: "bare" })]);
    const leased = await scopeRpc(stub).claim({ worker: "w", types: null, limit: 3, leaseMs: 30_000 });
    const job = (k: string) => leased.find((j) => j.id.endsWith(`.${k}`))!;
    const long = "x".repeat(2000);
    const got = await runInDurableObject(stub, async (o: ScopeDO, state) => {
      const sql = state.storage.sql as unknown as { exec: SqlStorage["exec"] };
      const real = sql.exec;
      const written: Record<string, number> = {};
      let at = "";
      sql.exec = ((...a: Parameters<SqlStorage["exec"]>) => {
        const c = real.apply(state.storage.sql, a);
        const k = at;
        queueMicrotask(() => (written[k] = (written[k] ?? 0) + c.rowsWritten));
        return c;
      }) as SqlStorage["exec"];
      const complete = (k: string, logs?: { at: number; message: string }[]) => {
        at = k;
        completeMany(o.store, [{ id: job(k).id, token: job(k).leaseToken!, result: null, ...(logs ? { logs } : {}) }], clock!.now());
      };
      complete("bare");
      complete("small", [{ at: T0, message: "one" }, { at: T0 + 1, message: "two" }]);
      complete("large", Array.from({ length: 6 }, (_, i) => ({ at: T0 + i, message: `${i} ${long}` })));
      await Promise.resolve();
      sql.exec = real;
      const tableLines = (k: string) => state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM job_log JOIN job ON job.seq = job_log.job_seq WHERE job.id = ?", job(k).id).one().n;
      return { written, small: tableLines("small"), large: tableLines("large"), lines: o.store.lens.openSync(jobLogs(o.store, job("small").id), "reader") };
    });
    // The same rows as a completion without lines: the row, and its count owed or paid alike.
    expect(got.written.small).toBe(got.written.bare);
    expect(got.small).toBe(0);
    expect(got.large).toBe(6);
    expect(6 * (2000 + 8)).toBeGreaterThan(ROW_LOGS_MAX);
    // The lease's attempt for lines sent without one, as job_log's are.
    expect(got.lines).toEqual([
      { at: T0, attempt: 1, message: "one", fields: null },
      { at: T0 + 1, attempt: 1, message: "two", fields: null },
    ]);
  });
});
