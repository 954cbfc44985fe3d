/**
 * The scenarios on the real queue (backend.ts), in the Workers pool: each scenario gets a scope of its own, whose
 * scope object runs on a ManualClock shared by the file (the topic's registry object too, so an event's time and a
 * wait's start are on one clock). Jobs go in through the coordinator's HTTP API, run pushed in the test handler
 * Worker over its service binding (handlers.ts), and time moves only when a scenario says so: the clock is set ahead
 * and the object's alarm fired with runDurableObjectAlarm. Nothing sleeps; handlers answer in real time, so each
 * action polls the jobs until nothing runs or is due.
 *
 * @module
 */
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { expect, vi } from "vitest";
import { ManualClock } from "../../src/clock";
import { registryHome } from "../../src/job/event-tags";
import { scopeHome } from "../../src/job/home";
import { api } from "../helpers/api";
import { Refused, T0, TERMINAL, type Backend, type Delivery, type JobView, type StepView } from "./backend";
import { ORDERED_TYPE, SCENARIO_TOPIC } from "./handlers";

/** A scope object as this file touches it: its injected clock (docs/design.md "Time and the alarm"). */
type Clocked = { clock: { now(): number } };
const SCOPE = (env as unknown as { SCOPE: DurableObjectNamespace }).SCOPE;

/** One clock for the file: scenarios run one after another, each moving it only on. */
const clock = new ManualClock(T0);

async function answer<T>(r: { status: number; body: any }): Promise<T> {
  if (r.status >= 400) throw new Refused(r.body?.error?.code ?? String(r.status), r.body?.error?.message ?? JSON.stringify(r.body));
  return r.body as T;
}

export function queueBackend(): Backend {
  const scope = { type: "Scenario", id: crypto.randomUUID() };
  const stub = SCOPE.getByName(scopeHome(scope).name);
  /** The jobs of this scenario: those it enqueued and the children they invoked. */
  const known = new Set<string>();
  let ready: Promise<void> | null = null;
  const setup = () =>
    (ready ??= (async () => {
      for (const s of [stub, SCOPE.getByName(registryHome(SCENARIO_TOPIC))]) {
        await runInDurableObject(s, (o) => {
          (o as unknown as Clocked).clock = clock;
        });
      }
    })());

  const view = async (id: string): Promise<JobView> => (await answer<{ job: JobView }>(await api("GET", `/v1/jobs/${id}`))).job;
  const steps = async (id: string): Promise<StepView[]> => (await answer<{ items: StepView[] }>(await api("GET", `/v1/jobs/${id}/steps`))).items;

  /**
   * quiet: nothing runs, and nothing is due that could run — a due job behind its key's running or waiting job, or
   * behind an older live job of its FIFO type, is held by that guard — and no child's end is still on its way.
   */
  const quiet = async (): Promise<string | null> => {
    const jobs = await Promise.all([...known].map(view));
    for (const j of jobs) {
      for (const w of j.waitingFor ?? []) {
        const child = (w as { child?: string }).child;
        if (w.kind === "invoke" && child && !known.has(child)) {
          known.add(child);
          return `child ${child} of ${j.id} just seen`;
        }
      }
    }
    const byId = new Map(jobs.map((j) => [j.id, j]));
    const live = (j: JobView) => !TERMINAL.includes(j.state);
    for (const j of jobs) {
      if (j.state === "running") return `${j.id} runs`;
      if (j.state === "pending" && j.runAt <= clock.now()) {
        const behindKey = j.dedupeKey !== null && jobs.some((o) => o !== j && o.dedupeKey === j.dedupeKey && (o.state === "running" || o.state === "waiting"));
        // `known` keeps the order of enqueue: the ones before are older.
        const behindHead = j.type === ORDERED_TYPE && jobs.slice(0, jobs.indexOf(j)).some((o) => o.type === ORDERED_TYPE && live(o));
        if (!behindKey && !behindHead) return `${j.id} is due`;
      }
      for (const w of j.waitingFor ?? []) {
        const child = (w as { child?: string }).child;
        if (w.kind === "invoke" && child && !live(byId.get(child)!)) return `${j.id} has not heard that child ${child} ended`;
      }
    }
    return null;
  };

  const idle = async () => {
    await vi.waitFor(
      async () => {
        const busy = await quiet();
        if (busy) throw new Error(`not idle: ${busy}`);
      },
      { timeout: 15_000, interval: 10 },
    );
  };

  /** finishedEvents: event waits of this scenario's jobs that have ended (a count that only grows). */
  const finishedEvents = async (): Promise<number> => (await Promise.all([...known].map(steps))).flat().filter((s) => s.kind === "event" && s.finishedAt !== null).length;

  const delivery = async (r: Promise<{ status: number; body: any }>): Promise<Delivery> => {
    const body = await answer<Delivery>(await r);
    await idle();
    return { delivered: body.delivered, waitingFor: body.waitingFor };
  };

  return {
    name: "queue",
    now: () => clock.now(),

    async enqueue(type, payload, options = {}, how = {}) {
      await setup();
      const body = await answer<{ job: JobView; created: boolean }>(await api("POST", "/v1/jobs", { type, payload, scope, ...options }));
      known.add(body.job.id);
      if (how.idle !== false) await idle();
      return { id: body.job.id, created: body.created };
    },

    idle,

    async advance(ms) {
      clock.advance(ms);
      // The object's alarm, due by now: it ends timed-out waits and leases, and dispatches what came due.
      await runDurableObjectAlarm(stub);
      await idle();
    },

    job: view,
    steps,

    signal: (id, name, data = null) => delivery(api("POST", `/v1/jobs/${id}/signals/${name}`, { data })),

    async completeToken(id, name, data = null) {
      const token = (await steps(id)).find((s) => s.kind === "token" && s.name === name);
      if (!token) throw new Refused("not_found", `job ${id} made no wait token ${JSON.stringify(name)}`);
      return delivery(api("POST", (token.result as { path: string }).path, { data }, null));
    },

    async emit(topic, payload, eventId) {
      const before = await finishedEvents();
      const { waits } = await answer<{ waits: number }>(await api("POST", `/v1/topics/${topic}/events`, { payload, id: eventId }));
      // The registry ends the waits in their objects through its outbox: here once they have.
      if (waits > 0) await vi.waitFor(async () => expect(await finishedEvents()).toBeGreaterThanOrEqual(before + waits), { timeout: 15_000, interval: 10 });
      await idle();
      return waits;
    },
  };
}
