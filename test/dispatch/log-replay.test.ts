/**
 * A job's kept log lines and replay (docs/handlers.md "Logs kept with the job"): a line logged while the handler
 * replays journaled steps was logged, and kept, by the attempt that journaled them, and is not kept again. One
 * handler (test/fixtures/handler loggedSteps: a line before each of two steps, failing once after the first), run
 * pushed through the real handler Worker, pulled by edgequeue/worker, and in edgequeue/testing's runJob.
 */
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { loggedSteps } from "../fixtures/handler";
import { createWorker } from "../../src/pull-worker";
import { runJob } from "../../src/testing";
import { api, isTerminal, TOKEN, uniqueType, waitForJob } from "../helpers/api";

const fetchCoordinator = ((input: string, init?: RequestInit) => (exports as unknown as { default: Fetcher }).default.fetch(input, init)) as typeof fetch;

const kept = async (id: string) => ((await api("GET", `/v1/jobs/${id}/logs`)).body.items as { attempt: number; message: string; fields: unknown }[]).map((l) => [l.attempt, l.message, l.fields]);

/** Each line once, with the attempt that first logged it: "before a" in the first, "before b" in the retry. */
const ONCE = [
  [1, "before a", { step: "a" }],
  [2, "before b", { step: "b" }],
];

describe("lines logged while replaying journaled steps are kept once", () => {
  it("pushed: the retry replays step a and its line, and keeps only the line after it", async () => {
    const id = (await api("POST", "/v1/jobs", { type: "test.log", payload: { lines: 0, steps: true } })).body.job.id as string;
    expect(await waitForJob(id, isTerminal)).toMatchObject({ state: "completed", result: { steps: 2 } });
    expect(await kept(id)).toEqual(ONCE);
  });

  it("pulled: the first attempt's line goes before its retry, the retry's with its completion; the replayed one is printed, marked", async () => {
    const type = uniqueType("pull.logged");
    const w = createWorker({ url: "http://queue.test", token: TOKEN, types: [type], handlers: { [type]: (_p: unknown, ctx: any) => loggedSteps(ctx) }, fetch: fetchCoordinator, log: () => {} });
    const id = (await api("POST", "/v1/jobs", { type, payload: {}, backoff: { kind: "fixed", baseMs: 0 } })).body.job.id as string;
    // The handler's own console: every line of every attempt, the replayed one marked (the Worker's logs tell each run).
    const printed: { attempt: number; message: string; replay?: boolean }[] = [];
    const print = console.log;
    console.log = (line: unknown) => void (typeof line === "string" && line.includes('"job:log"') ? printed.push(JSON.parse(line)) : print(line));
    try {
      expect(await w.runOnce()).toBe(1);
      expect((await api("GET", `/v1/jobs/${id}`)).body.job).toMatchObject({ state: "pending", attempts: 1 });
      expect(await w.runOnce()).toBe(1);
    } finally {
      console.log = print;
      await w.stop();
    }
    expect((await api("GET", `/v1/jobs/${id}`)).body.job).toMatchObject({ state: "completed", result: { steps: 2 } });
    expect(await kept(id)).toEqual(ONCE);
    expect(printed.map((l) => [l.attempt, l.message, l.replay ?? false])).toEqual([
      [1, "before a", false],
      [2, "before a", true],
      [2, "before b", false],
    ]);
  });

  it("edgequeue/testing's run.logs are the lines the queue keeps", async () => {
    const run = await (await runJob((_p, ctx) => loggedSteps(ctx), {})).settle();
    expect(run).toMatchObject({ state: "completed", runs: 2 });
    expect(run.logs.map((l) => [l.attempt, l.message, l.fields])).toEqual(ONCE);
  });
});
