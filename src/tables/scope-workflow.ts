/**
 * A ScopeDO's tables for durable steps and workflows: the journal (`job_step`), event waits and the events kept for
 * them, the outbox of what the object owes other objects, and signals kept for a wait to come (src/tables/scope.ts
 * gathers the object's tables).
 *
 * @module
 */
import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * A job's journal of durable steps (scope/workflow/steps.ts; docs/handlers.md "Durable steps"):
 * one row per `ctx.step` / `ctx.sleep` position, in call order. A step's row
 * is written when it finishes (its JSON result), or when it starts if it is
 * `atMostOnce` (then `finished_at` is null until it finishes). Position -1 is
 * the start record (`started_at`: the first attempt's start, `result`: a seed),
 * from which `ctx.now()` and `ctx.uuid()` are derived. Deleted with the job
 * (trigger, migration `job_step_triggers`).
 */
export const jobStep = sqliteTable(
  "job_step",
  {
    jobSeq: integer("job_seq").notNull(),
    /** Position in the job's step calls, from 0; -1 is the start record. */
    seq: integer("seq").notNull(),
    name: text("name").notNull(),
    /** `signal` / `token`: a wait (scope/workflow/waits.ts); its result is null until it ends: `{"data": …}`, or `null` on its timeout. */
    kind: text("kind", { enum: ["start", "step", "sleep", "signal", "token", "token_wait", "invoke", "event", "patch"] }).notNull(),
    /** JSON text; null while an atMostOnce step has started and not finished. */
    result: text("result"),
    startedAt: integer("started_at").notNull(),
    finishedAt: integer("finished_at"),
    /** The attempt that wrote the row (1 for the first). */
    attempt: integer("attempt").notNull(),
    /** sleep: when the job is due again; a wait: its timeout (null: none). */
    wakeAt: integer("wake_at"),
    /** UTF-8 bytes of name and result, for the journal's cap. */
    bytes: integer("bytes").notNull(),
    /** invoke: the child job's id (scope/workflow/invokes.ts), so a cancel reaches it while it runs. Null otherwise. */
    ref: text("ref"),
  },
  (t) => [primaryKey({ columns: [t.jobSeq, t.seq] })],
);

/**
 * A topic's event waits (scope/workflow/event-waits.ts; docs/workflows.md "Waiting for an event"), kept in the topic's own
 * registry object (`scope:edgequeue.topic:<topic>`): each job's open ctx.waitForEvent, by the field names its
 * `match` names and their values (canonical JSON), so an event finds its waiters with one seek per field set.
 */
export const eventWaiter = sqliteTable(
  "event_waiter",
  {
    jobId: text("job_id").notNull(),
    /** The wait's position in the job's journal. */
    seq: integer("seq").notNull(),
    /** The match's field names, sorted, as a JSON array. */
    fields: text("fields").notNull(),
    /** The match's values in the order of `fields`, as a JSON array. */
    match: text("match").notNull(),
    /** When the job's object heard of the wait: events before it do not end it. */
    since: integer("since").notNull(),
    /** The wait's timeout (epoch ms), or null: after it, the row is swept. */
    until: integer("until"),
  },
  (t) => [primaryKey({ columns: [t.jobId, t.seq] }), index("event_waiter_match_idx").on(t.fields, t.match), index("event_waiter_until_idx").on(t.until)],
);

/**
 * A topic's recent events, in its registry object, for waits that register after the event was emitted but began
 * before it (the registration is owed by the job's object and may arrive late): kept `events.keepMs`.
 */
export const topicEvent = sqliteTable(
  "topic_event",
  {
    eventId: text("event_id").primaryKey(),
    payload: text("payload").notNull(),
    at: integer("at").notNull(),
  },
  (t) => [index("topic_event_at_idx").on(t.at)],
);

/**
 * What this object owes other objects, written in the transaction that owes it and sent after the commit
 * (scope/workflow/outbox.ts; docs/design.md "The outbox"): children to enqueue, a child's end for its parent, a cancel for a
 * child, a failure handler to enqueue. A row is deleted once its receiver answered; until then the alarm sends it
 * again, backing off. Receivers apply each idempotently (by job id, or by the journal entry it ends).
 */
export const outbox = sqliteTable(
  "outbox",
  {
    seq: integer("seq").primaryKey(),
    /** scope/workflow/outbox.ts OwedKind: what it is, and whether `target` names an object or a job in one. */
    kind: text("kind", { enum: ["enqueue", "child_ended", "cancel", "event_wait", "event_unwait", "event_arrived"] }).notNull(),
    target: text("target").notNull(),
    /** JSON text. */
    body: text("body").notNull(),
    tries: integer("tries").notNull().default(0),
    /** When the alarm sends it (again); the send right after the commit goes first. */
    nextAt: integer("next_at").notNull(),
  },
  (t) => [index("outbox_next_idx").on(t.nextAt)],
);

/**
 * Signals and wait-token completions that reached a job before it waited for them (scope/workflow/waits.ts; docs/workflows.md):
 * kept `signals.retainMs` for the job's next wait of that kind and name, oldest first, then dropped by the sweep.
 * Deleted with the job (trigger, migration `waiting_state`).
 */
export const jobSignal = sqliteTable(
  "job_signal",
  {
    jobSeq: integer("job_seq").notNull(),
    /** `signal`, or `token` (a wait token's completion). */
    kind: text("kind", { enum: ["signal", "token"] }).notNull(),
    name: text("name").notNull(),
    /** Arrival order among the job's kept signals of this kind and name. */
    n: integer("n").notNull(),
    /** JSON text of the signal's `data`. */
    data: text("data").notNull(),
    sentAt: integer("sent_at").notNull(),
    expiresAt: integer("expires_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.jobSeq, t.kind, t.name, t.n] }), index("job_signal_expires_idx").on(t.expiresAt)],
);
