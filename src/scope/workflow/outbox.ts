/**
 * The outbox (docs/design.md "The outbox"): what one scope object owes others — children to enqueue, a child's end
 * for its parent, a cancel for a child, a failure handler to enqueue — written as a row in the very transaction
 * that owes it, so a crash can lose none. After the commit the row is sent at once (`OutboxSender.kick`, not awaited
 * by the write's caller); it is deleted when its receiver has applied it. A send that fails (the receiver
 * unreachable, overloaded, the object evicted mid-call) leaves the row, and the alarm sends it again, backing off,
 * until it lands: at least once, and every receiver applies an item idempotently (an enqueue by the job's id, a
 * child's end only to the open journal entry it names, a cancel only to a live job).
 *
 * @module
 */
import { homeOfJobId } from "../../job/home";
import { withTimeout } from "../../deadlines";
import { SendRounds } from "../../send-rounds";
import type { HomeStore } from "../jobs/home-store";

/**
 * How long a row waits for the send right after its commit before the alarm sends it (the child-end trigger of
 * migration 0028 writes the same 5000).
 */
export const OUTBOX_GRACE_MS = 5_000;
/** Rows one send reads; a fuller outbox goes on in further rounds. */
const OUTBOX_PAGE = 1000;
/** A deliver call that has not answered by then is taken as failed (its rows are sent again, backing off). */
const DELIVER_TIMEOUT_MS = 30_000;
/** Bodies one deliver call carries at most (well under the RPC limit); the rest go in the next call to that object. */
const DELIVER_MAX_BYTES = 4 * 1024 * 1024;
/** A failed send is tried again after min(OUTBOX_BACKOFF_MAX_MS, 1 s · 2^tries). */
const OUTBOX_BACKOFF_MAX_MS = 300_000;

/**
 * enqueue (target: a home; body: NewJob[]), child_ended (target: the parent's id), cancel (target: the child's id),
 * event_wait / event_unwait (target: a topic's registry; event-waits.ts), event_arrived (target: the waiting job's id).
 */
export type OwedKind = "enqueue" | "child_ended" | "cancel" | "event_wait" | "event_unwait" | "event_arrived";
/** Kinds whose target names the receiving object itself, not a job in it. */
const TO_OBJECT: ReadonlySet<OwedKind> = new Set(["enqueue", "event_wait", "event_unwait"]);

/** One owed item as its receiver takes it (ScopeDO.deliver). `target`: a home for an enqueue, else a job id. */
export interface OwedItem {
  kind: OwedKind;
  target: string;
  /** JSON text. */
  body: string;
}

const OUTBOX_INSERT = "INSERT INTO outbox (kind, target, body, next_at) VALUES (?, ?, ?, ?)";
const OUTBOX_DUE = "SELECT seq, kind, target, body, tries FROM outbox WHERE next_at <= ? ORDER BY next_at LIMIT ?";
const OUTBOX_DONE = "DELETE FROM outbox WHERE seq IN (SELECT value FROM json_each(?))";
const OUTBOX_LATER = "UPDATE outbox SET tries = tries + 1, next_at = ?2 + min(?3, 1000 * (1 << min(tries, 20))) WHERE seq IN (SELECT value FROM json_each(?1))";

/** owe: an item for another object, inside the caller's transaction; `laterMs`: not sent before then (a retry's wait). */
export function owe(store: HomeStore, kind: OwedKind, target: string, body: string, now: number, laterMs = 0): void {
  store.sql.exec(OUTBOX_INSERT, kind, target, body, now + OUTBOX_GRACE_MS + laterMs);
  store.feed.owe();
}

/**
 * The object an owed item goes to: named by the target itself, or by the job id it names. `homes` keeps the homes
 * of a round's job ids by their home part: a fan-in's thousand child ends name one parent, read once.
 */
export function receiverOf(item: Pick<OwedItem, "kind" | "target">, homes?: Map<string, string | null>): string | null {
  if (TO_OBJECT.has(item.kind)) return item.target;
  const dot = item.target.indexOf(".");
  if (dot <= 0) return null;
  const part = item.target.slice(0, dot);
  const known = homes?.get(part);
  if (known !== undefined) return known;
  const home = homeOfJobId(item.target)?.name ?? null;
  homes?.set(part, home);
  return home;
}

export interface OutboxDeps {
  sql: SqlStorage;
  now(): number;
  /** Send items to one object; it answers, per item, whether it applied it (false: send again later). */
  deliver(home: string, items: OwedItem[]): Promise<boolean[]>;
  keepAlive(p: Promise<unknown>): void;
  /** Set the alarm anew: a row is left for later. */
  rearm(): Promise<void>;
}

type Row = { seq: number; kind: OwedKind; target: string; body: string; tries: number };

/** What this object owes others, sent: `kick` after a commit, `flushDue` from the alarm (send-rounds.ts). */
export class OutboxSender extends SendRounds {
  constructor(private readonly d: OutboxDeps) {
    super({ keepAlive: d.keepAlive, rearm: d.rearm, failure: "outbox:send_failed" });
  }

  /** page: the due rows, each object's in one call; a page with rows left for later ends the round. */
  protected async page(fresh: boolean): Promise<"empty" | "more" | "last"> {
    const now = this.d.now();
    const rows = this.d.sql.exec<Row>(OUTBOX_DUE, fresh ? now + OUTBOX_GRACE_MS : now, OUTBOX_PAGE).toArray();
    if (rows.length === 0) return "empty";
    const byHome = new Map<string, { rows: Row[]; bytes: number }[]>();
    const done: number[] = [];
    const later: number[] = [];
    const homes = new Map<string, string | null>();
    for (const r of rows) {
      const home = receiverOf(r, homes);
      // A target that names no object of ours can never be delivered: dropped, and said.
      if (home === null) {
        console.error(JSON.stringify({ event: "outbox:undeliverable", kind: r.kind, target: r.target }));
        done.push(r.seq);
        continue;
      }
      const calls = byHome.get(home) ?? [];
      if (calls.length === 0) byHome.set(home, calls);
      // Body length in UTF-16 units: a bound close enough for the call's size.
      const last = calls.at(-1);
      if (last && last.bytes + r.body.length <= DELIVER_MAX_BYTES) {
        last.rows.push(r);
        last.bytes += r.body.length;
      } else calls.push({ rows: [r], bytes: r.body.length });
    }
    await Promise.all(
      [...byHome].flatMap(([home, calls]) => calls.map((c) => [home, c.rows] as const)).map(async ([home, list]) => {
        try {
          // Bounded: a receiver that hangs must not hold every other send of this object, nor its alarm.
          const applied = await withTimeout(
            this.d.deliver(
              home,
              list.map((r) => ({ kind: r.kind, target: r.target, body: r.body })),
            ),
            DELIVER_TIMEOUT_MS,
          );
          list.forEach((r, i) => (applied[i] === true ? done : later).push(r.seq));
        } catch (e) {
          console.warn(JSON.stringify({ event: "outbox:deliver_failed", home, items: list.length, error: String(e) }));
          for (const r of list) later.push(r.seq);
        }
      }),
    );
    if (done.length > 0) this.d.sql.exec(OUTBOX_DONE, JSON.stringify(done));
    if (later.length > 0) this.d.sql.exec(OUTBOX_LATER, JSON.stringify(later), this.d.now(), OUTBOX_BACKOFF_MAX_MS);
    // A page with rows left for later is where this round stops: the alarm takes the rest.
    return rows.length < OUTBOX_PAGE || later.length > 0 ? "last" : "more";
  }
}
