/**
 * The events that are not a row's new state (scope/watching/events.ts): a job given
 * back unrun is job:released, a holder's refused write job:lease_lost (naming
 * the write), and a reap pass that ended attempts sends one reaper:recovered.
 * Read back from the test observer (the OBSERVER binding of vitest.config.mts).
 */
import { scopeRpc } from "../helpers/scope";
import { runDurableObjectAlarm } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { probe } from "../helpers/probe";
import { freshScope, newJob, put } from "../helpers/scope";

const lease = { worker: "w", types: null, limit: 10, leaseMs: 20_000 };
const eventsOf = async (id: string) => (await probe.events(id)).map((e) => e.event);

describe("events beyond transitions", () => {
  it("release: job:released, not a retry; a stale holder's writes: job:lease_lost naming the write", async () => {
    const { home, stub } = await freshScope();
    await put(stub, [newJob(home)]);
    const [job] = await scopeRpc(stub).claim(lease);
    expect((await scopeRpc(stub).release(job!.id, job!.leaseToken!)).ok).toBe(true);
    await vi.waitFor(async () => expect(await eventsOf(job!.id)).toEqual(["job:started", "job:released"]), { timeout: 5_000, interval: 20 });
    expect((await scopeRpc(stub).heartbeat(job!.id, job!.leaseToken!, null)).ok).toBe(false);
    expect((await scopeRpc(stub).complete(job!.id, job!.leaseToken!, null)).ok).toBe(false);
    await vi.waitFor(async () => {
      const lost = (await probe.events(job!.id)).filter((e) => e.event === "job:lease_lost") as unknown as { write: string }[];
      expect(lost.map((e) => e.write)).toEqual(["heartbeat", "complete"]);
    }, { timeout: 5_000, interval: 20 });
  });

  it("a reap pass that ends attempts sends one reaper:recovered with the counts", async () => {
    const { home, stub, clock } = await freshScope();
    await put(stub, [newJob(home), newJob(home, { maxAttempts: 1 })]);
    await scopeRpc(stub).claim(lease);
    clock!.advance(21_000);
    await runDurableObjectAlarm(stub);
    await vi.waitFor(async () => expect(await probe.summaries(home)).toEqual([expect.objectContaining({ event: "reaper:recovered", count: 2, retried: 1, failed: 1 })]), {
      timeout: 5_000,
      interval: 20,
    });
  });
});
