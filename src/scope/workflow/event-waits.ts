/**
 * Waiting for an event (docs/workflows.md "Waiting for an event"): `ctx.waitForEvent(topic, { match, timeoutMs })`
 * is a wait of kind `event` in the job's journal, and a registration owed (outbox.ts) to the topic's registry
 * object, `scope:edgequeue.topic:<topic>` — one per topic, whatever scope the waiting jobs live in. An emit tells
 * the registry (`publish`): the waiters whose `match` fields all equal the event's payload's are taken and each is
 * owed the event (`event_arrived`), which ends its wait in its own object. The registry keeps the topic's events
 * EVENT_KEEP_MS, so a registration that arrives after an event emitted since its wait began still finds it: in
 * memory always (RecentEvents), and in `topic_event` too while the topic is awaited — it holds waits, or had one
 * registered within EVENT_KEEP_MS, or kept events already — so a topic nobody waits on writes no row per event,
 * and one that is waited on keeps its window across a restart of its registry.
 *
 * @module
 */
import { canonicalJson } from "../../job/canonical-json";
import { registryHome } from "../../job/event-tags";
import type { HomeStore } from "../jobs/home-store";
import type { WorkflowStore } from "./workflow-store";
import { EVENT_KEEP_MS, type ArrivedEvent } from "./recent-events";

export { EVENT_KEEP_MS, type ArrivedEvent } from "./recent-events";
import type { JobRow } from "../jobs/job-row";
import { owe } from "./outbox";
import { getJob } from "../jobs/read";

/** Old events and expired waiters one publish deletes at most (the rest go with the next). */
const PRUNE_BATCH = 100;

/** A wait's registration, as its job's object owes it to the topic's registry. */
export interface EventWait {
  jobId: string;
  seq: number;
  topic: string;
  match: Record<string, unknown>;
  /** When the job's object heard of the wait. */
  since: number;
  until: number | null;
}


/**
 * matchKey: a match's field names, sorted, and their values in that order — both as canonical JSON (keys sorted at
 * every depth), so a value `{a, b}` matches `{b, a}`.
 */
export function matchKey(match: Record<string, unknown>): { fields: string; values: string } {
  const fields = Object.keys(match).sort();
  return { fields: JSON.stringify(fields), values: canonicalJson(fields.map((f) => match[f])) };
}

/** project: the payload's values for these fields, in order, as canonical JSON — or null when one is missing. */
function project(payload: Record<string, unknown>, fields: readonly string[]): string | null {
  if (!fields.every((f) => Object.hasOwn(payload, f))) return null;
  return canonicalJson(fields.map((f) => payload[f]));
}

const EVENT_INSERT = "INSERT INTO topic_event (event_id, payload, at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING";
const EVENTS_SINCE = "SELECT event_id, payload, at FROM topic_event WHERE at >= ? ORDER BY at, event_id";
const EVENTS_ANY = "SELECT 1 FROM topic_event LIMIT 1";
const EVENTS_PRUNE = "DELETE FROM topic_event WHERE event_id IN (SELECT event_id FROM topic_event WHERE at < ? LIMIT ?)";
const WAITER_INSERT = "INSERT INTO event_waiter (job_id, seq, fields, match, since, until) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING";
const WAITER_DELETE = "DELETE FROM event_waiter WHERE job_id = ? AND seq = ?";
const WAITERS_EXPIRED = "DELETE FROM event_waiter WHERE (job_id, seq) IN (SELECT job_id, seq FROM event_waiter WHERE until <= ? LIMIT ?)";
const FIELD_SETS = "SELECT DISTINCT fields FROM event_waiter";
const WAITERS_OF = "DELETE FROM event_waiter WHERE fields = ? AND match = ? AND since <= ? AND (until IS NULL OR until > ?) RETURNING job_id, seq";

/**
 * registerWait (registry): a wait arrives. An event kept since the wait began that matches ends it at once;
 * otherwise it is kept until an event matches or its timeout passes. Sent twice, it is kept once.
 */
export function registerWait(store: WorkflowStore, w: EventWait, now: number): void {
  store.recentEvents.registered(now);
  store.atomic(() => {
    const { fields, values } = matchKey(w.match);
    const names = JSON.parse(fields) as string[];
    const kept = store.sql
      .exec<{ event_id: string; payload: string; at: number }>(EVENTS_SINCE, w.since)
      .toArray()
      // Kept sealed (sealing/vault.ts); matched here in the clear.
      .map((e): ArrivedEvent => ({ id: e.event_id, topic: w.topic, payload: JSON.parse(store.lens.openText(e.payload)) as Record<string, unknown>, at: e.at }));
    const held = new Set(kept.map((e) => e.id));
    const candidates = [...kept, ...store.recentEvents.since(w.since).filter((e) => !held.has(e.id))].sort((a, b) => a.at - b.at || (a.id < b.id ? -1 : 1));
    for (const e of candidates) {
      if (w.until !== null && e.at >= w.until) break;
      if (project(e.payload, names) !== values) continue;
      oweArrival(store, w.jobId, w.seq, e, now);
      return;
    }
    store.sql.exec(WAITER_INSERT, w.jobId, w.seq, fields, values, w.since, w.until);
  });
}

/** unwait (registry): a wait that ended otherwise (its job cancelled or failed) is dropped. */
export function unwait(store: HomeStore, jobId: string, seq: number): void {
  store.sql.exec(WAITER_DELETE, jobId, seq);
}

/**
 * publish (registry): an event of the topic — kept for late registrations, and owed to every waiter it matches
 * (taken: one event per wait). The same event id again changes nothing. Answers how many waits it ended.
 */
export function publish(store: WorkflowStore, topic: string, eventId: string, payloadJson: string, now: number): number {
  const payload = JSON.parse(payloadJson) as Record<string, unknown>;
  return store.atomic(() => {
    const fieldSets = store.sql.exec<{ fields: string }>(FIELD_SETS).toArray();
    const persist = fieldSets.length > 0 || store.recentEvents.awaited(now) || store.sql.exec(EVENTS_ANY).toArray().length > 0;
    if (persist) {
      // The kept event's id is the duplicate check that survives a restart.
      if (store.sql.exec(EVENT_INSERT, eventId, store.lens.seal(payloadJson), now).rowsWritten === 0) return 0;
      store.sql.exec(EVENTS_PRUNE, now - EVENT_KEEP_MS, PRUNE_BATCH);
      store.sql.exec(WAITERS_EXPIRED, now, PRUNE_BATCH);
    }
    if (!store.recentEvents.add({ id: eventId, topic, payload, at: now })) return 0;
    let ended = 0;
    for (const { fields } of fieldSets) {
      const values = project(payload, JSON.parse(fields) as string[]);
      if (values === null) continue;
      for (const w of store.sql.exec<{ job_id: string; seq: number }>(WAITERS_OF, fields, values, now, now).toArray()) {
        oweArrival(store, w.job_id, w.seq, { id: eventId, topic, payload, at: now }, now);
        ended++;
      }
    }
    return ended;
  });
}

function oweArrival(store: HomeStore, jobId: string, seq: number, event: ArrivedEvent, now: number): void {
  // The payload goes on sealed: the outbox keeps it, and the waiting job's journal after it (sealing/lens.ts opens it for its handler).
  owe(store, "event_arrived", jobId, JSON.stringify({ seq, event: { ...event, payload: store.lens.sealValue(event.payload) } }), now);
}

// ------------------------------------------------------------ the waiting job's side

const OPEN_EVENT_WAITS = "SELECT seq, name FROM job_step WHERE job_seq = ? AND kind = 'event' AND finished_at IS NULL";
const EVENT_ENTRY = "SELECT kind, finished_at FROM job_step WHERE job_seq = ? AND seq = ?";

/** oweRegistration: a new event wait's registration, owed to its topic's registry (inside wait()'s transaction). */
export function oweRegistration(store: HomeStore, w: EventWait, now: number): void {
  owe(store, "event_wait", registryHome(w.topic), JSON.stringify(w), now);
}

/** unwaitEvents: the open event waits of jobs that ended otherwise are owed their registries' drop. */
export function unwaitEvents(store: HomeStore, rows: readonly JobRow[], now: number): void {
  for (const r of rows) {
    for (const e of store.sql.exec<{ seq: number; name: string }>(OPEN_EVENT_WAITS, r.seq).toArray()) {
      owe(store, "event_unwait", registryHome(e.name), JSON.stringify({ jobId: r.id, seq: e.seq }), now);
    }
  }
}

const OPEN_EVENT_WAITS_FULL = "SELECT seq, name, ref, wake_at FROM job_step WHERE job_seq = ? AND kind = 'event' AND finished_at IS NULL";

/**
 * registerAgain: a job retried by hand whose event waits are still open (its cancel or failure dropped them from
 * their registries) registers them again, from now (inside the retry's transaction).
 */
export function registerAgain(store: HomeStore, row: JobRow, now: number): void {
  for (const e of store.sql.exec<{ seq: number; name: string; ref: string | null; wake_at: number | null }>(OPEN_EVENT_WAITS_FULL, row.seq).toArray()) {
    oweRegistration(store, { jobId: row.id, seq: e.seq, topic: e.name, match: JSON.parse(e.ref ?? "{}") as Record<string, unknown>, since: now, until: e.wake_at }, now);
  }
}

/**
 * eventArrived (job's object): the event ends the wait at `seq` if it is still open; `end` ends the entry and
 * makes the job due (waits.ts). A wait that timed out, or a job gone, takes nothing.
 */
export function eventArrived(
  store: HomeStore,
  jobId: string,
  seq: number,
  event: ArrivedEvent,
  end: (job: JobRow, seq: number, result: string) => JobRow | null,
): JobRow | null {
  return store.atomic(() => {
    const job = getJob(store.sql, jobId);
    if (!job || job.finished_at !== null) return null;
    const entry = store.sql.exec<{ kind: string; finished_at: number | null }>(EVENT_ENTRY, job.seq, seq).toArray()[0];
    if (!entry || entry.kind !== "event" || entry.finished_at !== null) return null;
    return end(job, seq, JSON.stringify(event));
  });
}
