/**
 * The subscriptions a dashboard page opens to update live (docs/http-api.md "Live subscriptions"; the page's script
 * is assets.ts): a job's page follows its job until it ends; the jobs list follows every job of the objects its rows
 * live in (and of the scope it is filtered to), at most LIVE_OBJECTS of them — the rest is left to the slow timer.
 * Signed here, as POST /v1/subscriptions signs them: the dashboard runs in the queue's own Worker.
 *
 * @module
 */
import type { Env } from "../env";
import { homeOfJobId, scopeHome } from "../job/home";
import type { Job } from "../job/schemas";
import { SUBSCRIPTION_PATH } from "../job/schemas/subscriptions";
import { signSubscription, type Follows, type Subscription } from "../job/subscription";

/** A page's subscriptions live this long (a page left open longer falls back to its timer). */
const LIVE_TTL_MS = 3600_000;
/** The jobs list opens at most this many sockets. */
export const LIVE_OBJECTS = 10;

type Follow = Follows & { home: string };

async function paths(env: Env, follows: readonly Follow[], now: number): Promise<string[]> {
  if (!env.QUEUE_TOKEN) return [];
  // An operator's page: everything but payloads, which it reads with the job when it refreshes.
  const inc: Subscription["inc"] = ["progress", "steps", "logs", "result"];
  return Promise.all(follows.map(async (f) => `${SUBSCRIPTION_PATH}/${await signSubscription(env.QUEUE_TOKEN!, { ...f, exp: now + LIVE_TTL_MS, inc } as Subscription)}`));
}

/** jobPaths: a job's page follows the job while it has not ended. */
export function jobPaths(env: Env, job: Job, now: number): Promise<string[]> {
  const home = homeOfJobId(job.id);
  return job.finishedAt !== null || !home ? Promise.resolve([]) : paths(env, [{ kind: "job", id: job.id, home: home.name }], now);
}

/** listPaths: the jobs list follows every job of its rows' objects, and of the scope it is filtered to. */
export function listPaths(env: Env, items: readonly Job[], scope: { type: string; id: string } | null, now: number): Promise<string[]> {
  const homes = new Set<string>();
  if (scope) homes.add(scopeHome(scope).name);
  for (const j of items) {
    const home = homeOfJobId(j.id);
    if (home) homes.add(home.name);
  }
  return paths(env, [...homes].slice(0, LIVE_OBJECTS).map((home) => ({ kind: "scope" as const, home })), now);
}
