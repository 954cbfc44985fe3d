/**
 * Guards and leases (docs/guards.md, docs/design.md "Push dispatch"): what holds a due job back, and what ends an
 * attempt that never answers. The kit runs none of them — a job runs when it is due, alone — so each scenario here
 * says so and runs on the queue alone.
 */
import { expect, vi } from "vitest";
import { unique, type Scenario } from "./backend";
import { ORDERED_TYPE } from "./handlers";

const NO_GUARDS = "the kit runs no guards: a due job runs at once, whatever its type's or key's limits";

export const guardScenarios: Scenario[] = [
  {
    name: "a follower never runs beside its key's live job: due, it waits until the waiting holder ends",
    skipOn: { kit: `${NO_GUARDS} (createFakeQueue answers the follower; nothing holds it back)` },
    async run(b) {
      const dedupeKey = unique("k");
      const holder = await b.enqueue("scenario.signals", { names: ["go"] }, { dedupeKey, dedupeMode: "pending" });
      const follower = await b.enqueue("scenario.echo", { v: 2 }, { dedupeKey, dedupeMode: "pending" });
      expect(follower.created).toBe(true);
      expect(await b.job(follower.id)).toMatchObject({ state: "pending", attempts: 0 });
      await b.signal(holder.id, "go");
      expect((await b.job(holder.id)).state).toBe("completed");
      expect(await b.job(follower.id)).toMatchObject({ state: "completed", result: { echo: { v: 2 } } });
    },
  },
  {
    name: "ordered (FIFO): a head that waits out its backoff holds the jobs behind it; they run once it completed",
    skipOn: { kit: NO_GUARDS },
    async run(b) {
      const head = await b.enqueue(ORDERED_TYPE, { n: 1, failFirst: true }, { maxAttempts: 2, backoff: { kind: "fixed", baseMs: 1_000 } });
      expect(await b.job(head.id)).toMatchObject({ state: "pending", attempts: 1 });
      const next = await b.enqueue(ORDERED_TYPE, { n: 2 });
      expect(await b.job(next.id)).toMatchObject({ state: "pending", attempts: 0 });
      await b.advance(1_000);
      expect(await b.job(head.id)).toMatchObject({ state: "completed", attempts: 2 });
      expect(await b.job(next.id)).toMatchObject({ state: "completed", attempts: 1, result: { n: 2 } });
    },
  },
  {
    name: "timeout: an attempt that outlives its timeoutMs is ended by the queue and fails as timeout",
    skipOn: { kit: "the kit has no leases or timeouts: a handler that never answers hangs the run" },
    async run(b) {
      const { id } = await b.enqueue("scenario.hang", {}, { timeoutMs: 10_000, maxAttempts: 1 }, { idle: false });
      await vi.waitFor(async () => expect((await b.job(id)).state).toBe("running"), { timeout: 10_000, interval: 10 });
      await b.advance(10_000);
      expect(await b.job(id)).toMatchObject({ state: "failed", attempts: 1, failureKind: "timeout" });
    },
  },
];
