/**
 * How an object that sends no summaries (a pool, the schedules, a claim-wait
 * object) gets its usage to the catalog: when its last request in progress
 * ends, it reports what its instance used so far (meter.ts `report`), at most
 * once per USAGE_SEND_EVERY_MS — a request that ends sooner after the last
 * send leaves a send for the window's end, so an object that falls idle has
 * reported everything it used within that window (well before an idle object
 * is evicted). Never on the hot path: no request awaits the send. A send that
 * fails is simply overtaken by the next: each report is the instance's whole
 * total, and the catalog counts what grew (catalog/usage-store.ts).
 *
 * @module
 */
import type { Meter } from "./meter";
import type { UsageReport } from "./usage";

export const USAGE_SEND_EVERY_MS = 5_000;
/** Usage goes to the first catalog shard (catalog/shards.ts names it `catalog`); /v1/metrics sums the shards. */
export const USAGE_CATALOG = "catalog";

/**
 * sendUsageWhenIdle: `now` is the object's clock (tests stop it: a cost count must not depend on how long a
 * workload took on the machine that ran it; test/cost/harness.ts).
 */
export function sendUsageWhenIdle(meter: Meter, send: (report: UsageReport) => Promise<void>, keepAlive: (p: Promise<unknown>) => void, now: () => number = Date.now): void {
  let lastSent = -Infinity;
  /** The total the last send carried: nothing new, nothing to send. */
  let sentTotal = "";
  let sending = false;
  let later: ReturnType<typeof setTimeout> | null = null;
  const sendNow = () => {
    if (later !== null) clearTimeout(later);
    later = null;
    // The window is the object's clock's: a timer that fires early by it leaves the send to the next idle moment.
    if (sending || now() < lastSent + USAGE_SEND_EVERY_MS) return;
    const report = meter.report();
    const key = JSON.stringify(report.total);
    if (key === sentTotal) return;
    sending = true;
    lastSent = now();
    keepAlive(
      Promise.resolve()
        .then(() => send(report))
        .then(() => void (sentTotal = key))
        .catch(() => undefined)
        .finally(() => (sending = false)),
    );
  };
  meter.onIdle = () => {
    const wait = lastSent + USAGE_SEND_EVERY_MS - now();
    if (wait <= 0) sendNow();
    else later ??= setTimeout(sendNow, wait);
  };
}
