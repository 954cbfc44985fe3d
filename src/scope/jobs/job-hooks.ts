/**
 * What the core's writes let the capabilities do inside the same transaction,
 * without the core knowing them (docs/design.md "The scope object: a core and
 * its capabilities"): each capability gives the hooks it needs, and the shell
 * joins them in the capability list's order (capability.ts `joinHooks`). A
 * hook runs inside the write's transaction, so what it writes commits or rolls
 * back with the job's own row.
 *
 * @module
 */
import type { JobHooks } from "./home-store";

export type { Cancelling, JobHooks } from "./home-store";

/** joinHooks: each hook runs every capability's part, in list order. */
export function joinHooks(parts: readonly Partial<JobHooks>[]): JobHooks {
  const all = <K extends Exclude<keyof JobHooks, "startable" | "holdRetry">>(k: K) => parts.flatMap((p) => (p[k] ? [p[k]!] : [])) as ((...a: Parameters<JobHooks[K]>) => void)[];
  const ended = all("ended");
  const failed = all("failed");
  const erred = all("erred");
  const retrying = all("retrying");
  const retried = all("retried");
  const cancelling = all("cancelling");
  const startable = parts.flatMap((p) => (p.startable ? [p.startable] : []));
  const holdRetry = parts.flatMap((p) => (p.holdRetry ? [p.holdRetry] : []));
  return {
    ended: (...a) => ended.forEach((f) => f(...a)),
    failed: (...a) => failed.forEach((f) => f(...a)),
    erred: (...a) => erred.forEach((f) => f(...a)),
    retrying: (...a) => retrying.forEach((f) => f(...a)),
    retried: (...a) => retried.forEach((f) => f(...a)),
    cancelling: (...a) => cancelling.forEach((f) => f(...a)),
    startable: (...a) => (startable.length === 0 ? 0 : Math.min(...startable.map((f) => f(...a)))),
    holdRetry: (...a) => holdRetry.length > 0 && holdRetry.every((f) => f(...a)),
  };
}
