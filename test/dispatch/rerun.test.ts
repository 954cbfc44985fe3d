/**
 * Rerun (POST /v1/jobs/{id}/rerun; docs/workflows.md "Rerun from a step"): a new job from a finished one, linked
 * both ways, from a step of its journal — the steps before it replayed from their journaled results, not run — or
 * from the start, with its payload or a new one. Pushed to the test handler's `test.steps` "three" mode, whose
 * steps count their runs per job (probe.stepRuns).
 */
import { describe, expect, it } from "vitest";
import { api, isTerminal, waitForJob } from "../helpers/api";
import { probe } from "../helpers/probe";

type Step = { name: string; seq: number; result: unknown; startedAt: number; attempt: number };
const steps = async (id: string) => (await api("GET", `/v1/jobs/${id}/steps`)).body.items as Step[];

async function finishedThree(payload: Record<string, unknown> = {}) {
  const r = await api("POST", "/v1/jobs", { type: "test.steps", payload: { mode: "three", ...payload } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  const done = await waitForJob(r.body.job.id, isTerminal);
  expect(done).toMatchObject({ state: "completed", result: { c: 3 + ((payload.start as number | undefined) ?? 0) } });
  return done as { id: string; createdAt: number };
}

async function rerun(id: string, body: Record<string, unknown> = {}) {
  return api("POST", `/v1/jobs/${id}/rerun`, body);
}

describe("rerun from a step", () => {
  it("from the second of three steps runs only the second and third; the first is replayed from the journal", async () => {
    const old = await finishedThree();
    expect(await probe.stepRuns(old.id)).toEqual({ a: 1, b: 1, c: 1 });
    const oldSteps = await steps(old.id);

    const r = await rerun(old.id, { fromStep: "b" });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.job).toMatchObject({ type: "test.steps", rerunOf: old.id, reruns: [], attempts: expect.any(Number) });
    const done = await waitForJob(r.body.job.id, isTerminal);
    expect(done).toMatchObject({ state: "completed", result: { c: 3 }, attempts: 1, rerunOf: old.id });
    expect(await probe.stepRuns(done.id)).toEqual({ b: 1, c: 1 });
    // The kept step is the old job's entry as journaled (its time and attempt); the others ran in the rerun.
    const now = await steps(done.id);
    expect(now.map((s) => [s.seq, s.name, s.result])).toEqual([
      [0, "a", 1],
      [1, "b", 2],
      [2, "c", 3],
    ]);
    expect(now[0]!.startedAt).toBe(oldSteps[0]!.startedAt);
    expect(now[1]!.startedAt).toBeGreaterThanOrEqual(done.createdAt);
    // Linked both ways: the old job lists it.
    expect((await api("GET", `/v1/jobs/${old.id}`)).body.job.reruns).toEqual([done.id]);
  });

  it("without fromStep it starts over, with a new payload when given one; each rerun is listed in order", async () => {
    const old = await finishedThree();
    const first = await rerun(old.id, { payload: { mode: "three", start: 10 } });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const done = await waitForJob(first.body.job.id, isTerminal);
    expect(done).toMatchObject({ state: "completed", result: { c: 13 }, payload: { mode: "three", start: 10 } });
    expect(await probe.stepRuns(done.id)).toEqual({ a: 1, b: 1, c: 1 });

    // A new payload from a step: the kept steps keep their results (a counted from 0), the rest read them.
    const second = await rerun(old.id, { fromStep: "c", payload: { mode: "three", start: 100 } });
    const again = await waitForJob(second.body.job.id, isTerminal);
    expect(again.result).toEqual({ c: 3 });
    expect(await probe.stepRuns(again.id)).toEqual({ c: 1 });
    expect((await api("GET", `/v1/jobs/${old.id}`)).body.job.reruns).toEqual([done.id, again.id]);
  });

  it("a fromStep its journal does not hold is a 400 naming the field and the steps it holds; nothing is made", async () => {
    const old = await finishedThree();
    const r = await rerun(old.id, { fromStep: "shipping" });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe("invalid_request");
    expect(r.body.error.message).toBe(`fromStep: job ${old.id}'s journal holds no step "shipping" (it holds "a", "b", "c")`);
    expect(r.body.error.details).toEqual([{ path: "fromStep", message: expect.stringContaining('"shipping"') }]);
    expect((await api("GET", `/v1/jobs/${old.id}`)).body.job.reruns).toEqual([]);
  });

  it("a job still live is refused (409), an unknown job is a 404, and a bad body a 400 naming the field", async () => {
    const pending = await api("POST", "/v1/jobs", { type: "test.steps", payload: { mode: "three" }, delayMs: 3_600_000 });
    const live = await rerun(pending.body.job.id);
    expect(live.status).toBe(409);
    expect(live.body.error.message).toMatch(/it is pending; a rerun is made of a finished job/);
    expect((await rerun(`${pending.body.job.id}x`)).status).toBe(404);
    const bad = await rerun(pending.body.job.id, { fromStep: 7 });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details[0].path).toBe("fromStep");
    expect((await api("POST", `/v1/jobs/${pending.body.job.id}/cancel`, {})).status).toBe(200);
  });
});

describe("rerun by filter", () => {
  it("a dry run counts, a run reruns each finished match from the step; paging never reaches the reruns it made", async () => {
    const tag = `rerun-${crypto.randomUUID().slice(0, 8)}`;
    const olds: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await api("POST", "/v1/jobs", { type: "test.steps", payload: { mode: "three" }, tags: [tag] });
      olds.push((await waitForJob(r.body.job.id, isTerminal)).id);
    }
    const filter = { type: "test.steps", tag };
    const dry = await api("POST", "/v1/jobs/rerun", { filter, fromStep: "c", dryRun: true });
    expect(dry.body).toEqual({ changed: 3, skipped: 0, nextCursor: null });
    for (const id of olds) expect((await api("GET", `/v1/jobs/${id}`)).body.job.reruns).toEqual([]);

    // One job a call: each rerun (tagged too, and finished before the next call) is made after the walk began.
    const made: string[] = [];
    let cursor: string | undefined;
    for (let calls = 0; calls < 10; calls++) {
      const r = await api("POST", "/v1/jobs/rerun", { filter, fromStep: "c", limit: 1, ...(cursor ? { cursor } : {}) });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body.skipped).toBe(0);
      for (const id of olds) for (const n of (await api("GET", `/v1/jobs/${id}`)).body.job.reruns) if (!made.includes(n)) made.push(n);
      for (const id of made) await waitForJob(id, isTerminal);
      cursor = r.body.nextCursor ?? undefined;
      if (!cursor) break;
    }
    expect(made).toHaveLength(3);
    for (const id of made) expect(await probe.stepRuns(id)).toEqual({ c: 1 });
    // From a step one journal lacks: skipped, not refused.
    const none = await api("POST", "/v1/jobs/rerun", { filter: { ...filter, createdBefore: Date.now() + 1 }, fromStep: "shipping" });
    expect(none.body).toMatchObject({ changed: 0, skipped: 6 });
  });
});
