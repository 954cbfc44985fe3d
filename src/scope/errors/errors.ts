/**
 * The errors capability (docs/design.md "The scope object: a core and its capabilities"): each attempt the core
 * ends in an error is noted for its group inside the attempt's transaction (hook `erred`; error-notes.ts, in
 * memory), and the notes are written — one row per group, however many attempts — once the oldest is ERRORS_FLUSH_MS
 * old, by the next commit or alarm pass (a failure's retry or report brings one), or before the object's groups are
 * read for `GET /v1/errors` (error-groups.ts). Its own wake, ERRORS_WAKE_MS after the oldest note, writes them when
 * nothing else comes — before an idle object is evicted (70 s at the soonest), which would lose them.
 *
 * @module
 */
import type { ErrorGroup } from "../../job/schemas/errors";
import type { AlarmPass, Capability, WakeRow } from "../jobs/capability";
import type { Changes } from "../jobs/changes";
import type { JobRow } from "../jobs/job-row";
import type { HomeStore } from "../jobs/home-store";
import type { JobHooks } from "../jobs/job-hooks";
import { errorGroups, writeNotes } from "./error-groups";
import { ErrorNotes } from "./error-notes";

/** How old the first unwritten note grows before a commit or an alarm pass writes the notes: a burst's are one row. */
export const ERRORS_FLUSH_MS = 5_000;
/** When the notes ask for an alarm of their own, if nothing else has written them by then. */
export const ERRORS_WAKE_MS = 30_000;

export class Errors implements Capability {
  readonly name = "errors";
  readonly notes = new ErrorNotes();
  readonly hooks: Partial<JobHooks> = {
    erred: (_store, row, error, now) => this.notes.add({ job: { id: row.id, type: row.type }, error, at: now }),
  };

  constructor(private readonly store: Pick<HomeStore, "sql" | "atomic">) {}

  follow(_c: Changes, _rows: readonly JobRow[], now: number): void {
    this.flushOlder(now);
  }

  nextWake(_row: WakeRow, _now: number): number | null {
    const since = this.notes.since;
    return since === null ? null : since + ERRORS_WAKE_MS;
  }

  async alarm(pass: AlarmPass): Promise<void> {
    this.flushOlder(pass.now);
  }

  private flushOlder(now: number): void {
    const since = this.notes.since;
    if (since !== null && now >= since + ERRORS_FLUSH_MS) this.flush();
  }

  /** groups: this object's error groups (of `type`, or all) as of `now`, its notes written first. */
  groups(type: string | null, now: number): ErrorGroup[] {
    this.flush();
    return errorGroups(this.store.sql, type, now);
  }

  /** flush: every note written now (inside its own transaction). */
  flush(): void {
    if (this.notes.size === 0) return;
    const notes = this.notes.take();
    if (this.notes.dropped > 0) {
      console.error(JSON.stringify({ event: "errors:notes_dropped", dropped: this.notes.dropped, kept: notes.length }));
      this.notes.dropped = 0;
    }
    try {
      this.store.atomic(() => writeNotes(this.store.sql, notes));
    } catch (e) {
      // Storage refused: they are noted again for the next try, not lost with this one.
      for (const n of notes) this.notes.add(n);
      throw e;
    }
  }
}
