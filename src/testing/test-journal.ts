/**
 * The in-memory journal of a test run (run-job.ts) and the queue's rules over
 * it, as the scope object keeps them in SQL (docs/workflows.md): steps
 * matched by position and name, signals and token completions kept until
 * their wait, an event wait's match compared as canonical JSON, a child's end
 * journaled as the queue journals it, a wait's timeout ending it with null.
 * It knows nothing of attempts or the job's state: each call says whether it
 * made the job due, and the run decides.
 *
 * @module
 */
import type { HandlerOutcome, JournalAnswer, JournalEntry, JournalWrite, WaitToken } from "../job/handler-contract";
import type { InvokeRequest } from "../runtime/context";
import { canonicalJson } from "../job/canonical-json";
import { childLocalId } from "../job/derived-id";
import type { RunOptions, TestChild, TestChildEnd, TestStep } from "./test-run";

type Kept = { kind: "signal" | "token"; name: string; result: string };

/** resultOf: a signal's or token's data as the queue journals it. */
export function resultOf(data: unknown): string {
  return `{"data":${JSON.stringify(data ?? null)}}`;
}

export class TestJournal {
  readonly entries = new Map<number, JournalEntry>();
  /** Signals and token completions sent before their wait (the queue's job_signal). */
  private readonly kept: Kept[] = [];
  private readonly completedTokens = new Set<string>();
  /** Each open event wait's match, by position. */
  private readonly matches = new Map<number, Record<string, unknown>>();
  private readonly emittedIds = new Set<string>();

  constructor(options: Pick<RunOptions, "signals" | "tokens">) {
    for (const sig of options.signals ?? []) this.kept.push({ kind: "signal", name: sig.name, result: resultOf(sig.data) });
    for (const t of options.tokens ?? []) {
      this.completedTokens.add(t.name);
      this.kept.push({ kind: "token", name: t.name, result: resultOf(t.data) });
    }
  }

  get steps(): TestStep[] {
    return [...this.entries.values()]
      .sort((a, b) => a.seq - b.seq)
      .map((e) => ({ ...e, result: e.result === null ? null : (JSON.parse(e.result) as unknown) }));
  }

  openWaits(): JournalEntry[] {
    return [...this.entries.values()].filter((e) => (e.kind === "signal" || e.kind === "token_wait" || e.kind === "event") && e.finishedAt === null).sort((a, b) => a.seq - b.seq);
  }

  openChildren(): JournalEntry[] {
    return [...this.entries.values()].filter((e) => e.kind === "invoke" && e.finishedAt === null);
  }

  /** completeToken: a token's completion, once per name (the queue answers 409 to a second). */
  tokenCompleted(name: string): void {
    if (this.completedTokens.has(name)) throw new Error(`completeToken: wait token ${JSON.stringify(name)} was completed already (the queue answers 409)`);
    this.completedTokens.add(name);
  }

  /** deliver: as the queue's signal (scope/workflow/waits.ts): the oldest open wait of the name ends (true), or it is kept. */
  deliver(kind: "signal" | "token", name: string, result: string, now: number, waiting: boolean): boolean {
    const waitKind = kind === "signal" ? "signal" : "token_wait";
    const open = waiting ? this.openWaits().find((e) => e.kind === waitKind && e.name === name) : undefined;
    if (!open) {
      this.kept.push({ kind, name, result });
      return false;
    }
    this.entries.set(open.seq, { ...open, result, finishedAt: now });
    return true;
  }

  /** emit: the open event waits an event ends; the same event id again ends nothing (as the queue). */
  emit(topic: string, payload: Record<string, unknown>, id: string, now: number): number {
    if (this.emittedIds.has(id)) return 0;
    this.emittedIds.add(id);
    const open = this.eventWaitsFor(topic, payload);
    for (const e of open) this.entries.set(e.seq, { ...e, result: JSON.stringify({ id, topic, payload, at: now }), finishedAt: now });
    return open.length;
  }

  /** eventWaitsFor: the open event waits an event of `topic` with `payload` ends (their match, compared as canonical JSON, as the queue does). */
  eventWaitsFor(topic: string, payload: Record<string, unknown>): JournalEntry[] {
    return [...this.entries.values()]
      .filter((e) => e.kind === "event" && e.name === topic && e.finishedAt === null)
      .filter((e) => Object.entries(this.matches.get(e.seq) ?? {}).every(([k, v]) => Object.hasOwn(payload, k) && canonicalJson(payload[k]) === canonicalJson(v)));
  }

  /** endInvoke: as the queue's endInvoke (scope/workflow/invokes.ts): the entry ends with the child's outcome; true when it did not complete. */
  endInvoke(entry: JournalEntry, child: TestChild, end: TestChildEnd, now: number): boolean {
    const done = "result" in end;
    const state = done ? "completed" : (end.state ?? "failed");
    child.state = state;
    const result = done ? end.result : null;
    const error = done ? null : (end.error ?? `the child ${state}`);
    const failureKind = done ? null : state === "failed" ? (end.failureKind ?? "retries_exhausted") : null;
    // The entry's result as the queue journals it: a completed child's result alone, else its error and failure kind.
    const ended = done ? { child: child.id, state, result: result ?? null } : { child: child.id, state, result: null, error, failureKind };
    this.entries.set(entry.seq, { ...entry, result: JSON.stringify(ended), finishedAt: now });
    return !done;
  }

  /** timeOut: the earliest timeout of the open waits, whose waits end (null) at it; the time it moved to. */
  timeOut(now: number): number {
    const open = this.openWaits();
    const until = Math.min(...open.map((e) => e.wakeAt ?? Infinity));
    if (until === Infinity) {
      const children = this.openChildren();
      if (children.length > 0) throw new Error(`resume: the job waits for its children ${children.map((e) => JSON.stringify(e.name)).join(", ")}: end them with run.endChild(step, end), or give childResults / childHandlers`);
      throw new Error(`resume: the job waits for ${open.map((e) => JSON.stringify(e.name)).join(", ")} with no timeout: send it with run.signal(name, data) or run.completeToken(token, data)`);
    }
    const at = Math.max(now, until);
    for (const e of open) if ((e.wakeAt ?? Infinity) <= at) this.entries.set(e.seq, { ...e, result: "null", finishedAt: at });
    return at;
  }

  /**
   * write: a journal write of an attempt, as the queue's journal takes it (scope/workflow/steps.ts): a position held
   * by another name, or by a sleep, is nondeterminism; a finished entry keeps its first result.
   */
  write(w: Omit<JournalWrite, "id">, jobId: string, attempt: number, now: number): JournalAnswer {
    const held = this.entries.get(w.seq);
    const kind = w.op === "token" ? "token" : w.op === "patch" ? "patch" : "step";
    if (held && (held.name !== w.name || held.kind !== kind)) {
      return { ok: false, code: "nondeterminism", message: `step ${w.seq} is ${JSON.stringify(held.name)} in the journal, ${JSON.stringify(w.name)} in the code` };
    }
    if (!held || held.finishedAt === null) {
      this.entries.set(w.seq, {
        seq: w.seq,
        name: w.name,
        kind,
        result: w.op === "commit" || w.op === "patch" ? w.result ?? "null" : w.op === "token" ? JSON.stringify(testToken(jobId, w.name, w.result, now)) : null,
        startedAt: w.startedAt,
        finishedAt: w.op === "begin" ? null : now,
        attempt,
        wakeAt: null,
      });
    }
    return w.op === "token" ? { ok: true, result: this.entries.get(w.seq)!.result! } : { ok: true };
  }

  /**
   * wait: the attempt ended on these waits (scope/workflow/waits.ts wait, in memory) — a kept signal or token ends
   * its wait at once, a child is started (`child`: its end, or null when the test ends it later). Answers whether a
   * wait ended and whether any is still open.
   */
  async wait(
    out: Extract<HandlerOutcome, { kind: "wait" }>,
    attempt: number,
    now: number,
    jobId: string,
    child: (w: { name: string; request: InvokeRequest; id: string }) => Promise<{ record: TestChild; end: TestChildEnd | null }>,
  ): Promise<{ ended: boolean; open: boolean }> {
    let ended = false;
    for (const w of out.waits) {
      const held = this.entries.get(w.seq);
      if (held && held.finishedAt !== null) {
        ended = true;
        continue;
      }
      if (w.kind === "event") {
        // As the queue: an event counts only once the wait began, so nothing kept ends it; run.emit does.
        const until = held ? held.wakeAt : w.timeoutMs === undefined || w.timeoutMs === null ? null : now + w.timeoutMs;
        const entry: JournalEntry = held ?? { seq: w.seq, name: w.name, kind: "event", result: null, startedAt: w.startedAt, finishedAt: null, attempt, wakeAt: until };
        if (!held) this.matches.set(w.seq, w.match ?? {});
        if (until !== null && until <= now) {
          this.entries.set(w.seq, { ...entry, result: "null", finishedAt: now });
          ended = true;
        } else this.entries.set(w.seq, entry);
        continue;
      }
      if (w.kind === "invoke") {
        if (held) continue;
        const entry: JournalEntry = { seq: w.seq, name: w.name, kind: "invoke", result: null, startedAt: w.startedAt, finishedAt: null, attempt, wakeAt: null };
        this.entries.set(w.seq, entry);
        const { record, end } = await child({ name: w.name, request: w.request as InvokeRequest, id: childLocalId(jobId, w.seq) });
        // As the queue: the job is due again at a child that did not complete, or once none is left open (below).
        if (end && this.endInvoke(entry, record, end, now)) ended = true;
        continue;
      }
      const until = held ? held.wakeAt : (w.until ?? (w.timeoutMs === undefined || w.timeoutMs === null ? null : now + w.timeoutMs));
      const entry: JournalEntry = held ?? { seq: w.seq, name: w.name, kind: w.kind, result: null, startedAt: w.startedAt, finishedAt: null, attempt, wakeAt: until };
      const k = this.kept.findIndex((x) => x.kind === (w.kind === "signal" ? "signal" : "token") && x.name === w.name);
      if (k >= 0) {
        this.entries.set(w.seq, { ...entry, result: this.kept[k]!.result, finishedAt: now });
        this.kept.splice(k, 1);
        ended = true;
      } else if (until !== null && until <= now) {
        this.entries.set(w.seq, { ...entry, result: "null", finishedAt: now });
        ended = true;
      } else this.entries.set(w.seq, entry);
    }
    const open = [...this.entries.values()].some((e) => e.finishedAt === null && (e.kind === "invoke" || e.kind === "signal" || e.kind === "token_wait" || e.kind === "event"));
    return { ended, open };
  }
}

/** testToken: a wait token as the queue answers one (job/wait-token.ts), unsigned: nothing here checks it. */
function testToken(jobId: string, name: string, request: string | null, now: number): WaitToken {
  const timeoutMs = (JSON.parse(request ?? "{}") as { timeoutMs?: number | null }).timeoutMs ?? null;
  const id = `test-token.${encodeURIComponent(jobId)}.${encodeURIComponent(name)}`;
  return { id, name, path: `/v1/tokens/${id}`, url: null, expiresAt: timeoutMs === null ? null : now + timeoutMs };
}
