/**
 * What a subscription missed while it was away (docs/http-api.md "Reconnecting"): a reconnect names the latest time
 * the queue put on its messages (`after`: a view's updatedAt, a progress report's time), and its first messages are
 * then the job's steps and log lines from REPLAY_MARGIN_MS before that time — from the journal and the kept lines,
 * where they are durable — before its current state. The margin covers a handler whose clock runs behind the
 * queue's (a line's time is the handler's); what it sends again, the clients drop (client/subscribe.ts).
 *
 * @module
 */
import { carries } from "../../job/subscription";
import type { JobRow } from "../jobs/job-row";
import type { Lens } from "../../sealing/lens";
import { jobLogs } from "../jobs/job-logs";
import { journalsOf } from "../workflow/steps";
import type { Carrying, Message } from "./watch-messages";

/** How far before the cursor a replay starts: a handler's clock (a log line's time) may run behind the queue's. */
export const REPLAY_MARGIN_MS = 60_000;

/** missedOf: the job's step and log messages from REPLAY_MARGIN_MS before `after`, oldest first, of the parts the subscription carries. */
export function missedOf(store: { sql: SqlStorage; lens: Lens }, row: JobRow, sub: Carrying, cursor: number): Message[] {
  const { sql } = store;
  const after = cursor - REPLAY_MARGIN_MS;
  const out: { at: number; m: Message }[] = [];
  if (carries(sub, "steps")) {
    for (const e of journalsOf({ sql }, [row]).get(row.seq)?.entries ?? []) {
      const at = e.finishedAt ?? e.startedAt;
      if (at < after) continue;
      out.push({ at, m: { event: "step", id: row.id, step: { seq: e.seq, name: e.name, kind: e.kind, startedAt: e.startedAt, finishedAt: e.finishedAt, attempt: e.attempt } } });
    }
  }
  if (carries(sub, "logs")) for (const line of jobLogs(store, row.id) ?? []) if (line.at >= after) out.push({ at: line.at, m: { event: "log", id: row.id, line: store.lens.openSync(line, "reader") } });
  return out.sort((a, b) => a.at - b.at).map((x) => x.m);
}
