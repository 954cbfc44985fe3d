/**
 * createQueueEvents: a whole type's jobs as they move, live — what BullMQ's `QueueEvents` gives a Node backend
 * (docs/producers.md "Following a whole type"): `active`, `waiting`, `progress`, `completed`, `failed` (and the
 * other ends) of every job of the type, without a subscription per job. It asks the queue for one signed URL per
 * object holding the type's jobs (`POST /v1/subscriptions/homes`: the type's own objects, then each scope the catalog
 * lists, about a second behind), follows each (client/subscribe.ts), and asks again every `refreshMs` for objects
 * that got jobs of the type since; an object found late is caught up on the jobs that ended there since this began
 * (`since`), so no ending is missed. Each ending is told once.
 *
 * One connection per object holding the type: a type spread over thousands of scopes is thousands of streams —
 * for that, an observer binding (docs/operating.md) hears every event in one place.
 *
 * @module
 */
import type { HomeSubscriptionsAnswer, SubscriptionPart } from "../job/schemas/subscriptions";
import type { WatchedJob } from "../job/watch-message";
import { subscribe, type SubscribeOptions, type Subscription } from "./subscribe";

/** What createQueueEvents needs of a client: minting the objects' URLs (both clients have it). */
export interface HomeSubscriber {
  createHomeSubscriptions(body: { type?: string; include?: SubscriptionPart[]; since?: number; cursor?: string; limit?: number; ttlMs?: number }): Promise<HomeSubscriptionsAnswer>;
}

export interface QueueEventsOptions {
  /** The type to follow; without it, every job of every object. */
  type?: string;
  /** How often to look for objects that got jobs of the type since (default 5 s). */
  refreshMs?: number;
  /** Where a URL minted as a bare path is opened (an RPC client without the queue's publicUrl). */
  baseUrl?: string;
  /** The results of completed jobs come with `completed` (default true): the subscriptions then carry them. */
  results?: boolean;
  transport?: SubscribeOptions["transport"];
  fetch?: typeof fetch;
}

export type QueueEventName = "waiting" | "active" | "progress" | "completed" | "failed" | "cancelled" | "superseded" | "expired";

export interface QueueEvent {
  event: QueueEventName;
  jobId: string;
  type: string;
  /** The job's view as the subscription carries it (no payload). */
  job: WatchedJob | null;
  /** progress: the value; completed: the result (when `results`); failed: the error. */
  progress?: unknown;
  result?: unknown;
  error?: string | null;
}

export interface QueueEvents {
  on(event: QueueEventName | "*", listener: (e: QueueEvent) => void): QueueEvents;
  off(event: QueueEventName | "*", listener: (e: QueueEvent) => void): QueueEvents;
  /** Resolves once the objects holding the type when it began are followed. */
  readonly ready: Promise<void>;
  /** How many objects it follows now. */
  readonly following: number;
  close(): void;
}

const STATE_EVENT: Record<string, QueueEventName> = { pending: "waiting", running: "active", completed: "completed", failed: "failed", cancelled: "cancelled", superseded: "superseded", expired: "expired" };
/** Endings remembered (to tell each once): the oldest go first past this many. */
const ENDINGS_KEPT = 10_000;

export function createQueueEvents(client: HomeSubscriber, options: QueueEventsOptions = {}): QueueEvents {
  const since = Date.now();
  const listeners = new Map<string, Set<(e: QueueEvent) => void>>();
  const open = new Map<string, Subscription>();
  /** Each followed job's last state, to tell moves, not repeats; and its type (a progress message names only the job). */
  const states = new Map<string, string>();
  const types = new Map<string, string>();
  const ended = new Set<string>();
  let closed = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const include: SubscriptionPart[] = ["progress", ...(options.results === false ? [] : (["result"] as const))];

  const emit = (e: QueueEvent) => {
    for (const key of [e.event, "*"]) for (const l of listeners.get(key) ?? []) l(e);
  };
  const told = (job: WatchedJob) => {
    const state = job.state;
    types.set(job.id, job.type);
    if (states.get(job.id) === state) return;
    states.set(job.id, state);
    const event = STATE_EVENT[state];
    if (!event) return;
    if (job.finishedAt !== null) {
      const ending = `${job.id}:${job.finishedAt}`;
      if (ended.has(ending)) return;
      ended.add(ending);
      if (ended.size > ENDINGS_KEPT) ended.delete(ended.values().next().value!);
      states.delete(job.id);
      types.delete(job.id);
    }
    emit({ event, jobId: job.id, type: job.type, job, ...(event === "completed" && "result" in job ? { result: job.result } : {}), ...(event === "failed" ? { error: job.lastError } : {}) });
  };

  const follow = (home: string, url: string) => {
    const full = /^https?:/.test(url) ? url : `${options.baseUrl ?? ""}${url}`;
    const sub = subscribe(
      full,
      (m) => {
        if (m.event === "state" && "jobs" in m) {
          // What was live when it opened is the starting point; what ended since this began is told.
          for (const j of m.jobs) if (!states.has(j.id)) [states.set(j.id, j.state), types.set(j.id, j.type)];
          for (const j of m.ended ?? []) told(j);
        } else if (m.event === "state") told(m.job);
        else if (m.event === "progress") emit({ event: "progress", jobId: m.id, type: types.get(m.id) ?? options.type ?? "", job: null, progress: m.progress });
      },
      { ...(options.transport ? { transport: options.transport } : {}), ...(options.fetch ? { fetch: options.fetch } : {}) },
    );
    open.set(home, sub);
    // Closed (the object was evicted with an event stream, a slow consumer dropped, a URL expired): found again next look.
    void sub.closed.then(() => {
      if (open.get(home) === sub) open.delete(home);
    });
  };

  const look = async () => {
    let cursor: string | undefined;
    do {
      const page = await client.createHomeSubscriptions({ ...(options.type ? { type: options.type } : {}), include, since, ...(cursor ? { cursor } : {}) });
      for (const item of page.items) if (!open.has(item.home) && !closed) follow(item.home, item.url);
      cursor = page.nextCursor ?? undefined;
    } while (cursor && !closed);
  };
  const again = () => {
    if (closed) return;
    timer = setTimeout(() => void look().catch(() => undefined).finally(again), options.refreshMs ?? 5_000);
  };
  const ready = look().finally(again);

  const self: QueueEvents = {
    on(event, listener) {
      (listeners.get(event) ?? listeners.set(event, new Set()).get(event)!).add(listener);
      return self;
    },
    off(event, listener) {
      listeners.get(event)?.delete(listener);
      return self;
    },
    ready,
    get following() {
      return open.size;
    },
    close() {
      closed = true;
      if (timer !== undefined) clearTimeout(timer);
      for (const s of open.values()) s.close();
      open.clear();
    },
  };
  return self;
}
