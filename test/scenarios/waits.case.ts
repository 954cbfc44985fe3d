/**
 * Waits (docs/workflows.md): signals sent after and before their wait, wait timeouts, wait tokens, events matched by
 * their payload — on both backends.
 */
import { expect } from "vitest";
import { SCENARIO_TOPIC } from "./handlers";
import { unique, type Scenario } from "./backend";

export const signalScenarios: Scenario[] = [
  {
    name: "signal after the wait: the job waits holding no attempt, the signal resumes it and its data is the wait's answer",
    async run(b) {
      const { id } = await b.enqueue("scenario.signals", { names: ["approve"] });
      expect(await b.job(id)).toMatchObject({ state: "waiting", attempts: 0, waitingFor: [{ kind: "signal", name: "approve", until: null }] });
      expect(await b.steps(id)).toMatchObject([
        { name: "prepare", kind: "step", attempt: 1, result: { ranOn: 1 } },
        { name: "approve", kind: "signal", result: null, finishedAt: null },
      ]);
      expect(await b.signal(id, "approve", { by: "ann" })).toEqual({ delivered: "resumed", waitingFor: null });
      expect(await b.job(id)).toMatchObject({ state: "completed", attempts: 1, result: { prepared: { ranOn: 1 }, got: { approve: { data: { by: "ann" } } } } });
      expect((await b.steps(id))[1]).toMatchObject({ name: "approve", kind: "signal", result: { data: { by: "ann" } } });
      // Finished: a signal now is refused.
      await expect(b.signal(id, "approve", 2)).rejects.toMatchObject({ code: "already_terminal" });
    },
  },
  {
    name: "signal before the wait is reached: kept, and the wait takes it at once",
    async run(b) {
      const { id } = await b.enqueue("scenario.signals", { names: ["approve"] }, { delayMs: 1_000 });
      expect(await b.signal(id, "approve", "early")).toEqual({ delivered: "kept", waitingFor: null });
      await b.advance(1_000);
      expect(await b.job(id)).toMatchObject({ state: "completed", attempts: 1, result: { got: { approve: { data: "early" } } } });
    },
  },
  {
    name: "a signal for a later wait while the job waits for another is kept; the answer says what the job waits for",
    async run(b) {
      const { id } = await b.enqueue("scenario.signals", { names: ["first", "second"] });
      expect(await b.signal(id, "second", 2)).toEqual({ delivered: "kept", waitingFor: [{ kind: "signal", name: "first", until: null }] });
      expect(await b.signal(id, "first", 1)).toEqual({ delivered: "resumed", waitingFor: null });
      expect(await b.job(id)).toMatchObject({ state: "completed", result: { got: { first: { data: 1 }, second: { data: 2 } } } });
    },
  },
  {
    name: "wait timeout: the wait ends with null once its timeout passes, not a moment before",
    async run(b) {
      const t = b.now();
      const { id } = await b.enqueue("scenario.signals", { names: ["approve"], timeoutMs: 60_000 });
      expect(await b.job(id)).toMatchObject({ state: "waiting", waitingFor: [{ kind: "signal", name: "approve", until: t + 60_000 }] });
      await b.advance(59_999);
      expect((await b.job(id)).state).toBe("waiting");
      await b.advance(1);
      expect(await b.job(id)).toMatchObject({ state: "completed", attempts: 1, result: { got: { approve: null } } });
    },
  },
  {
    name: "a signal some time after the wait began: the next wait's timeout counts from when the job ran again",
    async run(b) {
      const { id } = await b.enqueue("scenario.signals", { names: ["first", "second"], timeoutMs: 60_000 });
      await b.advance(30_000);
      expect(await b.signal(id, "first", 1)).toMatchObject({ delivered: "resumed" });
      expect(await b.job(id)).toMatchObject({ state: "waiting", waitingFor: [{ kind: "signal", name: "second", until: b.now() + 60_000 }] });
    },
  },
];

export const tokenScenarios: Scenario[] = [
  {
    name: "wait token: completed by its holder, the wait answers its data; once the job ended, a completion is refused",
    async run(b) {
      const { id } = await b.enqueue("scenario.token", {});
      expect(await b.job(id)).toMatchObject({ state: "waiting", attempts: 0, waitingFor: [{ kind: "token", name: "approval", until: null }] });
      expect((await b.steps(id)).map((s) => [s.name, s.kind])).toEqual([
        ["approval", "token"],
        ["approval", "token_wait"],
      ]);
      expect(await b.completeToken(id, "approval", { ok: true })).toEqual({ delivered: "resumed", waitingFor: null });
      expect(await b.job(id)).toMatchObject({ state: "completed", attempts: 1, result: { answer: { data: { ok: true } }, expires: false } });
      // The job has ended: refused as such, before the token's own second completion.
      await expect(b.completeToken(id, "approval", { ok: false })).rejects.toMatchObject({ code: "already_terminal" });
    },
  },
  {
    name: "wait token completed before its wait: kept until the job waits for it; a second completion is a conflict",
    async run(b) {
      const { id } = await b.enqueue("scenario.token", { readyFirst: true });
      expect(await b.completeToken(id, "approval", "early")).toEqual({ delivered: "kept", waitingFor: [{ kind: "signal", name: "ready", until: null }] });
      // A token is completed once: the second completion, while the job is live, is a conflict.
      await expect(b.completeToken(id, "approval", "again")).rejects.toMatchObject({ code: "conflict" });
      expect(await b.signal(id, "ready")).toMatchObject({ delivered: "resumed" });
      expect(await b.job(id)).toMatchObject({ state: "completed", result: { answer: { data: "early" } } });
    },
  },
  {
    name: "wait token with a timeout: its wait ends with null at the token's expiry",
    async run(b) {
      const t = b.now();
      const { id } = await b.enqueue("scenario.token", { timeoutMs: 60_000 });
      expect(await b.job(id)).toMatchObject({ state: "waiting", waitingFor: [{ kind: "token", name: "approval", until: t + 60_000 }] });
      await b.advance(60_000);
      expect(await b.job(id)).toMatchObject({ state: "completed", result: { answer: null, expires: true } });
    },
  },
];

export const eventScenarios: Scenario[] = [
  {
    name: "event wait: an event whose payload has the match's fields ends it, others pass it by",
    async run(b) {
      const orderId = unique("o");
      const { id } = await b.enqueue("scenario.event", { orderId });
      expect(await b.job(id)).toMatchObject({ state: "waiting", waitingFor: [{ kind: "event", name: SCENARIO_TOPIC, until: null }] });
      expect(await b.emit(SCENARIO_TOPIC, { orderId: `${orderId}-other` }, unique("e"))).toBe(0);
      expect((await b.job(id)).state).toBe("waiting");
      const paid = unique("e");
      expect(await b.emit(SCENARIO_TOPIC, { amount: 5, orderId }, paid)).toBe(1);
      expect(await b.job(id)).toMatchObject({ state: "completed", attempts: 1, result: { first: { id: paid, topic: SCENARIO_TOPIC, payload: { orderId, amount: 5 } } } });
    },
  },
  {
    name: "event wait: an event emitted before the wait began ends nothing",
    async run(b) {
      const orderId = unique("o");
      const { id } = await b.enqueue("scenario.event", { orderId }, { delayMs: 1_000 });
      expect(await b.emit(SCENARIO_TOPIC, { orderId }, unique("e"))).toBe(0);
      await b.advance(1_000);
      expect((await b.job(id)).state).toBe("waiting");
      const paid = unique("e");
      expect(await b.emit(SCENARIO_TOPIC, { orderId }, paid)).toBe(1);
      expect(await b.job(id)).toMatchObject({ state: "completed", result: { first: { id: paid } } });
    },
  },
  {
    name: "event wait: the same event id emitted again ends no wait",
    async run(b) {
      const orderId = unique("o");
      const { id } = await b.enqueue("scenario.event", { orderId, twice: true });
      const first = unique("e");
      expect(await b.emit(SCENARIO_TOPIC, { orderId }, first)).toBe(1);
      expect((await b.job(id)).state).toBe("pending");
      await b.advance(1_000);
      expect(await b.job(id)).toMatchObject({ state: "waiting", waitingFor: [{ kind: "event", name: SCENARIO_TOPIC }] });
      expect(await b.emit(SCENARIO_TOPIC, { orderId }, first)).toBe(0);
      const second = unique("e");
      expect(await b.emit(SCENARIO_TOPIC, { orderId }, second)).toBe(1);
      expect(await b.job(id)).toMatchObject({ state: "completed", result: { first: { id: first }, second: { id: second } } });
    },
  },
  {
    name: "event wait timeout: null once it passes",
    async run(b) {
      const { id } = await b.enqueue("scenario.event", { orderId: unique("o"), timeoutMs: 60_000 });
      await b.advance(60_000);
      expect(await b.job(id)).toMatchObject({ state: "completed", result: { first: null } });
    },
  },
];
