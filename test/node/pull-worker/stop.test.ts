/**
 * pull-worker/stop.ts on vitest's fake clock: stop() stops claiming at once, waits
 * for the attempts in flight and the loop up to its deadline, and past it cuts
 * off the claim on its way, silences each attempt and releases the jobs whose
 * lease it still held.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { onSignals, SHUTDOWN_GRACE_MS, stopWorker, type StopDeps, type Stoppable } from "../../../src/pull-worker/stop";
import { leasedJob } from "./fake-queue-api";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

/** An attempt that ends when told, or after `ms`; `held`: its lease still held when silenced. */
function attempt(id: string, ms: number, held = true) {
  let end!: () => void;
  const done = new Promise<void>((resolve) => {
    end = resolve;
    setTimeout(resolve, ms);
  });
  const a = { job: leasedJob(id, "t", 0, 30_000), done, silenced: false, silence: () => ((a.silenced = true), end(), held) };
  return a;
}

function deps(attempts: ReturnType<typeof attempt>[], loop: Promise<unknown> | null = null) {
  const said: string[] = [];
  const d: StopDeps<Stoppable & { silenced: boolean }> = {
    stopClaiming: () => said.push("stop claiming"),
    unanswered: () => attempts,
    holding: () => attempts,
    cutOff: () => said.push("cut off"),
    release: async (job) => void said.push(`release ${job.id}`),
    loop: () => loop,
  };
  return { d, said };
}

describe("stopWorker", () => {
  it("attempts that finish within the deadline: nothing is cut off, aborted or released", async () => {
    const attempts = [attempt("a", 1_000), attempt("b", 2_000)];
    const { d, said } = deps(attempts);
    let stopped = false;
    const stopping = stopWorker(d, 5_000).then(() => (stopped = true));
    expect(said).toEqual(["stop claiming"]);
    await vi.advanceTimersByTimeAsync(1_999);
    expect(stopped).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await stopping;
    expect(said).toEqual(["stop claiming"]);
    expect(attempts.map((a) => a.silenced)).toEqual([false, false]);
  });

  it("past the deadline: the claim on its way is cut off, each attempt silenced, and only the jobs still held released", async () => {
    const attempts = [attempt("a", 60_000), attempt("b", 60_000, false)];
    const { d, said } = deps(attempts);
    const stopping = stopWorker(d, 5_000);
    await vi.advanceTimersByTimeAsync(5_000);
    await stopping;
    expect(said).toEqual(["stop claiming", "cut off", "release a"]);
    expect(attempts.map((a) => a.silenced)).toEqual([true, true]);
  });

  it("the loop is waited for as the handlers are: one still claiming at the deadline is cut off, then awaited", async () => {
    let loopEnds!: () => void;
    const loop = new Promise<void>((resolve) => (loopEnds = resolve));
    const { d, said } = deps([], loop);
    d.cutOff = () => (said.push("cut off"), loopEnds());
    let stopped = false;
    const stopping = stopWorker(d, 1_000).then(() => (stopped = true));
    await vi.advanceTimersByTimeAsync(999);
    expect(stopped).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await stopping;
    expect(said).toEqual(["stop claiming", "cut off"]);
  });

  it("a queue out of reach: stop() resolves by its deadline plus the grace, and the hanging release is ended", async () => {
    const attempts = [attempt("a", 60_000)];
    const { d } = deps(attempts, new Promise(() => {})); // the loop's last completions never answered either
    let releaseSignal: AbortSignal | undefined;
    d.release = (_job, signal) => ((releaseSignal = signal), new Promise(() => {}));
    let stopped = false;
    const stopping = stopWorker(d, 1_000).then(() => (stopped = true));
    await vi.advanceTimersByTimeAsync(1_000 + SHUTDOWN_GRACE_MS - 1);
    expect(stopped).toBe(false);
    expect(releaseSignal?.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await stopping;
    expect(releaseSignal?.aborted).toBe(true);
  });

  it("a loop that ended with a rejection still lets stop() resolve", async () => {
    const { d } = deps([], Promise.reject(new Error("refused")));
    await expect(stopWorker(d, 1_000)).resolves.toBeUndefined();
  });
});

describe("onSignals", () => {
  it("SIGTERM calls stop once; the uninstaller removes it", () => {
    const proc = (globalThis as unknown as { process: { emit(signal: string): boolean } }).process;
    let stops = 0;
    const uninstall = onSignals(() => stops++);
    proc.emit("SIGTERM");
    proc.emit("SIGTERM");
    expect(stops).toBe(1);
    uninstall();
    const again = onSignals(() => stops++);
    again();
    proc.emit("SIGINT");
    expect(stops).toBe(1);
  });
});
