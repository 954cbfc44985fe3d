/**
 * The errors capability (docs/design.md "The scope object: a core and its capabilities"): each attempt the core
 * ends in an error is noted for its group inside the attempt's transaction (hook `erred`; error-notes.ts, in
 * memory), and the notes are written — one row per group, however many attempts — at the object's next alarm pass
 * (a failure's write kicks the catalog report, whose deadline is one, seconds later), after a commit once the oldest
 * note is ERRORS_FLUSH_MS old, or before the object's groups are read for `GET /v1/errors` (error-groups.ts). It
 * asks for no alarm of its own: a failure costs no request.
 *
 * @module
 */
import type { ErrorGroup } from "../../job/schemas/errors";
import type { Capability } from "../jobs/capability";
import type { HomeStore } from "../jobs/home-store";
import type { JobHooks } from "../jobs/job-hooks";
import { errorGroups, writeNotes } from "./error-groups";
import { ErrorNotes } from "./error-notes";

/** How old the first unwritten note may grow before a commit writes the notes (an alarm pass writes them whatever their age). */
export const ERRORS_FLUSH_MS = 5_000;

export class Errors implements Capability {
  readonly name = "errors";
  readonly notes = new ErrorNotes();
  readonly hooks: Partial<JobHooks> = {
    erred: (_store, row, error, now) => this.notes.add({ job: { id: row.id, type: row.type }, error, at: now }),
  };

  constructor(private readonly store: Pick<HomeStore, "sql" | "atomic">) {}

  follow(_c: unknown, _rows: unknown, now: number): void {
    const since = this.notes.since;
    if (since !== null && now >= since + ERRORS_FLUSH_MS) this.flush();
  }

  async alarm(): Promise<void> {
    this.flush();
  }

  /** groups: this object's error groups (of `type`, or all) as of `now`, its notes written first. */
  groups(type: string | null, now: number): ErrorGroup[] {
    this.flush();
    return errorGroups(this.store.sql, type, now);
  }

  private flush(): void {
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
