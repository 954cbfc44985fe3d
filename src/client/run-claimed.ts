/**
 * runClaimed: run a job the caller leased inline (`claimOrEnqueue`), then the
 * followers its key gathered meanwhile (docs/producers.md "Inline claims").
 *
 * The lease is renewed every third of it while `fn` runs; a renewal refused
 * (the job was cancelled, or its lease lost) aborts `fn`'s signal. After the
 * job completes, the key's pending follower — the request that arrived while
 * it ran — is leased and run too, at most `maxDrains` of them. When `fn`
 * throws, the job is failed (the queue supersedes it if a follower is pending:
 * the follower carries the newer request), the follower is run, and the error
 * is thrown again.
 *
 * @module
 */
import type { JsonObject } from "../job/json-safe";
import type { LeasedJob, Scope } from "../job/schemas";
import { QueueClientError } from "./errors";

/** What runClaimed needs of a client: the lease holder's calls. */
export interface LeaseOps {
  heartbeat(id: string, leaseToken: string): Promise<unknown>;
  complete(id: string, leaseToken: string, result: JsonObject | undefined): Promise<unknown>;
  fail(id: string, leaseToken: string, error: string): Promise<unknown>;
  claimKey(req: { type: string; scope?: Scope; dedupeKey: string; worker: string; leaseMs: number }): Promise<LeasedJob | null>;
}

export interface RunClaimedOptions {
  /** Followers of the key to run after the job, at most (default 10). */
  maxDrains?: number;
  /** The lease each follower is claimed with (default 30 s); the job's own is the one it was claimed with. */
  leaseMs?: number;
  /** The lease owner's name for followers (default "inline"). */
  worker?: string;
}

export type ClaimedFn = (job: LeasedJob, run: { signal: AbortSignal }) => Promise<JsonObject | void | undefined> | JsonObject | void | undefined;

/** runClaimed: returns the first job's result. */
export async function runClaimed(ops: LeaseOps, handle: LeasedJob, fn: ClaimedFn, options: RunClaimedOptions = {}): Promise<JsonObject | undefined> {
  const maxDrains = options.maxDrains ?? 10;
  const leaseMs = options.leaseMs ?? 30_000;
  const next = () =>
    ops.claimKey({ type: handle.type, ...(handle.scope ? { scope: handle.scope } : {}), dedupeKey: handle.dedupeKey!, worker: options.worker ?? "inline", leaseMs });
  let first: JsonObject | undefined;
  let job: LeasedJob | null = handle;
  for (let drained = 0; job; drained++) {
    const current: LeasedJob = job;
    const abort = new AbortController();
    // A third of the lease it was given (by the queue's clock on both ends: leaseExpiresAt − startedAt).
    const renewEvery = Math.max(Math.floor((current.leaseExpiresAt - (current.startedAt ?? current.leaseExpiresAt - 30_000)) / 3), 100);
    const renew = setInterval(() => {
      ops.heartbeat(current.id, current.leaseToken).catch((e: unknown) => {
        if (e instanceof QueueClientError && (e.code === "lease_lost" || e.code === "already_terminal")) abort.abort(e);
      });
    }, renewEvery);
    let result: JsonObject | undefined;
    try {
      result = (await fn(current, { signal: abort.signal })) ?? undefined;
    } catch (e) {
      clearInterval(renew);
      const failed = (await ops.fail(current.id, current.leaseToken, e instanceof Error ? e.message || e.name : String(e)).catch(() => null)) as { outcome?: string } | null;
      // Superseded: a follower was pending and carries the newer request — run it before the error goes up. Otherwise
      // the job itself is retried after its backoff (whoever claims its type, or the key's next inline request).
      const follower = drained < maxDrains && failed?.outcome === "superseded" ? await next() : null;
      if (follower) await runClaimed(ops, follower, fn, { ...options, maxDrains: maxDrains - drained - 1 }).catch(() => undefined);
      throw e;
    }
    clearInterval(renew);
    await ops.complete(current.id, current.leaseToken, result);
    if (current === handle) first = result;
    job = drained < maxDrains ? await next() : null;
  }
  return first;
}
