/**
 * Code that changes under running jobs (docs/deploy.md "Code that changes under running jobs"): a job that waits
 * across a deploy replays on the new code. `ctx.patched(name)` keeps a job whose journal went past the patched
 * point on its old path, and sends a job that first reaches it on the new code down the new one; a change without
 * it fails the old job with NondeterminismError naming the step that differs. The test handler's `test.patch` has
 * its code swapped by Probe.deploy, as a deploy swaps a Worker's.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { api, isTerminal, waitForJob } from "../helpers/api";
import { probe } from "../helpers/probe";

const steps = async (id: string) => ((await api("GET", `/v1/jobs/${id}/steps`)).body.items as { seq: number; name: string; kind: string }[]).map((s) => `${s.seq}:${s.kind}:${s.name}`);

async function waiting(): Promise<string> {
  const id = (await api("POST", "/v1/jobs", { type: "test.patch", payload: {} })).body.job.id as string;
  await vi.waitFor(async () => expect((await api("GET", `/v1/jobs/${id}`)).body.job.state).toBe("waiting"), { timeout: 10_000 });
  return id;
}

const go = (id: string) => api("POST", `/v1/jobs/${id}/signals/go`, { data: "ok" });

afterEach(async () => probe.deploy("old"));

describe("ctx.patched across a deploy", () => {
  it("a job that journaled past the patched point keeps its old path; one that first reaches it takes the new", async () => {
    await probe.deploy("old");
    const old = await waiting();
    expect(await steps(old)).toEqual(["0:step:a", "1:step:b", "2:signal:go"]);

    await probe.deploy("patched");
    const fresh = await waiting();
    // The new job journals the patch where it first reached it, then the new step.
    expect(await steps(fresh)).toEqual(["0:step:a", "1:patch:use-b2", "2:step:b2", "3:signal:go"]);

    await go(old);
    await go(fresh);
    expect(await waitForJob(old, isTerminal)).toMatchObject({ state: "completed", result: { path: "old", go: "ok" } });
    expect(await waitForJob(fresh, isTerminal)).toMatchObject({ state: "completed", result: { path: "new", go: "ok" } });
    // The old job's replay took no position for the patch: its journal is as it was, with its wait ended.
    expect(await steps(old)).toEqual(["0:step:a", "1:step:b", "2:signal:go"]);
  });

  it("without ctx.patched, the changed code fails the old job with NondeterminismError naming the step", async () => {
    await probe.deploy("old");
    const old = await waiting();
    await probe.deploy("naive");
    await go(old);
    const done = await waitForJob(old, isTerminal);
    // A failure kind of its own: not a handler's fatal error, and not retried.
    expect(done).toMatchObject({ state: "failed", failureKind: "nondeterminism", codeVersion: "test-naive" });
    expect(done.lastError).toMatch(/^NondeterminismError: step 1 is step "b" in the journal, but the code now calls step "b2"/);
    // Each attempt's end names the code that ran it: the one that waited ran before the deploy, the failed one after.
    const timeline = (await api("GET", `/v1/jobs/${old}/timeline`)).body.steps as { state: string; attempt: number; version?: string | null }[];
    expect(timeline.filter((s) => s.version !== undefined).map((s) => `${s.state}@${s.version}`)).toEqual(["waiting@test-old", "failed@test-naive"]);
    // Grouped as its own kind of error.
    const groups = (await api("GET", "/v1/errors?type=test.patch")).body.items as { kind: string; message: string }[];
    expect(groups.some((g) => g.kind === "nondeterminism" && g.message.startsWith("NondeterminismError: step <n>"))).toBe(true);
  });
});
