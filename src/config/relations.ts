/**
 * Checks that span several parts of the config: push-only options need a
 * binding, pools name declared members consistently, `waitsFor` has no cycle.
 * Guards (`concurrency`, pools, `notWhileRunning`, `waitsFor`) hold for pushed
 * and pulled types alike (a pull claim takes the permits; scope/pull/pull-permits.ts).
 * Problems are zod issues (they fail startup, naming the field); a one-sided
 * `notWhileRunning` is only a warning.
 *
 * @module
 */
import type { z } from "zod";
import { BACKOFF_DEFAULT } from "../job/backoff";
import { PAYLOAD_MAX_BYTES_DEFAULT, utf8Length } from "../job/json-size";
import { didYouMean, nearestTypes } from "./known-types";
import { checkLimitKeys } from "./limits";

interface TypeInput {
  binding?: string;
  backoff?: { baseMs?: number; maxMs?: number };
  concurrency?: number | { limit: number; key?: string };
  rate?: { limit: number; periodMs: number; burst?: number; key?: string };
  batchSize?: number;
  batch?: { maxSize: number; maxWaitMs?: number; key?: string };
  leaseMs?: number;
  notWhileRunning?: string[];
  waitsFor?: string[];
  onFailure?: string;
  shards?: number;
  ordered?: boolean;
  serializeByScope?: boolean;
}

interface ConfigInput {
  defaults?: { backoff?: { baseMs?: number; maxMs?: number }; shards?: number };
  types?: Record<string, TypeInput>;
  topics?: Record<string, { consumers: string[] }>;
  pools?: Record<string, { concurrency?: number; ratePerMinute?: number; rate?: object; key?: string; types: string[]; costs?: Record<string, number>; rateCosts?: Record<string, number> }>;
  schedules?: Record<string, { type: string; payload?: object; scope?: { type: string } }>;
  limits?: { payloadMaxBytes?: number };
  residency?: { jurisdiction?: string; scopeTypes?: Record<string, string> };
  strictTypes?: boolean;
}

/**
 * Options of the dispatcher's calls: a pull worker chooses its own batch (claim limit) and lease (claim leaseMs).
 * A type handled in the queue's own Worker is pushed too: createQueue gives it its binding before this check
 * (server/with-handlers.ts), and so does `edgequeue check`.
 */
const PUSH_ONLY = ["batchSize", "leaseMs"] as const;

/** meant: `; did you mean "a.b"?` for a name that is not a declared type, or "". */
const meant = (name: string, types: Record<string, unknown>) => didYouMean(nearestTypes(name, Object.keys(types)));

export function checkRelations(config: ConfigInput, ctx: z.RefinementCtx): void {
  const types = config.types ?? {};
  checkLimitKeys(config, ctx);
  // A backoff's cap below its base would make every delay the cap: say so, with the values in force (type → defaults → built in).
  const base = { baseMs: config.defaults?.backoff?.baseMs ?? BACKOFF_DEFAULT.baseMs, maxMs: config.defaults?.backoff?.maxMs ?? BACKOFF_DEFAULT.maxMs };
  if (base.maxMs < base.baseMs) {
    ctx.addIssue({ code: "custom", path: ["defaults", "backoff", "maxMs"], message: `${base.maxMs} is below baseMs ${base.baseMs}: the cap must be at least the first delay` });
  }
  for (const [name, t] of Object.entries(types)) {
    const b = { baseMs: t.backoff?.baseMs ?? base.baseMs, maxMs: t.backoff?.maxMs ?? base.maxMs };
    if (t.backoff && b.maxMs < b.baseMs) {
      const key = t.backoff.maxMs !== undefined ? "maxMs" : "baseMs";
      ctx.addIssue({ code: "custom", path: ["types", name, "backoff", key], message: `maxMs ${b.maxMs} is below baseMs ${b.baseMs}: the cap must be at least the first delay` });
    }
  }
  for (const [name, t] of Object.entries(types)) {
    // Unscoped jobs of a sharded type spread over objects by id: no one object could keep their order.
    if (t.ordered && (t.shards ?? config.defaults?.shards ?? 1) > 1) {
      ctx.addIssue({ code: "custom", path: ["types", name, "ordered"], message: "ordered keeps order within one object: give the type shards = 1" });
    }
  }
  const isPush = (t: string) => types[t]?.binding !== undefined;
  const declared = (t: string) => t in types;
  for (const [name, t] of Object.entries(types)) {
    // A batch's maxSize is the call's size: two sizes for one call would contradict each other.
    if (t.batch && t.batchSize !== undefined) {
      ctx.addIssue({ code: "custom", path: ["types", name, "batchSize"], message: "batch.maxSize sets how many jobs go in a call: leave out batchSize" });
    }
    if (t.batch && (t.ordered || t.serializeByScope)) {
      ctx.addIssue({ code: "custom", path: ["types", name, "batch"], message: "a batch runs many jobs of the type at once; an ordered or serializeByScope type runs one at a time" });
    }
    for (const key of PUSH_ONLY) {
      if (t[key] !== undefined && t.binding === undefined) {
        ctx.addIssue({ code: "custom", path: ["types", name, key], message: `${key} applies to pushed jobs: give the type a binding too, or a handler in the queue's Worker (createQueue's handlers)` });
      }
    }
    // A running job is seen by the guard only if its attempts take the guard's permits: declared types do (pushed or pulled).
    (t.notWhileRunning ?? []).forEach((other, i) => {
      const path = ["types", name, "notWhileRunning", i];
      if (other === name) ctx.addIssue({ code: "custom", path, message: "a type cannot exclude itself: use concurrency = 1" });
      else if (!declared(other)) ctx.addIssue({ code: "custom", path, message: `${other} is not a declared type: only declared types take the guard's permits${meant(other, types)}` });
    });
    if (t.onFailure !== undefined && !(t.onFailure in types)) {
      ctx.addIssue({ code: "custom", path: ["types", name, "onFailure"], message: `${t.onFailure} is not a declared type: a failed job's handler job must have a type that runs${meant(t.onFailure, types)}` });
    }
    (t.waitsFor ?? []).forEach((other, i) => {
      if (!(other in types)) ctx.addIssue({ code: "custom", path: ["types", name, "waitsFor", i], message: `${other} is not a declared type (a typo would never hold anything back)${meant(other, types)}` });
    });
  }
  for (const [name, pool] of Object.entries(config.pools ?? {})) {
    if (pool.concurrency === undefined && pool.ratePerMinute === undefined && pool.rate === undefined) {
      ctx.addIssue({ code: "custom", path: ["pools", name], message: "give the pool a concurrency, a rate (or ratePerMinute), or both" });
    }
    if (pool.ratePerMinute !== undefined && pool.rate !== undefined) {
      ctx.addIssue({ code: "custom", path: ["pools", name, "rate"], message: "rate and ratePerMinute are two ways to limit one pool's rate: give one" });
    }
    pool.types.forEach((t, i) => {
      if (!declared(t)) ctx.addIssue({ code: "custom", path: ["pools", name, "types", i], message: `${t} is not a declared type: declare it under types${meant(t, types)}` });
    });
    for (const [key, limit, dim] of [
      ["costs", pool.concurrency, "concurrency"],
      ["rateCosts", pool.ratePerMinute, "ratePerMinute"],
    ] as const) {
      for (const [t, cost] of Object.entries(pool[key] ?? {})) {
        if (!pool.types.includes(t)) ctx.addIssue({ code: "custom", path: ["pools", name, key, t], message: `${t} is not one of this pool's types` });
        else if (limit !== undefined && cost > limit) {
          ctx.addIssue({ code: "custom", path: ["pools", name, key, t], message: `a cost of ${cost} can never fit in ${dim} ${limit}: ${t} would never start` });
        }
      }
    }
  }
  for (const [topic, t] of Object.entries(config.topics ?? {})) {
    t.consumers.forEach((c, i) => {
      if (t.consumers.indexOf(c) !== i) ctx.addIssue({ code: "custom", path: ["topics", topic, "consumers", i], message: `${c} is listed twice` });
      else if (!isPush(c)) ctx.addIssue({ code: "custom", path: ["topics", topic, "consumers", i], message: `${c} is not a pushed type: a consumer is a job type with a handler binding, or a handler in the queue's Worker${c in types ? "" : meant(c, types)}` });
    });
  }
  // Each fire stores the schedule's payload: the enqueue limit holds for it as well.
  const limit = config.limits?.payloadMaxBytes ?? PAYLOAD_MAX_BYTES_DEFAULT;
  for (const [name, sched] of Object.entries(config.schedules ?? {})) {
    const bytes = utf8Length(JSON.stringify(sched.payload ?? {}), limit);
    if (bytes > limit) ctx.addIssue({ code: "custom", path: ["schedules", name, "payload"], message: `${bytes} bytes of JSON; limits.payloadMaxBytes is ${limit}` });
    // The schedule's object lives in the queue's jurisdiction and stores the payload: its jobs' scope must too (src/residency.ts).
    const own = sched.scope ? config.residency?.scopeTypes?.[sched.scope.type] : undefined;
    if (own !== undefined && own !== config.residency?.jurisdiction) {
      ctx.addIssue({ code: "custom", path: ["schedules", name, "scope"], message: `scope type ${sched.scope!.type} lives in the ${own} jurisdiction and the schedules' object in the queue's (${config.residency?.jurisdiction ?? "none"}), which would hold its payload: schedule it from a job of that scope instead` });
    }
    // Under strictTypes a schedule of an undeclared type would be refused at every fire: refuse it at startup instead.
    if (config.strictTypes && !(sched.type in types)) {
      ctx.addIssue({ code: "custom", path: ["schedules", name, "type"], message: `${sched.type} is not a declared type (strictTypes is on)${meant(sched.type, types)}` });
    }
  }
  const cycle = findWaitsForCycle(types);
  if (cycle) {
    ctx.addIssue({
      code: "custom",
      path: ["types", cycle[0]!, "waitsFor"],
      message: `waitsFor cycle ${cycle.join(" → ")}: these types would wait for each other forever`,
    });
  }
}

/** findWaitsForCycle: the first cycle in the waitsFor graph, as a path that ends where it starts, or null. */
export function findWaitsForCycle(types: Record<string, { waitsFor?: string[] }>): string[] | null {
  const state = new Map<string, "visiting" | "done">();
  const stack: string[] = [];
  const visit = (t: string): string[] | null => {
    if (state.get(t) === "done") return null;
    if (state.get(t) === "visiting") return [...stack.slice(stack.indexOf(t)), t];
    state.set(t, "visiting");
    stack.push(t);
    for (const next of types[t]?.waitsFor ?? []) {
      const found = visit(next);
      if (found) return found;
    }
    stack.pop();
    state.set(t, "done");
    return null;
  };
  for (const t of Object.keys(types).sort()) {
    const found = visit(t);
    if (found) return found;
  }
  return null;
}

/** relationWarnings: a notWhileRunning declared on one side only leaves the other side free to start during it. */
export function relationWarnings(config: ConfigInput): string[] {
  const types = config.types ?? {};
  const out: string[] = [];
  for (const [a, t] of Object.entries(types)) {
    for (const b of t.notWhileRunning ?? []) {
      if (!(types[b]?.notWhileRunning ?? []).includes(a)) {
        out.push(`types["${a}"].notWhileRunning names ${b}, but ${b} does not name ${a}: ${b} may still start while ${a} runs. Declare it on both sides.`);
      }
    }
  }
  return out;
}
