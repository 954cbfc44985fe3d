/**
 * Dedupe keys over time (src/job/key-mode.ts; docs/guards.md "Keys over time"): what a duplicate gets under each
 * mode — on both backends. That a follower never runs beside its key's live job is a guard: guards.case.ts.
 */
import { expect } from "vitest";
import { Refused, unique, type Scenario } from "./backend";

const LATER = 60_000;

export const keyScenarios: Scenario[] = [
  {
    name: "active (the default): a duplicate gets the live job, its payload unchanged; once it ended, the key is free",
    async run(b) {
      const dedupeKey = unique("k");
      const first = await b.enqueue("scenario.echo", { v: 1 }, { dedupeKey, delayMs: LATER });
      expect(first.created).toBe(true);
      expect(await b.enqueue("scenario.echo", { v: 2 }, { dedupeKey, delayMs: LATER })).toEqual({ id: first.id, created: false });
      expect(await b.job(first.id)).toMatchObject({ state: "pending", payload: { v: 1 }, dedupeMode: "active" });
      await b.advance(LATER);
      expect(await b.job(first.id)).toMatchObject({ state: "completed", result: { echo: { v: 1 } } });
      const again = await b.enqueue("scenario.echo", { v: 3 }, { dedupeKey });
      expect(again.created).toBe(true);
      expect(await b.job(again.id)).toMatchObject({ state: "completed", result: { echo: { v: 3 } } });
    },
  },
  {
    name: "active: a waiting job holds its key as a running one does — a duplicate gets it",
    async run(b) {
      const dedupeKey = unique("k");
      const holder = await b.enqueue("scenario.signals", { names: ["go"] }, { dedupeKey });
      expect((await b.job(holder.id)).state).toBe("waiting");
      expect(await b.enqueue("scenario.signals", { names: ["other"] }, { dedupeKey })).toEqual({ id: holder.id, created: false });
    },
  },
  {
    name: "pending: a duplicate behind a waiting job becomes its one follower; the next duplicate gets that follower",
    async run(b) {
      const dedupeKey = unique("k");
      const holder = await b.enqueue("scenario.signals", { names: ["go"] }, { dedupeKey, dedupeMode: "pending" });
      expect(await b.job(holder.id)).toMatchObject({ state: "waiting", dedupeMode: "pending" });
      // The follower is delayed: whether it may run beside its holder is a guard (guards.case.ts), not the answer.
      const follower = await b.enqueue("scenario.signals", { names: ["go"] }, { dedupeKey, dedupeMode: "pending", delayMs: LATER });
      expect(follower.created).toBe(true);
      expect(await b.enqueue("scenario.signals", { names: ["x"] }, { dedupeKey, dedupeMode: "pending", delayMs: LATER })).toEqual({ id: follower.id, created: false });
      expect(await b.job(follower.id)).toMatchObject({ state: "pending", payload: { names: ["go"] } });
      await b.signal(holder.id, "go", 1);
      expect((await b.job(holder.id)).state).toBe("completed");
      await b.advance(LATER);
      expect((await b.job(follower.id)).state).toBe("waiting");
    },
  },
  {
    name: 'coalesce "latest": a duplicate replaces the pending job\'s payload, which runs with the latest',
    async run(b) {
      const dedupeKey = unique("k");
      const first = await b.enqueue("scenario.echo", { v: 1 }, { dedupeKey, delayMs: LATER });
      expect(await b.enqueue("scenario.echo", { v: 2 }, { dedupeKey, coalesce: "latest" })).toEqual({ id: first.id, created: false });
      expect(await b.job(first.id)).toMatchObject({ state: "pending", payload: { v: 2 }, dedupeMode: "active" });
      await b.advance(LATER);
      expect(await b.job(first.id)).toMatchObject({ state: "completed", result: { echo: { v: 2 } } });
    },
  },
  {
    name: "debounce: each duplicate replaces the payload and pushes the run time on; the burst runs once, with the last",
    async run(b) {
      const dedupeKey = unique("k");
      const first = await b.enqueue("scenario.echo", { v: 1 }, { dedupeKey, debounceMs: 10_000 });
      expect(await b.job(first.id)).toMatchObject({ state: "pending", runAt: b.now() + 10_000, dedupeMode: "debounce" });
      await b.advance(5_000);
      expect(await b.enqueue("scenario.echo", { v: 2 }, { dedupeKey, debounceMs: 10_000 })).toEqual({ id: first.id, created: false });
      expect(await b.job(first.id)).toMatchObject({ state: "pending", payload: { v: 2 }, runAt: b.now() + 10_000 });
      await b.advance(5_000);
      expect((await b.job(first.id)).state).toBe("pending");
      await b.advance(5_000);
      expect(await b.job(first.id)).toMatchObject({ state: "completed", result: { echo: { v: 2 } } });
    },
  },
  {
    name: "throttle: once a job of the key started, duplicates within the window get it, even finished",
    async run(b) {
      const dedupeKey = unique("k");
      const first = await b.enqueue("scenario.echo", { v: 1 }, { dedupeKey, throttleMs: LATER });
      expect(await b.job(first.id)).toMatchObject({ state: "completed", dedupeMode: "throttle" });
      expect(await b.enqueue("scenario.echo", { v: 2 }, { dedupeKey, throttleMs: LATER })).toEqual({ id: first.id, created: false });
      await b.advance(LATER + 1);
      const next = await b.enqueue("scenario.echo", { v: 3 }, { dedupeKey, throttleMs: LATER });
      expect(next.created).toBe(true);
      expect(await b.job(next.id)).toMatchObject({ state: "completed", result: { echo: { v: 3 } } });
    },
  },
  {
    name: "a key live under one mode refuses an enqueue under another: conflict",
    async run(b) {
      const dedupeKey = unique("k");
      await b.enqueue("scenario.echo", { v: 1 }, { dedupeKey, delayMs: LATER });
      await expect(b.enqueue("scenario.echo", { v: 2 }, { dedupeKey, throttleMs: 1_000 })).rejects.toMatchObject({ code: "conflict" });
      await expect(b.enqueue("scenario.echo", { v: 2 }, { dedupeKey, dedupeMode: "pending" })).rejects.toBeInstanceOf(Refused);
    },
  },
];
