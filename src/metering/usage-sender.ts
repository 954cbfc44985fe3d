/**
 * How an object that sends no summaries (a pool, the schedules, a claim-wait
 * object) gets its usage to the catalog: when its last request in progress
 * ends, if anything is unsent and USAGE_SEND_EVERY_MS has passed since its
 * last send, it sends it — one catalog request per active object per ten
 * seconds at most, never on the hot path (the send is not awaited by any
 * request). What an instance used in its last seconds before eviction is
 * lost (docs/design.md "What a job costs").
 *
 * @module
 */
import type { Meter } from "./meter";
import type { ObjectKind, Usage } from "./usage";

export const USAGE_SEND_EVERY_MS = 10_000;
/** Usage goes to the first catalog shard (catalog/shards.ts names it `catalog`); /v1/metrics sums the shards. */
export const USAGE_CATALOG = "catalog";

export function sendUsageWhenIdle(meter: Meter, send: (kind: ObjectKind, u: Usage) => Promise<void>, keepAlive: (p: Promise<unknown>) => void): void {
  let lastSent = -Infinity;
  let sending = false;
  meter.onIdle = () => {
    const now = Date.now();
    if (sending || now - lastSent < USAGE_SEND_EVERY_MS || !meter.pending()) return;
    sending = true;
    lastSent = now;
    const u = meter.take();
    keepAlive(
      Promise.resolve()
        .then(() => send(meter.kind, u))
        .catch(() => meter.giveBack(u))
        .finally(() => (sending = false)),
    );
  };
}
