/**
 * edgequeue/outbox (docs/producers.md "Enqueue inside your own transaction"): a job per
 * committed change of the caller's own object, none for a rolled-back one,
 * exactly one even when the object is reset between commit and forward or the
 * queue's answer is lost. The caller here is a scratch Durable Object (a
 * WaitDO keeps nothing in SQLite) and the queue the real EdgeQueue entrypoint.
 */
import { runInDurableObject } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { EdgeQueue } from "../../src/coordinator/rpc";
import type { QueueClient } from "../../src/client/producer";
import { createClient } from "../../src/client/rpc-client";
import { createOutbox, OUTBOX_SAFETY_MS } from "../../src/outbox";
import { api, uniqueType } from "../helpers/api";
import { env } from "../helpers/scope";

const binding = (exports as unknown as { EdgeQueue: Service<EdgeQueue> }).EdgeQueue;
const real = createClient(binding);
const quiet = { log: () => {} };

/** A queue whose calls fail before reaching it (down) or after it took them (the answer lost). */
function broken(mode: "down" | "answer_lost"): QueueClient {
  return {
    ...real,
    async enqueueMany(inputs) {
      if (mode === "answer_lost") await real.enqueueMany(inputs);
      throw new Error(`queue ${mode}`);
    },
  };
}

const scratch = (name = `outbox:${crypto.randomUUID()}`) => env.WAIT.getByName(name);
const jobsOf = async (type: string) => (await api("GET", `/v1/jobs?type=${type}&limit=10`)).body.items as { id: string; payload: unknown }[];

describe("edgequeue/outbox", () => {
  it("a committed change is forwarded once, right after the commit, over the raw service binding; no row and no alarm are left", async () => {
    const type = uniqueType("outbox");
    await runInDurableObject(scratch(), async (_o, state) => {
      state.storage.sql.exec("CREATE TABLE orders (id TEXT PRIMARY KEY)");
      const outbox = createOutbox(state.storage, binding, quiet);
      let id = "";
      state.storage.transactionSync(() => {
        state.storage.sql.exec("INSERT INTO orders (id) VALUES ('o1')");
        id = outbox.enqueue({ type, payload: { order: "o1" } }).id;
      });
      expect(outbox.pending()).toBe(1);
      await outbox.flush();
      expect(outbox.pending()).toBe(0);
      expect(await state.storage.getAlarm()).toBeNull();
      const jobs = await jobsOf(type);
      expect(jobs).toHaveLength(1);
      expect(jobs[0]!.id.endsWith(`.${id}`)).toBe(true);
      expect(jobs[0]!.payload).toEqual({ order: "o1" });
    });
  });

  it("a rolled-back change leaves no row, arms no alarm and makes no job", async () => {
    const type = uniqueType("outbox");
    await runInDurableObject(scratch(), async (_o, state) => {
      const outbox = createOutbox(state.storage, real, quiet);
      expect(() =>
        state.storage.transactionSync(() => {
          outbox.enqueue({ type, payload: {} });
          throw new Error("the change fails");
        }),
      ).toThrow("the change fails");
      await Promise.resolve();
      expect(outbox.pending()).toBe(0);
      expect(await state.storage.getAlarm()).toBeNull();
    });
    expect(await jobsOf(type)).toEqual([]);
  });

  it("reset between commit and forward, then an answer lost: the alarm's forwards make exactly one job", async () => {
    const type = uniqueType("outbox");
    const name = `outbox:${crypto.randomUUID()}`;
    const stub = scratch(name);
    let id = "";
    await runInDurableObject(stub, async (_o, state) => {
      // The forward goes out and never comes back: the reset below lands while it is in flight.
      const hanging: QueueClient = { ...real, enqueueMany: () => new Promise(() => {}) };
      const outbox = createOutbox(state.storage, hanging, quiet);
      const before = Date.now();
      id = outbox.enqueue({ type, payload: { n: 1 } }).id;
      await Promise.resolve();
      expect(outbox.pending()).toBe(1);
      // The safety alarm went in with the commit, before the forward could answer.
      expect(await state.storage.getAlarm()).toBeGreaterThanOrEqual(before + OUTBOX_SAFETY_MS);
    });
    // The object is reset (a deploy, an eviction) before any forward reached the queue.
    await runInDurableObject(stub, (_o, state) => state.abort("reset between commit and forward")).catch(() => undefined);
    expect(await jobsOf(type)).toEqual([]);

    // A new stub reaches the new instance (the old one stays broken by the reset).
    await runInDurableObject(scratch(name), async (_o, state) => {
      // A new instance: what the runtime runs when the alarm fires.
      const lost = createOutbox(state.storage, broken("answer_lost"), quiet);
      expect(lost.pending()).toBe(1);
      expect(await lost.alarm()).toBe(false);
      expect(lost.pending()).toBe(1);
      const later = createOutbox(state.storage, real, { ...quiet, now: () => Date.now() + 10 * 60_000 });
      expect(await later.alarm()).toBe(false);
      expect(later.pending()).toBe(0);
      await state.storage.deleteAlarm();
    });
    const jobs = await jobsOf(type);
    expect(jobs.map((j) => j.id.endsWith(`.${id}`))).toEqual([true]);
  });

  it("bad input throws naming the field, and the caller's transaction writes nothing; an id already waiting adds nothing", async () => {
    await runInDurableObject(scratch(), async (_o, state) => {
      state.storage.sql.exec("CREATE TABLE orders (id TEXT PRIMARY KEY)");
      const outbox = createOutbox(state.storage, real, quiet);
      let thrown: unknown = null;
      try {
        state.storage.transactionSync(() => {
          state.storage.sql.exec("INSERT INTO orders (id) VALUES ('o1')");
          outbox.enqueue({ type: "x", payload: "not an object" } as never);
        });
      } catch (e) {
        thrown = e;
      }
      expect(thrown).toMatchObject({ code: "invalid_request", details: [{ path: "payload" }] });
      // An id still waiting in the outbox is the same job: the second enqueue adds nothing, and does not throw.
      const once = { type: "x.y", payload: {}, id: "same" };
      state.storage.transactionSync(() => {
        outbox.enqueue(once);
        outbox.enqueue(once);
      });
      expect(outbox.pending()).toBe(1);
      await outbox.flush();
      expect(state.storage.sql.exec("SELECT count(*) AS n FROM orders").one().n).toBe(0);
      expect(outbox.pending()).toBe(0);
    });
  });

  it("a row the queue refuses for good is kept aside, dead, while the rest of its batch goes through", async () => {
    const type = uniqueType("outbox");
    await runInDurableObject(scratch(), async (_o, state) => {
      const outbox = createOutbox(state.storage, real, quiet);
      outbox.enqueue({ type, payload: { n: 1 } });
      const big = outbox.enqueue({ type, payload: { blob: "x".repeat(200 * 1024) } }).id;
      outbox.enqueue({ type, payload: { n: 3 } });
      expect(await outbox.flush()).toEqual({ forwarded: 2, left: 0 });
      const dead = outbox.dead();
      expect(dead.map((d) => [d.id, d.attempts])).toEqual([[big, 1]]);
      expect(dead[0]!.error).toContain("payload");
      expect(outbox.discard(big)).toBe(true);
      expect(outbox.dead()).toEqual([]);
      await state.storage.deleteAlarm();
    });
    expect((await jobsOf(type)).map((j) => j.payload)).toEqual(expect.arrayContaining([{ n: 1 }, { n: 3 }]));
  });

  it("an object with its own alarm keeps it through the outbox; alarm() says when it is due", async () => {
    const type = uniqueType("outbox");
    await runInDurableObject(scratch(), async (_o, state) => {
      let clock = Date.now();
      const outbox = createOutbox(state.storage, broken("down"), { ...quiet, now: () => clock });
      const yours = clock + 60 * 60_000;
      outbox.setAlarm(yours);
      await Promise.resolve();
      expect(await state.storage.getAlarm()).toBe(yours);
      outbox.enqueue({ type, payload: {} });
      await outbox.flush();
      // A row waits for its retry: the alarm is the earlier of that and the object's own.
      const armed = (await state.storage.getAlarm())!;
      expect(armed).toBeLessThan(yours);
      expect(armed).toBeGreaterThan(clock);
      expect(await outbox.alarm()).toBe(false);
      clock = yours;
      expect(await outbox.alarm()).toBe(true);
      expect(outbox.pending()).toBe(1);
      await state.storage.deleteAlarm();
    });
  });
});
