/**
 * Attempt: one leased job run by the pull worker — its handler through the
 * same contract as `defineHandlers` (runtime/run-one.ts), its lease kept
 * (runtime/lease.ts), and what it writes, fenced by that lease: once the lease
 * is lost (the queue said so, or its deadline passed unconfirmed) or the job
 * was given back, nothing more is written for it (docs/pull-workers.md "Pull
 * workers", Leases).
 *
 * @module
 */
import type { JobOutcome, JournalAnswer, JournalWrite } from "../job/handler-contract";
import type { WorkerHandlers } from "../runtime/context";
import { JobAbortedError } from "../runtime/errors";
import { runOne } from "../runtime/run-one";
import type { LeasedJob } from "../job/schemas";
import { refusesField } from "./answers";
import { dispatchOf, isOver, journalRefusal, settleWrite, stepAnswer, stepWrite } from "../runtime/lease-writes";
import { jobPath, type Call } from "./api";
import { Lease } from "../runtime/lease";

export interface AttemptDeps {
  call: Call;
  handlers: WorkerHandlers;
  env: unknown;
  /** The lease the claim asked for. */
  leaseMs: number;
  /** How often the worker renews it itself; null: only ctx.heartbeat(). */
  renewEveryMs: number | null;
  log: (line: Record<string, unknown>) => void;
  onError?: (error: string, job: LeasedJob, kind: "retry" | "failed") => void;
  /** A completed attempt's outcome, batched with others (pull-worker/completions.ts); resolves once answered. */
  complete: (a: Attempt, result: object | undefined, logs: JobOutcome["logs"]) => Promise<void>;
  /** The attempt is over: its outcome answered, or nothing more to write. */
  ended: (a: Attempt) => void;
  now?: () => number;
  /** The worker's code version (WorkerOptions `version`), sent with each attempt's end. */
  version?: string;
}

export class Attempt {
  readonly abort = new AbortController();
  /** false once the lease is lost or the job given back: nothing more is written for it. */
  live = true;
  readonly lease: Lease;
  /** Resolves when the handler has returned and what it produced is written (or dropped). */
  readonly done: Promise<void>;

  /** Starts `job`'s handler; `sentAt` is when its claim was sent, by this machine's clock. */
  constructor(
    readonly job: LeasedJob,
    sentAt: number,
    private readonly deps: AttemptDeps,
    /** The claim it came in: a batch handler runs a claim's jobs together (runtime/batch.ts). */
    private readonly group?: object,
  ) {
    this.lease = new Lease({
      job,
      sentAt,
      leaseMs: deps.leaseMs,
      renewEveryMs: deps.renewEveryMs,
      heartbeat: () => this.heartbeat(),
      onLapse: () => {
        if (!this.live) return;
        deps.log({ event: "worker:lease_lapsed", id: job.id, message: "no renewal of the lease was confirmed before it ended: the handler is aborted and nothing more is written for this attempt" });
        this.lost();
      },
      ...(deps.now ? { now: deps.now } : {}),
    });
    this.done = this.run();
  }

  /** lost: the lease is gone; the handler is told (`lease_lost`), and nothing more is written. */
  lost(): void {
    this.live = false;
    this.lease.end();
    if (!this.abort.signal.aborted) this.abort.abort(new JobAbortedError("lease_lost"));
  }

  /**
   * silence: stop() is giving the job back — no more writes, the handler told (`shutdown`). Returns whether the
   * lease was still held (then the job is the caller's to release).
   */
  silence(): boolean {
    const held = this.live;
    this.live = false;
    this.lease.end();
    if (!this.abort.signal.aborted) this.abort.abort(new JobAbortedError("shutdown"));
    return held;
  }

  /**
   * write: one write under the lease (POST /v1/jobs/{id}/<path>); skipped once the lease is gone. `older`: the
   * body to send again instead when a queue older than a field refuses it.
   */
  async write(path: string, body: Record<string, unknown>, older?: (e: unknown) => Record<string, unknown> | null): Promise<void> {
    if (!this.live) return;
    try {
      await this.deps.call("POST", `${jobPath(this.job.id)}/${path}`, { leaseToken: this.job.leaseToken, ...body });
    } catch (e) {
      const instead = older?.(e);
      if (instead) return this.write(path, instead);
      if (isOver(e)) this.lost();
      else this.deps.log({ event: "worker:write_failed", id: this.job.id, path, error: String(e) });
    }
  }

  /** heartbeat: the lease's new end (the queue's clock) when the queue confirmed it. */
  private async heartbeat(): Promise<number | undefined> {
    if (!this.live) return undefined;
    try {
      const out = await this.deps.call<{ leaseExpiresAt?: unknown }>("POST", `${jobPath(this.job.id)}/heartbeat`, { leaseToken: this.job.leaseToken });
      return typeof out.leaseExpiresAt === "number" && this.live ? out.leaseExpiresAt : undefined;
    } catch (e) {
      if (isOver(e)) this.lost();
      else this.deps.log({ event: "worker:write_failed", id: this.job.id, path: "heartbeat", error: String(e) });
      return undefined;
    }
  }

  private async journal(w: Omit<JournalWrite, "id">): Promise<JournalAnswer> {
    if (!this.live) return { ok: false, code: "lease_lost", message: "this attempt no longer holds the job" };
    const step = stepWrite(w);
    try {
      return stepAnswer(w, await this.deps.call<{ token?: unknown }>("POST", `${jobPath(this.job.id)}/${step.path}`, { leaseToken: this.job.leaseToken, ...step.body }));
    } catch (e) {
      const { answer, deposed } = journalRefusal(e);
      if (deposed) this.lost();
      return answer;
    }
  }

  /** progress: ctx.progress under the lease (POST /v1/jobs/{id}/progress); a refusal that says the attempt is over ends it. */
  private async progress(value: string): Promise<void> {
    if (!this.live) return;
    try {
      await this.deps.call("POST", `${jobPath(this.job.id)}/progress`, { leaseToken: this.job.leaseToken, progress: JSON.parse(value) });
    } catch (e) {
      if (isOver(e)) this.lost();
      else this.deps.log({ event: "worker:write_failed", id: this.job.id, path: "progress", error: String(e) });
    }
  }

  private async run(): Promise<void> {
    const { job, deps } = this;
    try {
      const out = await runOne(
        deps.handlers as never,
        dispatchOf(job),
        {
          signal: this.abort.signal,
          env: deps.env,
          journal: { write: (w) => this.journal(w) },
          heartbeat: () => this.lease.renew(),
          batchGroup: this.group,
          progress: (value) => this.progress(value),
          ...(deps.version !== undefined ? { version: deps.version } : {}),
        },
      );
      // The handler is done: no more renewals. The deadline still fences what it writes last.
      this.lease.stopRenewing();
      // A completion carries its lines; any other settle sends them first, under the lease it is about to end
      // (POST /v1/jobs/{id}/logs). A job that logs nothing sends nothing.
      if (out.logs && out.kind !== "completed") await this.write("logs", { items: out.logs });
      if ((out.kind === "retry" || out.kind === "failed") && deps.onError) {
        try {
          deps.onError(out.error, job, out.kind);
        } catch (e) {
          deps.log({ event: "worker:on_error_threw", id: job.id, error: String(e) });
        }
      }
      await this.settle(out);
    } catch (e) {
      deps.log({ event: "worker:job_failed", id: job.id, error: String(e) });
    } finally {
      this.lease.end();
      deps.ended(this);
    }
  }

  private async settle(out: JobOutcome): Promise<void> {
    if (out.kind === "completed") return this.live ? this.deps.complete(this, out.result ?? undefined, out.logs) : undefined;
    const w = settleWrite(out);
    // A queue older than a sleep's `durationMs` gets the wake time by this machine's clock (`until`).
    // A queue older than an error's `frame` (its error group), `nondeterminism` (its failure kind), an attempt's
    // `version` or a `snooze` gets the write without them (the failure still fatal; a snooze a retry not counted).
    const { durationMs: _, frame: __, nondeterminism: ___, version: ____, snooze: _____, ...older } = w.body;
    const newer = ["frame", "nondeterminism", "version", "snooze"].filter((f) => f in w.body);
    return this.write(w.path, w.body, (e) => ((w.path === "sleep" && "durationMs" in w.body && refusesField(e, "durationMs")) || newer.some((f) => refusesField(e, f)) ? older : null));
  }
}
