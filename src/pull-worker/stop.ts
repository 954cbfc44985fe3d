/**
 * Stop: the worker's shutdown. Claiming stops at once (a claim waiting for due
 * work is ended, unless the queue has begun to answer it); the handlers in
 * flight get `timeoutMs` to finish; past it, the claim still on its way is cut
 * off, the handlers are told (`shutdown`) and their jobs given back — pending,
 * due now, the attempt not counted — before anything else is written for them
 * (docs/pull-workers.md "Pull workers", Shutdown). What is left to say to the
 * queue then — the releases, the loop's last completions — gets SHUTDOWN_GRACE_MS:
 * a queue out of reach never holds stop() past its deadline and the grace (the
 * jobs it could not be told of come back when their leases end).
 *
 * @module
 */
import type { LeasedJob } from "../job/schemas";

/** How long stop() waits, past its deadline, for the queue to hear of what it gave back. */
export const SHUTDOWN_GRACE_MS = 5_000;

/** What stop() needs of a running attempt (pull-worker/attempt.ts). */
export interface Stoppable {
  readonly job: LeasedJob;
  readonly done: Promise<void>;
  /** No more writes, the handler told `shutdown`; true when its lease was still held (the job is ours to give back). */
  silence(): boolean;
}

export interface StopDeps<A extends Stoppable> {
  /** Stop claiming: the loop ends, a waiting claim is ended unless its answer is arriving. */
  stopClaiming(): void;
  /** Every attempt whose outcome is not answered yet (stop() waits for these). */
  unanswered(): A[];
  /** The attempts still holding a slot (past the deadline, these are aborted and given back). */
  holding(): A[];
  /** Past the deadline: the claim on its way is cut off. */
  cutOff(): void;
  /** Give a job back; `signal` ends the call once the grace is over. */
  release(job: LeasedJob, signal?: AbortSignal): Promise<void>;
  /** The claim loop, if it runs: stop() waits for it as for the handlers, and resolves once it has ended. */
  loop(): Promise<unknown> | null;
}

export async function stopWorker<A extends Stoppable>(deps: StopDeps<A>, timeoutMs: number): Promise<void> {
  deps.stopClaiming();
  let timer: ReturnType<typeof setTimeout> | undefined;
  // Done: every handler has returned and its outcome is answered, and the loop has ended (a claim it was answered
  // with after stop() was called is given back first).
  const done = Promise.all([...deps.unanswered().map((a) => a.done), deps.loop()?.catch(() => undefined)]).then(() => false);
  const late = await Promise.race([done, new Promise<boolean>((r) => (timer = setTimeout(() => r(true), timeoutMs)))]);
  if (timer !== undefined) clearTimeout(timer);
  if (!late) return void (await deps.loop()?.catch(() => undefined));
  deps.cutOff();
  const grace = new AbortController();
  const over = new Promise<void>((resolve) => (timer = setTimeout(() => (grace.abort(new Error("stop(): the queue did not answer within the grace")), resolve()), SHUTDOWN_GRACE_MS)));
  // Silence each job first: the aborted handler's own outcome (a retry that would spend the attempt) must not race the release.
  const released = Promise.all(deps.holding().map(async (a) => (a.silence() ? deps.release(a.job, grace.signal) : undefined)));
  await Promise.race([Promise.all([released, deps.loop()?.catch(() => undefined)]), over]);
  clearTimeout(timer!);
}

type Process = { once(s: string, f: () => void): void; off(s: string, f: () => void): void };

/** onSignals: `stop` on SIGTERM and SIGINT, once (never process.exit); returns the uninstaller. Outside Node, nothing. */
export function onSignals(stop: () => void): () => void {
  const proc = (globalThis as { process?: Process }).process;
  if (!proc) return () => {};
  proc.once("SIGTERM", stop);
  proc.once("SIGINT", stop);
  return () => {
    proc.off("SIGTERM", stop);
    proc.off("SIGINT", stop);
  };
}
