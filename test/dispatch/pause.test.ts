/**
 * Pausing one job end to end (docs/http-api.md "Pause and resume one job"): a pushed job asked to pause mid-step
 * finishes that step, and its handler SDK ends the attempt there, unspent, on the step's journal answer; resumed, it
 * replays its journaled steps and runs on. A pull worker hears the ask in its step's answer (`paused: true`). The
 * API refuses what it cannot pause or resume, naming the state.
 */
import { describe, expect, it, vi } from "vitest";
import { api, uniqueType, waitForJob } from "../helpers/api";
import { probe } from "../helpers/probe";

async function enqueue(type: string, payload: Record<string, unknown> = {}) {
  const r = await api("POST", "/v1/jobs", { type, payload });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.job as { id: string };
}

const steps = async (id: string) => ((await api("GET", `/v1/jobs/${id}/steps`)).body.items as { name: string }[]).map((s) => s.name);

describe("a pushed job paused mid-step", () => {
  it("finishes the step, pauses there unspent, and resumed replays its steps and runs the rest once", async () => {
    const { id } = await enqueue("test.steps", { mode: "held" });
    // Its second step runs, held at the test's gate.
    await vi.waitFor(async () => expect(await probe.stepRuns(id)).toEqual({ a: 1, b: 1 }), { timeout: 10_000, interval: 20 });

    const asked = await api("POST", `/v1/jobs/${id}/pause`, {});
    expect(asked.status, JSON.stringify(asked.body)).toBe(200);
    expect(asked.body.job).toMatchObject({ state: "running", waitingFor: [{ kind: "pause", name: "pause", until: null, dueAt: null }] });

    await probe.open(id);
    const paused = await waitForJob(id, (j) => j.state === "waiting");
    expect(paused).toMatchObject({ attempts: 0, waitingFor: [{ kind: "pause", name: "pause", until: null, dueAt: expect.any(Number) }] });
    expect(await steps(id)).toEqual(["a", "b"]);
    expect(await probe.stepRuns(id)).toEqual({ a: 1, b: 1 });

    const resumed = await api("POST", `/v1/jobs/${id}/resume`, {});
    expect(resumed.status, JSON.stringify(resumed.body)).toBe(200);
    const done = await waitForJob(id, (j) => j.state === "completed");
    expect(done).toMatchObject({ result: { c: 3 }, attempts: 1, waitingFor: null });
    expect(await probe.stepRuns(id)).toEqual({ a: 1, b: 1, c: 1 });
    const timeline = (await api("GET", `/v1/jobs/${id}/timeline`)).body.steps as { state: string; note: string | null }[];
    expect(timeline.map((s) => s.state)).toEqual(["pending", "running", "waiting", "pending", "running", "completed"]);
    expect(timeline[2]!.note).toMatch(/^paused/);
  });
});

describe("the pause and resume calls", () => {
  it("a pull worker's step answer says paused; a finished job is not paused; a job not paused is not resumed", async () => {
    const type = uniqueType("pullpause");
    const { id } = await enqueue(type);
    const [job] = (await api("POST", "/v1/claim", { worker: "w", types: [type] })).body.jobs;
    const start = { at: Date.now(), seed: "00112233445566778899aabbccddeeff" };
    const commit = (seq: number, name: string) => api("POST", `/v1/jobs/${id}/steps`, { leaseToken: job.leaseToken, op: "commit", seq, name, result: seq, startedAt: Date.now(), start });
    expect((await commit(0, "a")).body).toEqual({ ok: true });
    expect((await api("POST", `/v1/jobs/${id}/pause`, {})).status).toBe(200);
    expect((await commit(1, "b")).body).toEqual({ ok: true, paused: true });
    // What edgequeue/worker sends then: a snooze, which pauses it — no error kept, none counted.
    const snoozed = await api("POST", `/v1/jobs/${id}/fail`, { leaseToken: job.leaseToken, error: "snoozed", retryAfterMs: 0, consumesAttempt: false, snooze: true });
    expect(snoozed.body.job).toMatchObject({ state: "waiting", attempts: 0, lastError: null, waitingFor: [{ kind: "pause" }] });
    expect((await api("GET", `/v1/errors?type=${type}`)).body.items).toEqual([]);

    const notPaused = await enqueue(type);
    const refused = await api("POST", `/v1/jobs/${notPaused.id}/resume`, {});
    expect([refused.status, refused.body.error.code, refused.body.error.message]).toEqual([409, "conflict", expect.stringMatching(/job is pending and not paused/)]);
    await api("POST", `/v1/jobs/${notPaused.id}/cancel`, {});
    const finished = await api("POST", `/v1/jobs/${notPaused.id}/pause`, {});
    expect([finished.status, finished.body.error.code]).toEqual([409, "already_terminal"]);
    expect((await api("POST", "/v1/jobs/nope/pause", {})).status).toBe(404);
    await api("POST", `/v1/jobs/${id}/cancel`, {});
  });
});
