/**
 * WaitDO `wait:<jobType>`: where pull claims that asked to wait (`waitMs`)
 * park until work of their type comes due (docs/pull-workers.md "Pull workers").
 *
 * Waiting costs the queue nothing per second: a parked claim is one promise in
 * this object's memory — no storage, no alarm, no catalog write. A scope object
 * that makes a pulled type's job due (an enqueue, a retry, a release, a delayed
 * job whose alarm fired) calls `notify(home)` (throttled per type, scope/
 * wait-notify.ts); the parked claims wake with the home and claim from it
 * directly. Notices are kept (RECENT_MS) and a claim asks for those after the
 * moment it started, so one that arrives while the claim is still on its way
 * is not slept through, and one already acted on is not acted on again. Nothing here
 * is durable: an evicted WaitDO drops its claims, which then come back empty
 * at the latest when their worker's request ends and the worker claims again.
 *
 * @module
 */
import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";
import { Meter, meterRequests } from "../metering/meter";
import { sendUsageWhenIdle, USAGE_CATALOG } from "../metering/usage-sender";

/** Notices are kept this long (a claim's longest wait), so a claim that started before one arrived still sees it. */
const RECENT_MS = 30_000;

export class WaitDO extends DurableObject<Env> {
  private readonly waiting = new Set<(homes: string[], at: number) => void>();
  /** home → when it last said it had due work. */
  private readonly recent = new Map<string, number>();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    // No storage here: its usage is requests and active time (a parked claim is a request in progress).
    sendUsageWhenIdle(Meter.install(this, ctx, "wait"), (report) => env.CATALOG.getByName(USAGE_CATALOG).usage(report), (p) => ctx.waitUntil(p));
  }

  /**
   * wait: the homes that said they have new due work after `since` (the claim's start, or the last
   * notice it acted on) — at once if some already did, else when the next one does; [] after `ms`.
   */
  async wait(ms: number, since: number): Promise<{ homes: string[]; at: number }> {
    const now = Date.now();
    const fresh: string[] = [];
    let at = since;
    for (const [home, t] of this.recent) {
      if (now - t > RECENT_MS) this.recent.delete(home);
      else if (t > since) {
        fresh.push(home);
        at = Math.max(at, t);
      }
    }
    if (fresh.length > 0) return { homes: fresh, at };
    return new Promise((resolve) => {
      const done = (homes: string[], t: number) => {
        clearTimeout(timer);
        this.waiting.delete(done);
        resolve({ homes, at: t });
      };
      const timer = setTimeout(() => done([], since), ms);
      this.waiting.add(done);
    });
  }

  /** notify: `home` has due work of this type; wakes every parked claim. Returns how many were woken. */
  async notify(home: string): Promise<number> {
    const at = Date.now();
    this.recent.set(home, at);
    const woken = [...this.waiting];
    for (const done of woken) done([home], at);
    return woken.length;
  }
}

meterRequests(WaitDO);
