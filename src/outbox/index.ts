/**
 * `edgequeue/outbox`: enqueue from your own Durable Object if and only if its
 * change commits (docs/producers.md "Enqueue inside your own transaction").
 *
 * `enqueue(job)` writes a row into the object's own SQLite — inside the
 * caller's transaction, so a rolled-back change leaves no row — and returns
 * at once. Right after the caller's code returns, the outbox arms the
 * object's alarm (the safety net, committed with the row) and forwards the
 * rows to the queue, deleting them once the queue has answered. Each row goes
 * with its own id as the job's idempotent `id`, so a forward repeated after a
 * crash or a lost answer finds the job it made the first time: one job per
 * committed change. The object's `alarm()` must call `outbox.alarm()` (one
 * line); an object that has alarms of its own schedules them with
 * `outbox.setAlarm(at)`, and `outbox.alarm()` answers true when one is due.
 *
 * @example
 * export class Orders extends DurableObject<Env> {
 *   outbox = createOutbox(this.ctx.storage, this.env.QUEUE);
 *   place(order: Order) {
 *     this.ctx.storage.transactionSync(() => {
 *       this.ctx.storage.sql.exec("INSERT INTO orders (id, total) VALUES (?, ?)", order.id, order.total);
 *       this.outbox.enqueue({ type: "email.receipt", payload: { order: order.id } });
 *     });
 *   }
 *   async alarm() {
 *     await this.outbox.alarm();
 *   }
 * }
 *
 * @module
 */
import { QueueClientError } from "../client/errors";
import type { EnqueueInput, QueueClient } from "../client/producer";
import { createClient, type QueueBinding, type ServiceBindingLike } from "../client/rpc-client";
import { EnqueueSchema } from "../job/schemas";
import { formatPath } from "../job/json-safe";

/** Rows forwarded per call (the batch enqueue takes up to 1,000; this keeps one call's payloads small). */
export const OUTBOX_BATCH = 100;
/** The alarm a commit arms: when nothing forwarded the rows sooner (the object died first), the alarm does. */
export const OUTBOX_SAFETY_MS = 5_000;
const RETRY_MIN_MS = 1_000;
const RETRY_MAX_MS = 5 * 60_000;

const SCHEMA = [
  `CREATE TABLE IF NOT EXISTS _edgequeue_outbox (
     seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, job TEXT NOT NULL, created_at INTEGER NOT NULL,
     attempts INTEGER NOT NULL DEFAULT 0, next_at INTEGER NOT NULL, error TEXT, dead INTEGER NOT NULL DEFAULT 0)`,
  "CREATE INDEX IF NOT EXISTS _edgequeue_outbox_due ON _edgequeue_outbox (dead, next_at)",
  "CREATE TABLE IF NOT EXISTS _edgequeue_outbox_meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL)",
];
/** A second enqueue of an id still waiting here is the same job (as the queue would answer it): nothing added. */
const INSERT = "INSERT INTO _edgequeue_outbox (id, job, created_at, next_at) VALUES (?, ?, ?, ?) ON CONFLICT (id) DO NOTHING";
const DUE = "SELECT seq, id, job, attempts FROM _edgequeue_outbox WHERE dead = 0 AND next_at <= ? ORDER BY seq LIMIT ?";
const NEXT = "SELECT min(next_at) AS at FROM _edgequeue_outbox WHERE dead = 0";
const DELETE = "DELETE FROM _edgequeue_outbox WHERE seq IN (SELECT value FROM json_each(?))";
const DEFER = "UPDATE _edgequeue_outbox SET attempts = attempts + 1, next_at = ?, error = ? WHERE seq IN (SELECT value FROM json_each(?))";
const BURY = "UPDATE _edgequeue_outbox SET attempts = attempts + 1, dead = 1, error = ? WHERE seq = ?";
const COUNT = "SELECT count(*) AS n FROM _edgequeue_outbox WHERE dead = 0";
const DEAD = "SELECT id, job, created_at, attempts, error FROM _edgequeue_outbox WHERE dead = 1 ORDER BY seq";
const DISCARD = "DELETE FROM _edgequeue_outbox WHERE id = ? AND dead = 1";
const META_GET = "SELECT value FROM _edgequeue_outbox_meta WHERE key = 'your_alarm'";
const META_SET = "INSERT INTO _edgequeue_outbox_meta (key, value) VALUES ('your_alarm', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value";
const META_CLEAR = "DELETE FROM _edgequeue_outbox_meta WHERE key = 'your_alarm'";

/** The part of a Durable Object's SqlStorage the outbox uses (structural: no Workers types needed to compile). */
export interface OutboxSql {
  exec<T extends Record<string, any>>(query: string, ...bindings: any[]): { toArray(): T[]; one(): T; readonly rowsWritten: number };
}

/** What the outbox needs of the object's storage (a Durable Object's `ctx.storage`). */
export interface OutboxStorage {
  sql: OutboxSql;
  setAlarm(at: number): Promise<void>;
  deleteAlarm(): Promise<void>;
}

/** A row the queue refused for good (invalid, too large, a key conflict): kept, not retried, until discarded. */
export interface DeadRow {
  id: string;
  job: EnqueueInput;
  createdAt: number;
  attempts: number;
  error: string;
}

export interface OutboxOptions {
  /** The clock (tests). */
  now?: () => number;
  /** Where problems are reported (default: a JSON line on the console). */
  log?: (line: Record<string, unknown>) => void;
}

export interface Outbox {
  /**
   * enqueue: write the job into this object's SQLite, in the caller's transaction; returns the `id` it will
   * be enqueued with (the job's own `id` if it has one, a new UUID otherwise). Throws, naming the field, on a
   * job the queue would refuse for its shape — so the caller's transaction rolls back. Call it inside
   * `transactionSync` (or plain synchronous code): the forward starts once the caller's code yields, which in
   * an async `transaction()` would be before its commit.
   */
  enqueue(job: EnqueueInput): { id: string };
  /** flush: forward the rows that are due now; resolves once the queue answered (also run after each commit). */
  flush(): Promise<{ forwarded: number; left: number }>;
  /** alarm: call from the object's `alarm()`. Forwards what is left; true when an alarm set with `setAlarm` is due. */
  alarm(): Promise<boolean>;
  /** setAlarm: the object's own alarm, for an object that has one besides the outbox's (storage.setAlarm would replace the outbox's). */
  setAlarm(at: number | null): void;
  /** pending: rows not yet forwarded (not counting dead ones). */
  pending(): number;
  dead(): DeadRow[];
  /** discard: drop a dead row (after you enqueued a fixed job yourself, or decided against it). */
  discard(id: string): boolean;
}

export function createOutbox(storage: OutboxStorage, queue: QueueClient | QueueBinding | ServiceBindingLike, options: OutboxOptions = {}): Outbox {
  const sql = storage.sql;
  for (const statement of SCHEMA) sql.exec(statement);
  // A service binding answers to any method name (an RPC stub), so it is told apart by its fetch, which clients lack.
  const client: QueueClient = typeof (queue as ServiceBindingLike).fetch === "function" ? createClient(queue as QueueBinding) : (queue as QueueClient);
  const now = options.now ?? Date.now;
  const log = options.log ?? ((line) => console.error(JSON.stringify(line)));
  let scheduled = false;
  let flushing: Promise<{ forwarded: number; left: number }> | null = null;

  const yourAlarm = (): number | null => sql.exec<{ value: number }>(META_GET).toArray()[0]?.value ?? null;
  const nextRow = (): number | null => sql.exec<{ at: number | null }>(NEXT).one().at;

  /** arm: the alarm at the earlier of the next row's retry and the object's own alarm; none when neither. */
  function arm(rowAt: number | null): void {
    const yours = yourAlarm();
    const at = rowAt === null ? yours : yours === null ? rowAt : Math.min(rowAt, yours);
    void (at === null ? storage.deleteAlarm() : storage.setAlarm(at));
  }

  /**
   * afterCommit: runs once the caller's synchronous code has returned — its transaction committed or rolled
   * back. Rows left mean a commit: arm the safety alarm (written with the commit: no await came between)
   * and forward now. A rolled-back enqueue left no row, and nothing happens.
   */
  function afterCommit(): void {
    scheduled = false;
    if (sql.exec<{ n: number }>(COUNT).one().n === 0) return;
    arm(now() + OUTBOX_SAFETY_MS);
    void flush().catch((e: unknown) => log({ event: "outbox:flush_failed", error: String(e) }));
  }

  async function forward(rows: { seq: number; id: string; job: string; attempts: number }[]): Promise<number> {
    try {
      await client.enqueueMany(rows.map((r) => JSON.parse(r.job) as EnqueueInput));
      sql.exec(DELETE, JSON.stringify(rows.map((r) => r.seq)));
      return rows.length;
    } catch (e) {
      if (permanent(e) && rows.length > 1) {
        // One row spoils the batch (all or none): send them one by one, so only that row is kept back.
        let n = 0;
        for (const r of rows) n += await forward([r]);
        return n;
      }
      const error = e instanceof Error ? e.message : String(e);
      if (permanent(e)) {
        sql.exec(BURY, error, rows[0]!.seq);
        log({ event: "outbox:dead", id: rows[0]!.id, error });
      } else {
        const attempts = Math.min(...rows.map((r) => r.attempts)) + 1;
        const wait = Math.min(RETRY_MAX_MS, RETRY_MIN_MS * 2 ** (attempts - 1));
        sql.exec(DEFER, now() + wait, error, JSON.stringify(rows.map((r) => r.seq)));
        log({ event: "outbox:forward_failed", rows: rows.length, retryInMs: wait, error });
      }
      return 0;
    }
  }

  function flush(): Promise<{ forwarded: number; left: number }> {
    flushing ??= (async () => {
      let forwarded = 0;
      try {
        for (;;) {
          const rows = sql.exec<{ seq: number; id: string; job: string; attempts: number }>(DUE, now(), OUTBOX_BATCH).toArray();
          if (rows.length === 0) break;
          const n = await forward(rows);
          forwarded += n;
          if (n < rows.length) break; // the rest waits for its retry time
        }
      } finally {
        flushing = null;
        arm(nextRow());
      }
      return { forwarded, left: sql.exec<{ n: number }>(COUNT).one().n };
    })();
    return flushing;
  }

  return {
    enqueue(job) {
      const parsed = EnqueueSchema.safeParse(job);
      if (!parsed.success) {
        const details = parsed.error.issues.map((i) => ({ path: formatPath(i.path as (string | number)[]), message: i.message }));
        throw new QueueClientError("invalid_request", details.map((d) => `${d.path || "job"}: ${d.message}`).join("; "), details);
      }
      const id = job.id ?? crypto.randomUUID();
      sql.exec(INSERT, id, JSON.stringify({ ...job, id }), now(), 0);
      if (!scheduled) {
        scheduled = true;
        queueMicrotask(afterCommit);
      }
      return { id };
    },
    flush,
    async alarm() {
      await flush();
      const yours = yourAlarm();
      if (yours === null || yours > now()) return false;
      sql.exec(META_CLEAR);
      arm(nextRow());
      return true;
    },
    setAlarm(at) {
      if (at === null) sql.exec(META_CLEAR);
      else sql.exec(META_SET, at);
      arm(nextRow());
    },
    pending: () => sql.exec<{ n: number }>(COUNT).one().n,
    dead: () =>
      sql
        .exec<{ id: string; job: string; created_at: number; attempts: number; error: string }>(DEAD)
        .toArray()
        .map((r) => ({ id: r.id, job: JSON.parse(r.job) as EnqueueInput, createdAt: r.created_at, attempts: r.attempts, error: r.error })),
    discard: (id) => sql.exec(DISCARD, id).rowsWritten > 0,
  };
}

/** A refusal that sending again cannot change: the row is kept aside instead of retried forever. */
function permanent(e: unknown): boolean {
  return e instanceof QueueClientError && (e.code === "invalid_request" || e.code === "payload_too_large" || e.code === "conflict");
}

export { QueueClientError };
