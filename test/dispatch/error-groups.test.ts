/**
 * Error groups (docs/operating.md "Error groups"): each attempt that ends in an error is counted in its type's group
 * of that fingerprint — kind, masked message, first frame — in its object, in the attempt's own transaction;
 * GET /v1/errors merges the objects' groups, and a group's failed jobs are retried (or its jobs rerun) in one call.
 */
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { fingerprint, firstFrame, masked } from "../../src/job/error-group";
import type { ScopeDO } from "../../src/scope/scope-do";
import { ErrorNotes, NOTES_MAX } from "../../src/scope/errors/error-notes";
import { BUCKET_MS, DAY_MS, errorGroups, GROUP_KEEP_MS, HOUR_MS, noteError } from "../../src/scope/errors/error-groups";
import { api, isTerminal, uniqueScope, uniqueType, waitForJob } from "../helpers/api";
import { freshScope, newJob, partsOf, put, T0 } from "../helpers/scope";

type Group = { type: string; fingerprint: string; kind: string; message: string; frame: string | null; sample: string; firstJobId: string; lastJobId: string; total: number; lastHour: number; lastDay: number; recentJobIds: string[] };

describe("the fingerprint", () => {
  it("masks what varies between jobs — ids, numbers, times, emails — and keeps names; the frame without its position", () => {
    expect(masked("order 8812 not found for a@b.co at 2026-12-07T01:02:03.456Z (job dHlwZTp0ZXN0.0mxcki86i~2)")).toBe("order <n> not found for <email> at <time> (job <id>)");
    expect(masked("Cannot read properties of undefined (reading 'total')\n    at charge (src/pay.ts:10:5)")).toBe("Cannot read properties of undefined (reading 'total')");
    expect(masked("upstream 0b7f1c2e-8d4a-4f3e-9a61-5c2d8e7f9a10 answered 503")).toBe("upstream <id> answered <n>");
    expect(firstFrame("Error: boom\n    at charge (src/pay.ts:10:5)\n    at run (src/run.ts:3:1)")).toBe("at charge (pay.ts)");
    expect(firstFrame("Error: x\n    at flaky.once (file:///w/.wrangler/tmp/dev-BEeYi9/index.js:12:9)")).toBe("at flaky.once (index.js)");
    expect(firstFrame("Error: x\n    at async Promise.all (index 0)")).toBe("at async Promise.all (index 0)");
    expect(firstFrame("Error: boom")).toBeNull();
    expect(fingerprint("error", "order 1 not found", null)).toBe(fingerprint("error", "order 2 not found", null));
    expect(fingerprint("error", "order 1 not found", null)).not.toBe(fingerprint("fatal", "order 1 not found", null));
    expect(fingerprint("error", "x", "at a (f.ts)")).not.toBe(fingerprint("error", "x", "at b (f.ts)"));
  });

  it("a group's counts: five-minute buckets over the last hour and day, old ones dropped; a week-quiet group goes", async () => {
    const { stub } = await freshScope();
    const out = await runInDurableObject(stub, (o: ScopeDO) => {
      const sql = o.store.sql;
      const t0 = 10 * DAY_MS;
      const job = (n: number) => ({ id: `j${n}`, type: "t" });
      const err = { kind: "error" as const, message: "boom 1", frame: null };
      noteError(sql, job(1), err, t0);
      noteError(sql, job(2), err, t0 + 2 * HOUR_MS);
      noteError(sql, job(3), err, t0 + 2 * HOUR_MS + BUCKET_MS);
      const at = t0 + 2 * HOUR_MS + 2 * BUCKET_MS;
      const [g] = errorGroups(sql, "t", at);
      // A day later only the buckets of the last day count; the next note drops the older ones.
      noteError(sql, job(4), err, t0 + DAY_MS + HOUR_MS);
      const [later] = errorGroups(sql, "t", t0 + DAY_MS + HOUR_MS);
      const kept = Object.keys(JSON.parse(sql.exec<{ buckets: string }>("SELECT buckets FROM error_group").one().buckets) as object).length;
      // A new group of the type, a week after the first's last count: the quiet one is deleted.
      noteError(sql, job(5), { ...err, message: "other" }, t0 + DAY_MS + HOUR_MS + GROUP_KEEP_MS + 1);
      const left = errorGroups(sql, "t", t0 + DAY_MS + HOUR_MS + GROUP_KEEP_MS + 1).map((x) => x.message);
      return { g, later, kept, left };
    });
    expect(out.g).toMatchObject({ total: 3, lastHour: 2, lastDay: 3, firstJobId: "j1", lastJobId: "j3", recentJobIds: ["j1", "j2", "j3"], message: "boom <n>", sample: "boom 1" });
    expect(out.later).toMatchObject({ total: 4, lastHour: 1, lastDay: 3 });
    expect(out.kept).toBe(3);
    expect(out.left).toEqual(["other"]);
  });
});

describe("written in bursts", () => {
  it("a burst of one group's failures is noted in memory and written at the alarm as one row; a rolled-back note is not", async () => {
    const { home, stub, clock } = await freshScope();
    await put(stub, Array.from({ length: 5 }, () => newJob(home, { type: "burst.t", maxAttempts: 1 })));
    const jobs = await stub.claim({ worker: "w", types: ["burst.t"], limit: 5, leaseMs: 30_000 });
    for (const j of jobs) expect((await stub.fail(j.id, j.leaseToken, { error: `item ${j.id.length} failed` })).ok).toBe(true);
    const before = await runInDurableObject(stub, (o: ScopeDO) => {
      // A note made inside a transaction that rolls back goes with it.
      try {
        o.store.atomic(() => {
          partsOf(o).errors.hooks.erred!(o.store, { id: "x", type: "burst.t" } as never, { kind: "error", message: "never", frame: null }, clock!.now());
          throw new Error("rolled back");
        });
      } catch {
        // as meant
      }
      return { rows: o.store.sql.exec("SELECT count(*) AS n FROM error_group").one().n, noted: partsOf(o).errors.notes.size };
    });
    expect(before).toEqual({ rows: 0, noted: 5 });
    clock!.advance(5_000);
    await runDurableObjectAlarm(stub);
    const after = await runInDurableObject(stub, (o: ScopeDO) => ({ groups: errorGroups(o.store.sql, null, clock!.now()), noted: partsOf(o).errors.notes.size }));
    expect(after.noted).toBe(0);
    expect(after.groups).toHaveLength(1);
    expect(after.groups[0]).toMatchObject({ type: "burst.t", total: 5, lastHour: 5, message: "item <n> failed" });
  });
});

describe("the queue's own refusals", () => {
  it("a sleep the journal refuses as nondeterminism fails its job now, and is counted in a nondeterminism group", async () => {
    const { home, stub } = await freshScope();
    const row = (await put(stub, [newJob(home, { type: "refused.sleep" })]))[0]!.row;
    const [leased] = await stub.claim({ worker: "w", types: ["refused.sleep"], limit: 1, leaseMs: 30_000 });
    const start = { at: T0, seed: "s" };
    expect((await stub.appendStep({ id: row.id, op: "commit", seq: 0, name: "a", result: "1", startedAt: T0, start }, leased!.leaseToken)).ok).toBe(true);
    // A sleep where the journal holds step "a": every replay would end here again, so the job fails now.
    const out = await stub.sleep(row.id, leased!.leaseToken, { name: "nap", seq: 0, until: T0 + 1_000, startedAt: T0, start });
    expect(out).toMatchObject({ ok: true, job: { state: "failed", failureKind: "nondeterminism" } });
    const groups = await stub.errorGroups("refused.sleep");
    expect(groups).toHaveLength(1);
    expect(groups[0]).toMatchObject({ kind: "nondeterminism", total: 1, firstJobId: row.id, frame: null });
    expect(groups[0]!.message).toMatch(/^NondeterminismError: step <n> is "a" in the journal/);
  });
});

describe("the notes' bound", () => {
  it("keeps at most NOTES_MAX unwritten notes, each message cut to what a group keeps; the rest are counted as dropped", () => {
    const notes = new ErrorNotes();
    for (let i = 0; i <= NOTES_MAX; i++) notes.add({ job: { id: `j${i}`, type: "t" }, error: { kind: "error", message: "x".repeat(4_000), frame: null }, at: i });
    expect(notes.size).toBe(NOTES_MAX);
    expect(notes.dropped).toBe(1);
    expect(notes.take()[0]!.error.message).toHaveLength(500);
  });
});

describe("GET /v1/errors", () => {
  it("groups a type's failed attempts by kind, masked message and frame across objects, most in the last hour first", async () => {
    const type = uniqueType("pull");
    const ids: string[] = [];
    for (const [i, scope] of [uniqueScope(), uniqueScope(), null].entries()) {
      ids.push((await api("POST", "/v1/jobs", { type, payload: { i }, maxAttempts: 1, ...(scope ? { scope } : {}) })).body.job.id);
    }
    const fatal = (await api("POST", "/v1/jobs", { type, payload: {}, maxAttempts: 2 })).body.job.id as string;
    // One more fails the same way once, then completes: in the group, but never retried or rerun by it.
    const recovered = (await api("POST", "/v1/jobs", { type, payload: {}, maxAttempts: 2, backoff: { kind: "fixed", baseMs: 1 } })).body.job.id as string;
    // Each of the three, in three objects, fails with "order <n> not found" from the same frame; the fourth fatally.
    const jobs = await vi.waitFor(
      async () => {
        const got = (await api("POST", "/v1/claim", { worker: "w", types: [type], limit: 10 })).body.jobs as { id: string; leaseToken: string }[];
        expect(got).toHaveLength(5);
        return got;
      },
      { timeout: 5_000, interval: 50 },
    );
    for (const j of jobs) {
      const body = j.id === fatal ? { leaseToken: j.leaseToken, error: "card declined", fatal: true } : { leaseToken: j.leaseToken, error: `order ${ids.indexOf(j.id) + 100} not found`, frame: "at lookup (src/orders.ts)" };
      expect((await api("POST", `/v1/jobs/${j.id}/fail`, body)).status).toBe(200);
    }
    const again = await vi.waitFor(
      async () => {
        const got = (await api("POST", "/v1/claim", { worker: "w", types: [type], limit: 10 })).body.jobs as { id: string; leaseToken: string }[];
        expect(got.map((j) => j.id)).toEqual([recovered]);
        return got[0]!;
      },
      { timeout: 5_000, interval: 20 },
    );
    expect((await api("POST", `/v1/jobs/${recovered}/complete`, { leaseToken: again.leaseToken, result: {} })).status).toBe(200);
    const r = await api("GET", `/v1/errors?type=${type}`);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.complete).toBe(true);
    const [first, second] = r.body.items as Group[];
    expect(r.body.items).toHaveLength(2);
    expect(first).toMatchObject({ type, kind: "error", message: "order <n> not found", frame: "at lookup (src/orders.ts)", total: 4, lastHour: 4, lastDay: 4 });
    expect(new Set(first!.recentJobIds)).toEqual(new Set([...ids, recovered]));
    expect(ids).toContain(first!.firstJobId);
    expect(second).toMatchObject({ kind: "fatal", message: "card declined", total: 1, lastHour: 1, firstJobId: fatal, lastJobId: fatal });

    // The group's failed jobs back to pending in one call; the other group's job is not touched.
    const retried = await api("POST", "/v1/errors/retry", { type, fingerprint: first!.fingerprint });
    expect(retried.body).toEqual({ changed: 3, skipped: 1 });
    expect((await api("GET", `/v1/jobs/${recovered}`)).body.job.state).toBe("completed");
    for (const id of ids) expect((await api("GET", `/v1/jobs/${id}`)).body.job.state).toBe("pending");
    expect((await api("GET", `/v1/jobs/${fatal}`)).body.job.state).toBe("failed");
    // Again: they are pending now, so nothing to retry.
    expect((await api("POST", "/v1/errors/retry", { type, fingerprint: first!.fingerprint })).body).toEqual({ changed: 0, skipped: 4 });
    // A rerun of the fatal group: a new job of its finished one.
    const rerun = await api("POST", "/v1/errors/rerun", { type, fingerprint: second!.fingerprint });
    expect(rerun.body).toEqual({ changed: 1, skipped: 0 });
    expect((await api("GET", `/v1/jobs/${fatal}`)).body.job.reruns).toHaveLength(1);
  });

  it("a pushed handler's thrown error carries its stack's first frame", async () => {
    const r = await api("POST", "/v1/jobs", { type: "test.outcome", payload: { do: "throw", message: `lookup ${crypto.randomUUID()} failed` } });
    await waitForJob(r.body.job.id, isTerminal);
    const groups = (await api("GET", "/v1/errors?type=test.outcome")).body.items as Group[];
    const g = groups.find((x) => x.recentJobIds.includes(r.body.job.id))!;
    expect(g).toMatchObject({ kind: "error", message: "lookup <id> failed", total: 3 });
    expect(g.frame).toMatch(/^at /);
  });

  it("refuses a malformed fingerprint naming it, and answers 404 for a group that is not there", async () => {
    const bad = await api("POST", "/v1/errors/retry", { type: "t", fingerprint: "nope" });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details[0].path).toBe("fingerprint");
    expect((await api("POST", "/v1/errors/retry", { type: uniqueType(), fingerprint: "0123456789abcdef" })).status).toBe(404);
  });
});
