/**
 * runClaimed: run a job the caller leased inline (`claimOrEnqueue`), then the
 * followers its key gathered meanwhile (docs/producers.md "Inline claims").
 *
 * The lease is renewed every third of it while `fn` runs (runtime/lease.ts). A
 * renewal refused (the job was cancelled, or its lease lost) aborts `fn`'s
 * signal, and so does the lease's end by this machine's clock when no renewal
 * was confirmed (the queue out of reach): the queue gives an expired lease's
 * job to the next claim, so `fn` must not run on beside it (docs/guarantees.md
 * "Guarantees and limits"). Once the lease is gone, nothing more is written for
 * the job and no follower is run: runClaimed rejects with the signal's reason
 * (a QueueClientError, code `lease_lost` or `already_terminal`). After the job
 * completes, the key's pending follower — the request that arrived while it
 * ran — is leased and run too, at most `maxDrains` of them. When `fn` throws,
 * the job is failed (the queue supersedes it if a follower is pending: the
 * follower carries the newer request), the follower is run, and the error is
 * thrown again.
 *
 * @module
 */
import type { JobContext } from "../runtime/context";
import { runOne } from "../runtime/run-one";
import type { JournalAnswer, JournalWrite } from "../job/handler-contract";
import type { JsonObject } from "../job/json-safe";
import type { LeasedJob, Scope } from "../job/schemas";
import { grantedMs, Lease } from "../runtime/lease";
import { dispatchOf, journalRefusal, settleWrite, stepAnswer, stepWrite, type LeaseWrite } from "../runtime/lease-writes";
import { QueueClientError } from "./errors";

/**
 * When each handle's claim was sent, by this machine's clock: its lease began no earlier (runtime/lease.ts). The
 * client's claimOrEnqueue notes it; a handle it did not make is renewed first, so its lease is placed from then.
 */
const claimSentAt = new WeakMap<object, number>();

/** noteClaimSent: `handle`'s claim was sent at `sentAt` (this machine's clock). */
export function noteClaimSent<T extends object | null>(handle: T, sentAt: number): T {
  if (handle !== null) claimSentAt.set(handle, sentAt);
  return handle;
}

/** What runClaimed needs of a client: the lease holder's calls. */
export interface LeaseOps {
  /** Renews the lease; answers its new end (the queue's clock). */
  heartbeat(id: string, leaseToken: string): Promise<{ leaseExpiresAt: number }>;
  complete(id: string, leaseToken: string, result: JsonObject | undefined): Promise<unknown>;
  /** An attempt's other writes under its lease (a durable step, a sleep, its waits, a failure): `POST /v1/jobs/{id}/<path>`; answers the body. */
  write(id: string, leaseToken: string, w: LeaseWrite): Promise<unknown>;
  claimKey(req: { type: string; scope?: Scope; dedupeKey: string; worker: string; leaseMs: number }): Promise<LeasedJob | null>;
}

export interface RunClaimedOptions {
  /** Followers of the key to run after the job, at most (default 10). */
  maxDrains?: number;
  /** The lease each follower is claimed with (default 30 s); the job's own is the one it was claimed with. */
  leaseMs?: number;
  /** The lease owner's name for followers (default "inline"). */
  worker?: string;
  /** `ctx.env` for `fn`. */
  env?: unknown;
}

/**
 * What `fn` gets besides the job: a handler's context (docs/handlers.md) — `signal`, `ctx.step`, `ctx.sleep`, the
 * waits and `ctx.invoke` (docs/workflows.md), `ctx.log`, `ctx.heartbeat` — written under the inline lease.
 */
export type ClaimedContext = JobContext<string, unknown>;

export type ClaimedFn = (job: LeasedJob, ctx: ClaimedContext) => Promise<JsonObject | void | undefined> | JsonObject | void | undefined;

/**
 * runClaimed: returns the first job's result — undefined when its attempt ended on a sleep, a wait or a snooze (the
 * job's next attempt is run by whatever claims its type, and no follower is run: the key is still held).
 */
export async function runClaimed(ops: LeaseOps, handle: LeasedJob, fn: ClaimedFn, options: RunClaimedOptions = {}): Promise<JsonObject | undefined> {
  const maxDrains = options.maxDrains ?? 10;
  const leaseMs = options.leaseMs ?? 30_000;
  // When the current job's claim was sent, by this machine's clock (its lease is kept from then): the caller's handle
  // as claimOrEnqueue noted it — not when runClaimed was called, however long the caller held the handle.
  let sentAt = claimSentAt.get(handle) ?? null;
  let first: JsonObject | undefined;
  let job: LeasedJob | null = handle;
  if (sentAt === null) {
    // A handle from elsewhere: its claim's time is unknown here, so renew it first and keep its lease from the renewal.
    sentAt = Date.now();
    const renewed = await ops.heartbeat(handle.id, handle.leaseToken);
    const granted = grantedMs(handle, 30_000);
    job = { ...handle, startedAt: renewed.leaseExpiresAt - granted, leaseExpiresAt: renewed.leaseExpiresAt };
  }
  const next = () => {
    sentAt = Date.now();
    return ops.claimKey({ type: handle.type, ...(handle.scope ? { scope: handle.scope } : {}), dedupeKey: handle.dedupeKey!, worker: options.worker ?? "inline", leaseMs });
  };
  const firstJob = job;
  for (let drained = 0; job; drained++) {
    const current: LeasedJob = job;
    const abort = new AbortController();
    // Once the queue says the lease is gone, nothing more is written for the job.
    const depose = (e: unknown) => {
      lease.end();
      if (!abort.signal.aborted) abort.abort(e);
    };
    const lease = new Lease({
      job: current,
      sentAt: sentAt!,
      leaseMs: current === firstJob ? 30_000 : leaseMs,
      // A third of the lease it was given (by the queue's clock on both ends: leaseExpiresAt − startedAt).
      renewEveryMs: Math.max(Math.floor(grantedMs(current, 30_000) / 3), 100),
      heartbeat: async () => {
        try {
          const out = await ops.heartbeat(current.id, current.leaseToken);
          return typeof out?.leaseExpiresAt === "number" ? out.leaseExpiresAt : undefined;
        } catch (e) {
          if (e instanceof QueueClientError && (e.code === "lease_lost" || e.code === "already_terminal")) depose(e);
          return undefined;
        }
      },
      onLapse: () => abort.abort(new QueueClientError("lease_lost", `no renewal of job ${current.id}'s lease was confirmed before it ended: the queue may give the job to another runner`)),
    });
    const journal = async (w: Omit<JournalWrite, "id">): Promise<JournalAnswer> => {
      if (abort.signal.aborted) return { ok: false, code: "lease_lost", message: "this attempt no longer holds the job" };
      try {
        return stepAnswer(w, (await ops.write(current.id, current.leaseToken, stepWrite(w))) as { token?: unknown });
      } catch (e) {
        const { answer, deposed } = journalRefusal(e);
        if (deposed) depose(e);
        return answer;
      }
    };
    // What fn threw, to throw again to the caller once the job is failed (the outcome keeps only its message).
    let thrown: { error: unknown } | null = null;
    const out = await runOne(
      {
        [current.type]: async (_payload: unknown, ctx: ClaimedContext) => {
          try {
            return await fn(current, ctx);
          } catch (e) {
            thrown = { error: e };
            throw e;
          }
        },
      },
      dispatchOf(current),
      { signal: abort.signal, env: options.env, journal: { write: journal }, heartbeat: () => lease.renew() },
    );
    lease.end();
    // The lease is gone: the job is not ours to settle (its next attempt may be running already).
    if (abort.signal.aborted) throw abort.signal.reason;
    // Its ctx.log lines are kept with the job (docs/operating.md), written under the lease before what ends it; a
    // refused write of them costs the lines, not the job.
    if (out.logs) await ops.write(current.id, current.leaseToken, { path: "logs", body: { items: out.logs } }).catch(() => undefined);
    if (out.kind === "completed") {
      const result = (out.result ?? undefined) as JsonObject | undefined;
      await ops.complete(current.id, current.leaseToken, result);
      if (current === firstJob) first = result;
      job = drained < maxDrains ? await next() : null;
      continue;
    }
    // A sleep, a wait or a snooze ends the attempt: its write must land (a refusal is thrown), and no follower runs.
    if (out.kind !== "retry" && out.kind !== "failed") {
      await ops.write(current.id, current.leaseToken, settleWrite(out));
      return first;
    }
    const settled = (await ops.write(current.id, current.leaseToken, settleWrite(out)).catch(() => null)) as { outcome?: string } | null;
    // Superseded: a follower was pending and carries the newer request — run it before the error goes up. Otherwise
    // the job itself is retried after its backoff (whoever claims its type, or the key's next inline request).
    const follower = drained < maxDrains && settled?.outcome === "superseded" ? await next() : null;
    if (follower) await runClaimed(ops, follower, fn, { ...options, maxDrains: maxDrains - drained - 1 }).catch(() => undefined);
    throw thrown === null ? new Error(out.error) : (thrown as { error: unknown }).error;
  }
  return first;
}
